// Compiled by two tests and linked into nothing (CMakeLists.txt): as it is, it
// must compile; with -DSYNCPOINT_COMPILE_FAIL, the one send outside the
// control interface must not ("receiver does not accept given message"): an
// actor of a program's own cannot send a job what its interface leaves out.
#include <syncpoint/interfaces.hpp>

#include <string>

syncpoint::job_observer_actor::behavior_type meddler(syncpoint::job_observer_actor::pointer self) {
  return {
    [=](syncpoint::start_atom, const syncpoint::job_control_actor& control) {
      self->send(control, syncpoint::mark_atom::value, std::string("fine"), 1.0);
      self->send(control, syncpoint::eval_atom::value);
      self->send(control, syncpoint::stop_atom::value, std::string("fine too"));
#ifdef SYNCPOINT_COMPILE_FAIL
      self->send(control, syncpoint::commit_atom::value);  // the PS's business, not an observer's
#endif
    },
    [](syncpoint::eval_atom, const syncpoint::eval_result&) {},
    [](syncpoint::progress_atom, const syncpoint::progress_report&) {},
    [](syncpoint::phase_atom, const syncpoint::phase_change&) {},
    [](syncpoint::done_atom, const std::string&) {},
  };
}
