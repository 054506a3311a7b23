// An actor of your own in a job: it ends the run when accuracy has not improved
// for `patience` evaluations in a row (by more than `min_delta`). Used by
// examples/early_stopping.cpp and tests/test_user_actors.cpp.
//
//   auto stopper = sys.spawn(early_stopping, 3, 0.0);
//   auto j = syncpoint::job::spawn(sys, cfg, {{stopper}});
#pragma once

#include <syncpoint/interfaces.hpp>

#include <string>

struct early_stopping_state {
  syncpoint::job_control_actor control;  // given at the start
  double best = -1;
  int since_best = 0;                    // evaluations without an improvement
  bool stopped = false;
  std::string ended;                     // why the run ended, when it has
};

inline syncpoint::job_observer_actor::behavior_type
early_stopping(syncpoint::job_observer_actor::stateful_pointer<early_stopping_state> self, int patience,
               double min_delta) {
  return {
    [=](const syncpoint::job_started& s) { self->state.control = s.control; },
    [=](const syncpoint::eval_result& e) {
      auto& st = self->state;
      if (e.final || st.stopped)
        return;
      if (e.accuracy > st.best + min_delta) {
        st.best = e.accuracy;
        st.since_best = 0;
        return;
      }
      if (++st.since_best >= patience) {
        st.stopped = true;
        self->send(st.control, syncpoint::stop_request{"early stop: no improvement in " + std::to_string(patience) +
                                                       " evaluations"});
      }
    },
    [](const syncpoint::progress_report&) {},
    [](const syncpoint::phase_change&) {},
    [=](const syncpoint::run_ended& e) { self->state.ended = e.why; },
  };
}
