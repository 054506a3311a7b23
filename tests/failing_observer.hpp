// An observer that fails as an actor should, at the first evaluation it hears:
// it quits with an error that says why ("the sink's disk is full"). The
// one-process and the cluster observer tests both end a job with it.
#pragma once

#include <syncpoint/interfaces.hpp>

#include <string>

namespace syncpoint::testing {

inline job_observer_actor::behavior_type failing(job_observer_actor::pointer self) {
  return {
    [](start_atom, const job_control_actor&) {},
    [=](eval_atom, const eval_result&) {
      self->quit(caf::make_error(caf::sec::runtime_error, std::string("the sink's disk is full")));
    },
    [](progress_atom, const progress_report&) {},
    [](phase_atom, const phase_change&) {},
    [](done_atom, const std::string&) {},
  };
}

}  // namespace syncpoint::testing
