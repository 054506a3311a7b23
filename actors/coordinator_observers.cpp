// The coordinator's side of those who follow the run: observers
// (job_observer_actor), a program's own actors that hear its evaluations,
// progress, phases and end, and may stop it, ask for an evaluation or mark the
// trace; and a dashboard that asks for its counts.
#include "actors/coordinator_state.hpp"

#include <algorithm>

namespace syncpoint {

void greet_observers(coordinator_ptr self) {
  auto& st = self->state;
  st.observers = st.cfg->observers;
  for (auto& o : st.observers) {
    self->monitor(o);
    self->send(o, job_started{job_control_actor{self}});
  }
}

job_counts counts_of(coordinator_ptr self) {
  auto& st = self->state;
  return {st.run.samples, st.ps.version(), st.workers.samples(), st.workers.live_count(), since(self, st.cfg->origin),
          st.rejected};
}

bool from_driver_or_observer(coordinator_ptr self) {
  auto from = caf::actor_cast<caf::actor_addr>(self->current_sender());
  auto& obs = self->state.observers;
  return from && (from == self->state.cfg->driver.address()
                  || std::any_of(obs.begin(), obs.end(), [&](const job_observer_actor& a) { return a.address() == from; }));
}

bool observer_down(coordinator_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  auto o = std::find_if(st.observers.begin(), st.observers.end(),
                        [&](const job_observer_actor& a) { return a.address() == dm.source; });
  if (o == st.observers.end())
    return false;
  auto which = static_cast<size_t>(o - st.observers.begin());
  st.observers.erase(o);
  if (is_failure(dm.reason) && !st.phase.is(coordinator_phase::finishing))
    fail_run(self, observer_failed(self->system(), which, dm.reason));
  return true;
}

void observer_asks_eval(coordinator_ptr self) {
  // Not while a checkpoint is cut (no evaluation may be in flight then), and
  // once per sample count: an observer that asks at every evaluation it hears
  // of would otherwise loop at one virtual instant forever.
  auto& st = self->state;
  if (from_driver_or_observer(self) && st.phase.is(coordinator_phase::running)
      && st.run.samples != st.run.observer_eval_at) {
    st.run.observer_eval_at = st.run.samples;
    st.request_snapshot(false);
  }
}

void observer_marks(coordinator_ptr self, const std::string& note, double value) {
  if (from_driver_or_observer(self))
    self->state.mark("mark", note, value);
}

}  // namespace syncpoint
