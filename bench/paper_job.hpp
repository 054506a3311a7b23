// The job the protocol benchmarks share: 8 workers, MLP on Fashion-MNIST,
// 2 epochs, 10 ms per iteration on the virtual clock, quiet.
#pragma once

#include <syncpoint/job_config.hpp>

namespace syncpoint::bench {

inline job_config paper_job() {
  job_config cfg;
  cfg.workers = 8;
  cfg.model = "mlp";
  cfg.epochs = 2;
  cfg.iter_cost_ms = 10;
  cfg.progress = false;
  return cfg;
}

}  // namespace syncpoint::bench
