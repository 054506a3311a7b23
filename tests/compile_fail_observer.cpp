// Compiled by two tests and linked into nothing (CMakeLists.txt): as it is, it
// must compile; with -DSYNCPOINT_COMPILE_FAIL, the one send outside the
// control interface must not ("receiver does not accept given message"): an
// actor of a program's own cannot send a job what its interface leaves out.
#include <syncpoint/interfaces.hpp>

#include <string>

syncpoint::job_observer_actor::behavior_type meddler(syncpoint::job_observer_actor::pointer self) {
  return {
    [=](const syncpoint::job_started& started) {
      self->send(started.control, syncpoint::mark_request{"fine", 1.0});
      self->send(started.control, syncpoint::eval_request{});
      self->send(started.control, syncpoint::stop_request{"fine too"});
#ifdef SYNCPOINT_COMPILE_FAIL
      self->send(started.control, syncpoint::phase_change{});  // what a job tells, not what it takes
#endif
    },
    [](const syncpoint::eval_result&) {},
    [](const syncpoint::progress_report&) {},
    [](const syncpoint::phase_change&) {},
    [](const syncpoint::run_ended&) {},
  };
}
