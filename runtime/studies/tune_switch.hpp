// The offline Sync-Switch policy (PROTOCOLS.md): binary-search the share f of
// BSP at the start of training. A run with f is accepted when its final
// accuracy is at least pure BSP's minus the tolerance; the search looks for
// the smallest accepted f within a budget of runs, on the grid j / 2^budget,
// j = 1 .. 2^budget (f = 0 would be pure ASP: no schedule to tune).
//
//   auto r = tune_switch(cfg, 0.005, 5, progress_line);
//   save_switch_policy("job.policy.json", r.policy);
#pragma once

#include "protocols/switch_policy.hpp"
#include <syncpoint/job_config.hpp>

#include <functional>
#include <string>
#include <vector>

namespace syncpoint {

struct tune_row {
  double share = 0;         // of BSP; 1 is the reference run
  double accuracy = 0;
  double time_s = 0;
  bool accepted = false;
};

struct tune_result {
  std::vector<tune_row> runs;  // the reference first, then the search in order
  switch_policy policy;
};

/// The schedule for a BSP share f: "bsp:f,asp:1-f" ("bsp:1" or "asp:1" at the ends).
std::string switch_schedule(double bsp_share);

/// Runs `run(f)` for the reference (f = 1) and then `budget` shares by binary
/// search. `run` returns (final accuracy, run time).
tune_result tune_switch(double tolerance, int budget,
                        const std::function<std::pair<double, double>(double share)>& run,
                        const std::function<void(const tune_row&)>& on_row = {});

/// The same on a job: each run is `cfg` under sync-switch with the share's schedule.
/// With `on_progress`, each run reports its progress there.
tune_result tune_switch(const job_config& cfg, double tolerance, int budget,
                        const std::function<void(const tune_row&)>& on_row = {},
                        const progress_fn& on_progress = {});

}  // namespace syncpoint
