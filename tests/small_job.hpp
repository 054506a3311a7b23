// The job most integration tests start from: 4 workers, Eigen softmax on
// 4000 synthetic examples, 2 epochs, 10 ms per iteration on the virtual clock.
#pragma once

#include "runtime/job.hpp"

namespace syncpoint::testing {

inline job_config small_job(const std::string& protocol) {
  job_config cfg;
  cfg.protocol = protocol;
  cfg.workers = 4;
  cfg.model = "softmax";
  cfg.dataset = "synthetic";
  cfg.train_limit = 4000;
  cfg.test_limit = 500;
  cfg.epochs = 2;
  cfg.iter_cost_ms = 10;
  cfg.lr = 0.1;
  cfg.progress = false;
  return cfg;
}

}  // namespace syncpoint::testing
