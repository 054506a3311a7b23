#include "cli/tune_cmd.hpp"

#include "cli/options.hpp"
#include "cli/progress.hpp"
#include <syncpoint/train.hpp>
#include "runtime/studies/tune_switch.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace syncpoint::cli {

namespace {

// Whether `path` can be opened for writing; a file made to find out is removed again.
bool can_write(const std::string& path) {
  std::error_code ec;
  bool existed = std::filesystem::exists(path, ec);
  if (!std::ofstream(path, std::ios::app))
    return false;
  if (!existed)
    std::filesystem::remove(path, ec);
  return true;
}

}  // namespace

int run_tune_switch(const std::vector<std::string>& args) {
  options opts(options::command::tune);
  if (int rc = parse_command(opts, args, "tune-switch"); rc >= 0)
    return rc;
  if (!(opts.tolerance >= 0 && opts.tolerance < 1) || opts.budget < 1 || opts.budget > 20) {
    std::cerr << "syncpoint tune-switch: --tolerance must be in [0, 1) and --budget in 1..20\n";
    return 2;
  }
  auto cfg = opts.job();
  cfg.protocol = "sync-switch";
  progress_display shown(cfg.progress);
  if (auto misfit = check_options_fit(cfg, {"sync-switch"}); !misfit.empty()) {
    std::cerr << "syncpoint tune-switch: " << misfit << "\n";
    return 2;
  }
  validate(cfg);
  // The policy is written after every run: an unwritable place must be refused before them.
  if (!can_write(opts.policy_out)) {
    std::cerr << "syncpoint tune-switch: cannot write the policy file '" << opts.policy_out << "'\n";
    return 2;
  }
  std::printf("tuning the share of BSP before ASP: %s on %s, %d workers, tolerance %g, %d runs after the "
              "reference\n\n| run | bsp share | final accuracy | run time s | accepted |\n|---|---|---|---|---|\n",
              cfg.model.c_str(), cfg.dataset.c_str(), cfg.workers, opts.tolerance, opts.budget);
  std::fflush(stdout);
  int k = 0, runs = opts.budget + 1;
  shown.begin("reference (bsp)", 1, runs);
  auto result = tune_switch(cfg, opts.tolerance, opts.budget, [&](const tune_row& r) {
    shown.end();
    std::printf("| %s | %.5f | %.4f | %.2f | %s |\n", k == 0 ? "reference" : std::to_string(k).c_str(),
                r.share, r.accuracy, r.time_s, k == 0 ? "-" : (r.accepted ? "yes" : "no"));
    std::fflush(stdout);
    ++k;
    if (k < runs)
      shown.begin("search run " + std::to_string(k), k + 1, runs);
  }, shown.callback());
  shown.end();
  save_switch_policy(opts.policy_out, result.policy);
  std::printf("\nsmallest accepted share of BSP: %.5f (schedule %s); wrote %s\n"
              "reuse it: syncpoint train --protocol sync-switch --switch-policy %s [the same job options]\n",
              result.policy.bsp_share, result.policy.schedule.c_str(), opts.policy_out.c_str(),
              opts.policy_out.c_str());
  return 0;
}

}  // namespace syncpoint::cli
