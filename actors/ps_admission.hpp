// Who may ask the parameter server what: pushes and pulls come from the
// job's members (a bulk-channel request with its worker's key), control
// messages from its coordinator, and its whole state goes to the coordinator
// or to an actor of its own process. Each check names whom it refused.
//
//   if (auto err = check_member(self, g.worker))
//     return err;                                  // not that worker: refused
#pragma once

#include "actors/ps_state.hpp"

#include <caf/error.hpp>

#include <cstdint>

namespace syncpoint {

/// The address of the message being handled.
caf::actor_addr sender(ps_ptr self);

/// The sender's worker id, or -1 if it is not one of the job's members.
worker_id member_index(ps_ptr self);

/// none if the sender is worker `claimed` (-1: any member), or the job has no members yet.
caf::error check_member(ps_ptr self, worker_id claimed);

/// none if a bulk-channel request for worker `claimed` carries its key and comes from this process.
caf::error check_bulk_key(ps_ptr self, uint64_t key, worker_id claimed);

/// Whether the sender is the job's coordinator (or none is attached); logs a refusal of `what`.
bool from_coordinator(ps_ptr self, const char* what);

/// none if the sender may read the PS's whole state: the coordinator, or an actor of this process.
caf::error may_read_state(ps_ptr self);

}  // namespace syncpoint
