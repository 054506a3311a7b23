#include "runtime/tracer.hpp"

#include <algorithm>

namespace syncpoint {

namespace {

struct tracer_state {
  std::vector<trace_event> events;
  static inline const char* name = "tracer";
};

tracer_actor::behavior_type tracer(tracer_actor::stateful_pointer<tracer_state> self,
                                   std::vector<trace_event> so_far) {
  self->state.events = std::move(so_far);
  return {
    [=](trace_atom, trace_event& ev) { self->state.events.push_back(std::move(ev)); },
    [=](collect_atom) {
      auto out = std::move(self->state.events);
      self->state.events.clear();
      std::stable_sort(out.begin(), out.end(),
                       [](const trace_event& a, const trace_event& b) { return a.t0 < b.t0; });
      return out;
    },
    [=](save_atom) { return self->state.events; },
  };
}

}  // namespace

tracer_actor spawn_tracer(caf::actor_system& sys, std::vector<trace_event> so_far) {
  return sys.spawn(tracer, std::move(so_far));
}

}  // namespace syncpoint
