// The coordinator and the virtual clock at scale (docs/performance.md,
// "Scale"): `syncpoint simulate` for every protocol at N = 16 ... 4096
// workers, the same 102,400 pushes in every cell (K = 102400 / N iterations
// each; N = 1024 is the target's K = 100), a 4x straggler, the mlp's cost.
// Prints, per push, the coordinator's wall time and the virtual clock's
// (ordering and firing timers), the coordinator's growth exponent from
// N = 256 to 4096 (least squares on log-log), and the wall time of the
// N = 1024, K = 100 simulation against the 2.2 s target (issue 42).
//
//   build/bench_scale [--protocols bsp,ssp] [--max-workers 4096]
#include "bench/args.hpp"
#include "runtime/studies/simulate.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

using namespace syncpoint;

namespace {

double slope(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i)
    mx += std::log(x[i]) / x.size(), my += std::log(y[i]) / y.size();
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    num += (std::log(x[i]) - mx) * (std::log(y[i]) - my);
    den += (std::log(x[i]) - mx) * (std::log(x[i]) - mx);
  }
  return den > 0 ? num / den : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> protocols{"bsp", "asp", "ssp", "elastic-bsp", "wbsp", "wbsp-overlap", "r2sp",
                                     "sync-switch", "dssp"};
  int max_workers = 4096;
  CLI::App app{"the coordinator's cost per push against the number of workers, per protocol", "bench_scale"};
  app.add_option("--protocols", protocols, "protocols, comma-separated")->delimiter(',')->capture_default_str();
  app.add_option("--max-workers", max_workers, "the largest worker count (16, 64, ... up to it)")
    ->capture_default_str()
    ->check(syncpoint::bench::between(16, 1 << 20));
  if (int rc = syncpoint::bench::parse(app, argc, argv); rc >= 0)
    return rc;
  std::vector<int> sizes;
  for (int n = 16; n <= max_workers; n *= 4)
    sizes.push_back(n);
  std::printf("wall time per push (us), coordinator / virtual clock, 102400 pushes per cell, straggler 3:x4, as "
              "mlp\n\n| protocol |");
  for (int n : sizes)
    std::printf(" N=%d |", n);
  std::printf(" exponent 256..%d | N=1024 K=100 wall s | <= 2.2 s |\n|---|", sizes.back());
  for (size_t i = 0; i < sizes.size() + 3; ++i)
    std::printf("---|");
  std::printf("\n");
  for (auto& p : protocols) {
    std::printf("| %s |", p.c_str());
    std::fflush(stdout);
    std::vector<double> xs, ys;
    double wall1024 = -1;
    for (int n : sizes) {
      job_config cfg;
      cfg.protocol = p;
      cfg.workers = n;
      cfg.straggler = "3:x4";
      cfg.progress = false;
      auto s = simulate(cfg, static_cast<uint64_t>(102400 / n));
      std::printf(" %.2f / %.2f |", s.coordinator_us_per_push, s.clock_us_per_push);
      std::fflush(stdout);
      if (n >= 256)
        xs.push_back(n), ys.push_back(s.coordinator_us_per_push);
      if (n == 1024)
        wall1024 = s.wall_s;
    }
    std::printf(" %.2f | %.2f | %s |\n", xs.size() > 1 ? slope(xs, ys) : 0.0, wall1024,
                wall1024 < 0 ? "-" : wall1024 <= 2.2 ? "yes" : "no");
  }
  return 0;
}
