// Throughput and framework overhead, real clock, one process.
//
//   build/bench_throughput [--epochs E] [--batch B] [--repeat K]
//
// Prints samples/s of a plain LibTorch loop, of two plain loops at once on two
// threads (what two cores give two independent trainers), of syncpoint with 1
// worker (BSP and ASP), and with 2 workers (BSP and ASP), as ratios to the plain
// loop, plus the 1-worker overhead in percent (target: under 3%). The 2-worker
// rows run with the PS as 1 and as 2 shards (--ps-shards): the target is bsp
// with 2 workers at 0.85 of the two plain loops at the default shard count.
// Each figure is the median of K runs. Every run uses one LibTorch thread per worker.
#include "bench/args.hpp"
#include "bench/plain_loop.hpp"
#include "models/data_paths.hpp"
#include <syncpoint/model.hpp>
#include <syncpoint/train.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

using namespace syncpoint;

namespace {

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs[xs.size() / 2];
}

struct row {
  const char* name;
  std::function<double()> run;
  std::vector<double> sps;
};

// Two independent loops, each half the samples, on two threads: the two-core limit
// as this machine gives it (shared caches, memory bandwidth, turbo), with no
// synchronization at all.
double two_plain_loops(const dataset& train, int batch, int64_t samples) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> loops;
  for (uint64_t seed : {1, 2})
    loops.emplace_back([&, seed] {
      set_torch_threads(1);  // per thread, as every syncpoint worker does
      bench::plain_torch_loop(train, batch, samples / 2, 0.05, 0.9, seed);
    });
  for (auto& t : loops)
    t.join();
  auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return static_cast<double>(samples / 2 * 2) / secs;
}

std::function<double()> syncpoint_run(const char* protocol, int workers, int shards, int batch, double epochs) {
  return [=] {
    job_config cfg;
    cfg.ps_shards = shards;
    cfg.protocol = protocol;
    cfg.workers = workers;
    cfg.model = "mlp";
    cfg.batch = batch;
    cfg.epochs = epochs;
    cfg.eval_every = 0;
    cfg.test_limit = 1000;
    cfg.clock = clock_kind::real;
    cfg.progress = false;
    return train(cfg).summary.samples_per_s;
  };
}

// A ratio per round, to the plain loop run just before it: a slow spell of
// this shared machine (it comes and goes over seconds) divides out. The
// median of these paired ratios is the figure; the medians of the rows
// themselves are printed for the absolute rates.
void print(const std::vector<row>& rows, int repeat) {
  auto paired = [&](size_t row, size_t to) {
    std::vector<double> ratios;
    for (int r = 0; r < repeat; ++r)
      ratios.push_back(rows[row].sps[static_cast<size_t>(r)] / rows[to].sps[static_cast<size_t>(r)]);
    return median(ratios);
  };
  std::printf("\n%-28s %12s %10s %12s\n", "configuration", "samples/s", "vs plain", "(min, max)");
  for (size_t i = 0; i < rows.size(); ++i) {
    auto& r = rows[i];
    auto [lo, hi] = std::minmax_element(r.sps.begin(), r.sps.end());
    std::printf("%-28s %12.0f %9.3fx   (%.0f, %.0f)\n", r.name, median(r.sps), paired(i, 0), *lo, *hi);
  }
  std::printf("\n(vs plain: the median over rounds of each run's rate over the plain loop's in the same round)\n");
  std::printf("framework overhead, 1 worker (bsp) vs plain loop: %.2f%% (target < 3%%)\n", (1 / paired(2, 0) - 1) * 100);
  std::printf("framework overhead, 1 worker (asp) vs plain loop: %.2f%%\n", (1 / paired(3, 0) - 1) * 100);
  std::printf("2 workers vs 2 plain loops on 2 threads: bsp %.3fx, asp %.3fx (2 plain loops are %.3fx one)\n",
              paired(4, 1), paired(5, 1), paired(1, 0));
  std::printf("2 workers, 2 PS shards, vs 2 plain loops:  bsp %.3fx, asp %.3fx (target bsp >= 0.85 at the default, "
              "--ps-shards %d)\n",
              paired(6, 1), paired(7, 1), job_config{}.ps_shards);
}

}  // namespace

int main(int argc, char** argv) {
  double epochs = 1;
  int batch = 64;
  int repeat = 3;
  CLI::App app{"syncpoint's worker loop against a plain LibTorch loop, samples per second", "bench_throughput"};
  app.add_option("--epochs", epochs, "epochs per run")->capture_default_str()->check(syncpoint::bench::positive());
  app.add_option("--batch", batch, "batch size")->capture_default_str()->check(syncpoint::bench::positive());
  app.add_option("--repeat", repeat, "interleaved runs of each (the median is shown)")
    ->capture_default_str()
    ->check(syncpoint::bench::positive());
  if (int rc = syncpoint::bench::parse(app, argc, argv); rc >= 0)
    return rc;
  set_torch_threads(1);
  auto data = load_fashion_mnist(default_fashion_mnist_dir);
  auto samples = static_cast<int64_t>(epochs * static_cast<double>(data.train.size));
  std::printf("Fashion-MNIST MLP 784-256-10, batch %d, %lld samples per run, median of %d interleaved runs, real clock\n",
              batch, static_cast<long long>(samples), repeat);
  auto plain_run = [&] { return bench::plain_torch_loop(data.train, batch, samples, 0.05, 0.9, 1).samples_per_s; };
  auto two_plain_runs = [&] { return two_plain_loops(data.train, batch, samples); };
  int shards = job_config{}.ps_shards;
  std::vector<row> rows{{"plain LibTorch loop", plain_run, {}},
                        {"2 plain loops, 2 threads", two_plain_runs, {}},
                        {"syncpoint bsp, 1 worker", syncpoint_run("bsp", 1, shards, batch, epochs), {}},
                        {"syncpoint asp, 1 worker", syncpoint_run("asp", 1, shards, batch, epochs), {}},
                        {"syncpoint bsp, 2 workers", syncpoint_run("bsp", 2, 1, batch, epochs), {}},
                        {"syncpoint asp, 2 workers", syncpoint_run("asp", 2, 1, batch, epochs), {}},
                        {"syncpoint bsp, 2 w, 2 shards", syncpoint_run("bsp", 2, 2, batch, epochs), {}},
                        {"syncpoint asp, 2 w, 2 shards", syncpoint_run("asp", 2, 2, batch, epochs), {}}};
  // Interleaved, so that a slow spell of the machine hits every configuration alike.
  for (int r = 0; r < repeat; ++r)
    for (auto& row : rows)
      row.sps.push_back(row.run());
  print(rows, repeat);
  return 0;
}
