#include "runtime/studies/tune_switch.hpp"

#include <syncpoint/train.hpp>

#include <cmath>
#include <cstdio>

namespace syncpoint {

std::string switch_schedule(double f) {
  if (f >= 1)
    return "bsp:1";
  if (f <= 0)
    return "asp:1";
  char buf[96];
  std::snprintf(buf, sizeof buf, "bsp:%.17g,asp:%.17g", f, 1 - f);
  return buf;
}

tune_result tune_switch(double tolerance, int budget,
                        const std::function<std::pair<double, double>(double share)>& run,
                        const std::function<void(const tune_row&)>& on_row) {
  tune_result out;
  auto record = [&](double f, double floor) {
    auto [acc, time] = run(f);
    tune_row row{f, acc, time, acc >= floor};
    out.runs.push_back(row);
    if (on_row)
      on_row(row);
    return row;
  };
  auto ref = record(1.0, -1);
  double floor = ref.accuracy - tolerance;
  double lo = 0, hi = 1;  // hi is accepted (pure BSP is, by definition)
  for (int i = 0; i < budget; ++i) {
    double mid = (lo + hi) / 2;
    if (record(mid, floor).accepted)
      hi = mid;
    else
      lo = mid;
  }
  out.policy.bsp_share = hi;
  out.policy.schedule = switch_schedule(hi);
  out.policy.reference_accuracy = ref.accuracy;
  out.policy.tolerance = tolerance;
  return out;
}

tune_result tune_switch(const job_config& cfg, double tolerance, int budget,
                        const std::function<void(const tune_row&)>& on_row, const progress_fn& on_progress) {
  auto result = tune_switch(
    tolerance, budget,
    [&](double f) {
      auto c = cfg;
      c.out_dir.clear();
      c.protocol = "sync-switch";
      c.protocol_opts.set("schedule", switch_schedule(f));
      c.progress = static_cast<bool>(on_progress);
      auto s = train(c, on_progress).summary;
      return std::make_pair(s.final_accuracy, s.run_time_s);
    },
    on_row);
  result.policy.model = cfg.model;
  result.policy.dataset = cfg.dataset;
  result.policy.workers = cfg.workers;
  return result;
}

}  // namespace syncpoint
