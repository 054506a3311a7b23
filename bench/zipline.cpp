// ZipLine variants side by side: median microseconds of the algorithm alone.
//
//   build/bench_zipline [--repeat K] [--seed S]
//
// Instances are rows as ElasticBSP predicts them (start in [0,1), interval in
// [0.5,2)), the same generator as `syncpoint zipline --random N,R`. Every
// configuration checks that the three variants return the same stops.
#include "bench/args.hpp"
#include "runtime/studies/zipline_instances.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace syncpoint;

namespace {

double median_micros(const zipline_matrix& m, zipline_variant v, int repeat, zipline_result& out) {
  std::vector<double> xs;
  for (int k = 0; k < repeat; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    out = zipline(m, v);
    xs.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(xs.begin(), xs.end());
  return xs[xs.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 7;
  uint64_t seed = 1;
  CLI::App app{"ZipLine's three variants on random matrices, microseconds", "bench_zipline"};
  app.add_option("--repeat", repeat, "runs of each (the median is shown)")->capture_default_str()->check(syncpoint::bench::positive());
  app.add_option("--seed", seed, "the matrices' seed")->capture_default_str();
  if (int rc = syncpoint::bench::parse(app, argc, argv); rc >= 0)
    return rc;
  std::printf("median of %d runs, microseconds of the algorithm alone (no I/O)\n\n", repeat);
  std::printf("%6s %5s %14s %14s %16s %12s %12s\n", "n", "R", "zipline", "zipline-opt",
              "zipline-opt-bs", "zl/opt-bs", "opt/opt-bs");
  bool all_agree = true;
  for (size_t n : {10, 100, 1000}) {
    for (size_t R : {15, 150}) {
      auto m = random_zipline_matrix(n, R, seed);
      zipline_result a, b, c;
      double t_plain = median_micros(m, zipline_variant::plain, repeat, a);
      double t_opt = median_micros(m, zipline_variant::opt, repeat, b);
      double t_bs = median_micros(m, zipline_variant::opt_bs, repeat, c);
      bool agree = a.stops == b.stops && b.stops == c.stops;
      all_agree = all_agree && agree;
      std::printf("%6zu %5zu %14.1f %14.1f %16.1f %11.1fx %11.1fx%s\n", n, R, t_plain, t_opt, t_bs,
                  t_plain / t_bs, t_opt / t_bs, agree ? "" : "  VARIANTS DISAGREE");
    }
  }
  // Growth: zipline-opt-bs alone at n = 10,000 (zipline would take minutes there).
  double t_small = 0, t_big = 0;
  for (size_t n : {1000, 10000}) {
    auto m = random_zipline_matrix(n, 150, seed);
    zipline_result r;
    (n == 1000 ? t_small : t_big) = median_micros(m, zipline_variant::opt_bs, repeat, r);
  }
  std::printf("\nzipline-opt-bs, R=150: n=1000 %.1f us, n=10000 %.1f us: growth exponent %.2f "
              "(time ~ n^k between the two)\n",
              t_small, t_big, std::log(t_big / t_small) / std::log(10.0));
  std::printf("targets: zipline-opt-bs at n=1000, R=150 at most 5000 us and at least 20x faster than zipline\n");
  return all_agree ? 0 : 1;
}
