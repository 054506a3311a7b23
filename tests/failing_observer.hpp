// An observer that fails as an actor should, at the first evaluation it hears:
// it quits with an error that says why ("the sink's disk is full"). The
// one-process and the cluster observer tests both end a job with it.
#pragma once

#include <syncpoint/interfaces.hpp>

#include <string>

namespace syncpoint::testing {

inline job_observer_actor::behavior_type failing(job_observer_actor::pointer self) {
  return {
    [](const job_started&) {},
    [=](const eval_result&) {
      self->quit(caf::make_error(caf::sec::runtime_error, std::string("the sink's disk is full")));
    },
    [](const progress_report&) {},
    [](const phase_change&) {},
    [](const run_ended&) {},
  };
}

}  // namespace syncpoint::testing
