// The evaluator: measures the test accuracy of model snapshots on its own
// model instance, so training never waits for it.
//   snapshot -> (eval_atom, eval_result) to the coordinator given at spawn
#pragma once

#include "models/model.hpp"
#include "runtime/messages.hpp"

#include <memory>

namespace syncpoint {

struct evaluator_config {
  std::shared_ptr<const dataset> test;  // read-only, shared by nobody else
  std::string model;
  int64_t limit = 0;                    // first N test examples (0: all)
  caf::actor coordinator;
};

caf::actor spawn_evaluator(caf::actor_system& sys, evaluator_config cfg);

}  // namespace syncpoint
