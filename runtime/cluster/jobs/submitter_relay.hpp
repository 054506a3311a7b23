// A job's runner on the head reports to this relay, not to the submitter's
// client. It hands the outcome over with a receipt: it ends when the client
// does, on reading it, so a head that shuts down (it waits for its relays)
// cannot end its process with the outcome unsent. On a head with a journal
// (head --state) the relay lives as long as the job; the submitter's
// connection need not. A job the head restored after coming back starts with
// no submitter; the one that reattaches (reattach_atom to the head) hears the
// lines it missed (the newest 256), then the job's lines as they come, and its
// outcome (at once, when the job ended before it came). A submitter that goes
// away stops the job: the relay ends with it, and the runner sees its client go.
//
//   auto relay = spawn_submitter_relay(sys, {id, client, head_actor{self}, token});
//   setup.client = relay;  // the job runner reports here
#pragma once

#include "runtime/cluster/wire/interfaces.hpp"

namespace syncpoint::cluster {

/// A client; (reattach, client): a reattached submitter's client; (leave):
/// the head is shutting down, so the relay ends once the outcome is handed
/// over (at once when no submitter listens: none would hear it). Handed over
/// means read: the relay ends when the submitter's client does, on reading it,
/// or (timeout) 10 s after it was sent.
using submitter_relay_actor = client_actor::extend<caf::reacts_to<reattach_atom, client_actor>,
                                                   caf::reacts_to<leave_atom>, caf::reacts_to<timeout_atom>>;

struct relay_setup {
  uint64_t id = 0;
  client_actor submitter;  // invalid: none yet (a restored job)
  head_actor head;         // told the outcome, for its journal
  std::string head_token;  // the head's control secret
};

submitter_relay_actor spawn_submitter_relay(caf::actor_system& sys, relay_setup setup);

}  // namespace syncpoint::cluster
