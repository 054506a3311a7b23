// Who may ask the parameter server what (actors/ps_admission.hpp).
#include "actors/ps_admission.hpp"

#include "core/secret.hpp"

#include <cstdio>
#include <string>

namespace syncpoint {

caf::actor_addr sender(ps_ptr self) {
  return caf::actor_cast<caf::actor_addr>(self->current_sender());
}

// The sender's worker id, or -1 if it is not one of the job's members.
worker_id member_index(ps_ptr self) {
  auto& ids = self->state.member_ids;
  auto i = ids.find(sender(self));
  return i == ids.end() ? -1 : i->second;
}

// Pushes and pulls come from the job's workers only (once it has members):
// a push must also come from the worker whose id it carries.
caf::error check_member(ps_ptr self, worker_id claimed) {
  auto& st = self->state;
  if (st.members.empty())
    return caf::none;
  auto from = sender(self);
  bool ok = claimed >= 0 ? static_cast<size_t>(claimed) < st.members.size()
                             && st.members[static_cast<size_t>(claimed)] == from
                         : st.member_ids.count(from) > 0;
  if (ok)
    return caf::none;
  return make_error(sp_error::not_a_member,
                    "the parameter server refused a request from " + to_string(from) +
                      ", which is not " +
                      (claimed >= 0 ? "worker " + std::to_string(claimed) : std::string("a worker")) +
                      " of this job");
}

// A push or pull on the bulk channel speaks for the worker whose key it
// carries; the gateway that hands it over is of this process.
caf::error check_bulk_key(ps_ptr self, uint64_t key, worker_id claimed) {
  auto& keys = self->state.cfg.bulk_keys;
  auto from = sender(self);
  bool ok = from && from.node() == self->node() && claimed >= 0 && static_cast<size_t>(claimed) < keys.size() &&
            keys[static_cast<size_t>(claimed)] != 0 && same_key(key, keys[static_cast<size_t>(claimed)]);
  if (ok)
    return caf::none;
  return make_error(sp_error::not_a_member, "the parameter server refused a bulk-channel request for worker " +
                                              std::to_string(claimed) + ": not that worker's key");
}

// Control messages come from the job's coordinator only (once attached);
// anything else is refused and logged, and changes nothing.
bool from_coordinator(ps_ptr self, const char* what) {
  auto& st = self->state;
  if (!st.coordinator || sender(self) == caf::actor_cast<caf::actor_addr>(st.coordinator))
    return true;
  std::fprintf(stderr, "parameter server: refused '%s' from %s, which is not the job's coordinator\n",
               what, to_string(sender(self)).c_str());
  return false;
}

// The PS's whole state (the model, the velocity, a round's gradients) goes to
// the job's coordinator, or to an actor of the PS's own process (the driver of
// a virtual-clock run), never to a peer that merely holds the PS's handle.
caf::error may_read_state(ps_ptr self) {
  auto from = sender(self);
  if (from && (from.node() == self->node() || from == caf::actor_cast<caf::actor_addr>(self->state.coordinator)))
    return caf::none;
  std::fprintf(stderr, "parameter server: refused 'save' from %s, which is not the job's coordinator\n",
               to_string(from).c_str());
  return make_error(sp_error::not_a_member, "only the job's coordinator reads the parameter server's state");
}

}  // namespace syncpoint
