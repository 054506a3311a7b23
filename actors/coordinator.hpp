// The coordinator: hosts a protocol and everything protocol-independent —
// worker liveness, clocks, the sample budget, time limit, target accuracy,
// evaluation cadence, barriers — and ends the run.
//
// Messages:
//   (start_atom, std::vector<actor> workers, actor evaluator)  begins the run
//   (pushed_atom, push_info) -> proceed       delegated by the PS
//   (eval_atom, eval_result)                  from the evaluator
// When the run ends it sends (done_atom, std::vector<trace_event>,
// std::vector<std::string> failures) to `driver`
// and shuts down the PS, evaluator and tracer.
#pragma once

#include "protocols/protocol.hpp"
#include "runtime/clock.hpp"

#include <memory>

namespace syncpoint {

struct coordinator_config {
  std::string protocol_name;
  std::unique_ptr<protocol> proto;  // moved into the actor
  int workers = 1;
  int batch = 64;
  uint64_t sample_budget = 0;       // 0: none
  double max_time_s = 0;            // 0: none
  double target_accuracy = 0;       // 0: none
  bool stop_at_target = false;
  uint64_t eval_every_samples = 0;  // 0: only the final evaluation
  uint64_t total_samples_hint = 0;  // for progress (budget or epoch size)
  bool progress = false;
  caf::actor ps;
  caf::actor tracer;
  caf::actor driver;
  time_point origin;
  caf::duration request_timeout = caf::infinite;
};

caf::actor spawn_coordinator(caf::actor_system& sys, std::shared_ptr<coordinator_config> cfg);

}  // namespace syncpoint
