#include "cli/simulate_cmd.hpp"

#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "runtime/studies/simulate.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace syncpoint::cli {

namespace {

template <class F>
void print_spread(const char* what, const std::vector<worker_summary>& ws, F value, const char* format) {
  std::vector<double> v;
  for (auto& w : ws)
    v.push_back(value(w));
  if (v.empty())
    return;
  std::sort(v.begin(), v.end());
  double mean = 0;
  for (double x : v)
    mean += x;
  mean /= static_cast<double>(v.size());
  std::string line = std::string("  %-22s min ") + format + "  median " + format + "  mean " + format +
                     "  max " + format + "\n";
  std::printf(line.c_str(), what, v.front(), v[v.size() / 2], mean, v.back());
}

}  // namespace

int run_simulate(const std::vector<std::string>& args) {
  options opts(options::command::simulate);
  if (int rc = parse_command(opts, args, "simulate"); rc >= 0)
    return rc;
  auto cfg = opts.job();
  if (auto misfit = check_options_fit(cfg, {cfg.protocol}); !misfit.empty()) {
    std::cerr << "syncpoint simulate: " << misfit << "\n";
    return 2;
  }
  check_simulation(cfg, opts.iterations);  // before the progress line names the run
  auto label = protocol_label(cfg.protocol, cfg.protocol_opts);
  progress_display shown(cfg.progress);
  shown.begin(label);
  auto s = simulate(cfg, opts.iterations, shown.callback());
  shown.end();
  auto& r = s.run.summary;
  std::printf("simulate %s: %d workers, %llu iterations each, as %s (%.4g ms per iteration, %s; %.0f bytes per "
              "push and pull)\n",
              label.c_str(), r.workers, static_cast<unsigned long long>(opts.iterations), s.as_model.c_str(),
              s.iter_cost_ms, s.iter_cost_source.c_str(), s.wire_bytes);
  std::printf("  simulated time %.3f s, %llu samples (%.1f/s), barriers %llu, staleness mean %.2f max %llu\n",
              r.run_time_s, static_cast<unsigned long long>(r.samples), r.samples_per_s,
              static_cast<unsigned long long>(r.barriers), r.staleness_mean,
              static_cast<unsigned long long>(r.staleness_max));
  if (r.link_utilization >= 0)
    std::printf("  PS link busy %.3f s (%.1f%% of the run)\n", r.link_busy_s, 100 * r.link_utilization);
  print_spread("iterations per worker", r.per_worker, [](auto& w) { return static_cast<double>(w.iterations); },
               "%.0f");
  print_spread("compute ratio", r.per_worker, [](auto& w) { return w.compute_ratio; }, "%.3f");
  print_spread("wait s", r.per_worker, [](auto& w) { return w.wait_s; }, "%.3f");
  std::printf("  wall time %.2f s; the coordinator took %.2f us per push, the virtual clock %.2f us (%llu pushes)\n",
              s.wall_s, s.coordinator_us_per_push, s.clock_us_per_push,
              static_cast<unsigned long long>(s.run.profile.coordinator_pushes));
  for (auto& f : s.run.failures)
    std::fprintf(stderr, "syncpoint simulate: %s\n", f.c_str());
  if (!cfg.out_dir.empty())
    std::printf("wrote %s/trace.jsonl and summary.json\n", cfg.out_dir.c_str());
  return 0;
}

}  // namespace syncpoint::cli
