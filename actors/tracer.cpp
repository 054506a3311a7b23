#include "actors/tracer.hpp"

#include <algorithm>

namespace syncpoint {

namespace {

struct tracer_state {
  std::vector<trace_event> events;
  static inline const char* name = "tracer";
};

using tracer_ptr = tracer_actor::stateful_pointer<tracer_state>;

// Every actor of the job adds events, workers on other nodes too; reading the
// trace (and taking it, at the end) is for the actors of the tracer's own
// process: the coordinator and the driver. A peer holding the tracer's handle
// (every worker of a cluster job) cannot empty it.
caf::error may_read(tracer_ptr self) {
  auto from = self->current_sender();
  if (from && from->node() == self->node())
    return caf::none;
  return make_error(sp_error::not_a_member, "only the job's own process reads the trace");
}

tracer_actor::behavior_type tracer(tracer_ptr self, std::vector<trace_event> so_far, size_t expected) {
  self->state.events = std::move(so_far);
  self->state.events.reserve(expected);
  return {
    [=](trace_atom, trace_event& ev) { self->state.events.push_back(std::move(ev)); },
    [=](trace_atom, std::vector<trace_event>& evs) {
      auto& events = self->state.events;
      events.insert(events.end(), std::make_move_iterator(evs.begin()), std::make_move_iterator(evs.end()));
    },
    [=](collect_atom) -> caf::result<std::vector<trace_event>> {
      if (auto err = may_read(self))
        return err;
      auto out = std::move(self->state.events);
      self->state.events.clear();
      std::stable_sort(out.begin(), out.end(),
                       [](const trace_event& a, const trace_event& b) { return a.t0 < b.t0; });
      return caf::result<std::vector<trace_event>>{std::move(out)};  // (a plain `return out` copies it)
    },
    [=](save_atom) -> caf::result<std::vector<trace_event>> {
      if (auto err = may_read(self))
        return err;
      return self->state.events;
    },
    [=](collect_atom, uint64_t from) -> caf::result<uint64_t, std::vector<trace_event>> {
      if (auto err = may_read(self))
        return err;
      auto& evs = self->state.events;  // after the final collect: empty, and nothing new
      auto first = std::min<uint64_t>(from, evs.size());
      return {static_cast<uint64_t>(evs.size()),
              std::vector<trace_event>(evs.begin() + static_cast<std::ptrdiff_t>(first), evs.end())};
    },
  };
}

}  // namespace

tracer_actor spawn_tracer(caf::actor_system& sys, std::vector<trace_event> so_far, size_t expected) {
  return sys.spawn(tracer, std::move(so_far), expected);
}

}  // namespace syncpoint
