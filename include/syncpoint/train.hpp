/// \file
/// The library's front door: run one training job and get its summary.
///
/// ```cpp
/// syncpoint::job_config cfg;
/// cfg.protocol = "ssp"; cfg.protocol_opts.set("staleness", 2);
/// cfg.workers = 4; cfg.model = "mlp"; cfg.epochs = 1;
/// cfg.straggler = "3:x4"; cfg.out_dir = "runs/ssp";
/// syncpoint::run_result r = syncpoint::train(cfg);
/// std::cout << r.summary.final_accuracy << "\n";
/// ```
#pragma once

#include <syncpoint/job_config.hpp>
#include <syncpoint/summary.hpp>

#include <functional>

namespace syncpoint {

namespace detail {
// What the run cost the framework, for `syncpoint simulate` (not in the summary:
// it is no part of a reproducible run). The library's, not for programs.
struct run_profile {
  double coordinator_busy_s = 0;  // wall time the coordinator spent deciding
  uint64_t coordinator_pushes = 0;  // pushes it handled
  double clock_busy_s = 0;  // virtual clock: wall time spent putting its timers in order and firing them
};
}  // namespace detail

/// A finished run: its summary, trace and final model.
struct run_result {
  run_summary summary;  ///< what summary.json holds
  std::vector<trace_event> trace;  ///< what trace.jsonl holds
  std::vector<std::string> failures;  ///< one line per lost worker, with the reason
  weights final_model;                ///< the PS's model at the end
  detail::run_profile profile;        ///< (the library's: what the run cost the framework)
};

/// Runs the job to completion on the configured clock. Writes trace.jsonl and
/// summary.json to cfg.out_dir when it is set. Throws config_error.
/// With `on_progress`, reports go there instead of stderr (when cfg.progress).
run_result train(const job_config& cfg, progress_fn on_progress = {});

/// Checks `cfg` without running it; throws config_error.
void validate(const job_config& cfg);

/// Sets the job options cfg.protocol runs with unless told otherwise
/// (protocol_job_defaults: DiLoCo's outer Nesterov at rate 0.7, say), each
/// one `given` does not name (by its command-line name, e.g. "lr"); what
/// `syncpoint train` does with the options its command line leaves unset.
///
/// ```cpp
/// cfg.protocol = "diloco";
/// syncpoint::apply_job_defaults(cfg, [](const std::string& name) { return name == "lr"; });  // keeps cfg.lr
/// ```
void apply_job_defaults(job_config& cfg, const std::function<bool(const std::string& name)>& given = {});

}  // namespace syncpoint
