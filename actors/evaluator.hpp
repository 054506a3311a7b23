// The evaluator: measures the test accuracy of model snapshots on its own
// model instance, so training never waits for it.
//   snapshot -> (eval_atom, eval_result) to the coordinator given at spawn
// (interface: evaluator_actor in core/interfaces.hpp)
#pragma once

#include <syncpoint/model.hpp>
#include <syncpoint/worker_loop.hpp>
#include "core/interfaces.hpp"

#include <memory>

namespace syncpoint {

struct evaluator_config {
  std::shared_ptr<const dataset> test;  // read-only, shared by nobody else
  std::string model;
  std::string loop = "classify";        // whose evaluate function measures a snapshot
  model_input input;                    // what the model is made for, and its device
  int64_t limit = 0;                    // first N test examples (0: all)
  loop_context job;                     // what the loop's evaluation may need: the job's seed, workers, batch
  coordinator_actor coordinator;
  /// Real clock: run on a thread of its own, so evaluating never occupies a
  /// scheduler thread that a worker could use. (Never on the virtual clock,
  /// whose determinism needs every actor on the test scheduler.)
  bool detached = false;
};

evaluator_actor spawn_evaluator(caf::actor_system& sys, evaluator_config cfg);

}  // namespace syncpoint
