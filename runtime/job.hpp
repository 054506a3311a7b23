// The library's front door: run one training job and get its summary.
//
//   syncpoint::job_config cfg;
//   cfg.protocol = "ssp"; cfg.protocol_opts.staleness = 2;
//   cfg.workers = 4; cfg.model = "mlp"; cfg.epochs = 1;
//   cfg.straggler = "3:x4"; cfg.out_dir = "runs/ssp";
//   syncpoint::run_result r = syncpoint::train(cfg);
//   std::cout << r.summary.final_accuracy << "\n";
#pragma once

#include "runtime/job_config.hpp"
#include "runtime/summary.hpp"

#include <stdexcept>

namespace syncpoint {

/// Bad configuration or input (unknown protocol, malformed straggler spec,
/// missing data file, ...). The message says what is wrong.
struct config_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct run_result {
  run_summary summary;
  std::vector<trace_event> trace;
  std::vector<std::string> failures;  // one line per lost worker, with the reason
};

/// Runs the job to completion on the configured clock. Writes trace.jsonl and
/// summary.json to cfg.out_dir when it is set. Throws config_error.
run_result train(const job_config& cfg);

/// Checks `cfg` without running it; throws config_error.
void validate(const job_config& cfg);

/// Writes `r` as DIR/trace.jsonl and DIR/summary.json (creating DIR).
void write_run(const std::string& dir, const run_result& r);

}  // namespace syncpoint
