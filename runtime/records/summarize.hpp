// A run's summary from its trace: what summary.json holds, made once at the
// end of a run (the library's; a program reads run_result::summary).
//
//   auto s = syncpoint::summarize(cfg, iter_cost_ms, outcome.trace, outcome.losses);
#pragma once

#include <syncpoint/job_config.hpp>
#include <syncpoint/summary.hpp>

#include <vector>

namespace syncpoint {

/// The summary of a run of `cfg` from its trace (and the workers it lost).
run_summary summarize(const job_config& cfg, double iter_cost_ms, const std::vector<trace_event>& trace,
                      const std::vector<worker_loss>& losses = {});

}  // namespace syncpoint
