// R²SP against BSP and ASP on a contended PS link, virtual time (docs/r2sp.md).
//
//   build/bench_r2sp [--ps-bandwidth 1.3GB/s] [--workers 8] [--epochs 2] [--target 0.8]
//                    [--iter-cost 10] [--momentum M] [--lr LR]
//
// 1. Homogeneous workers: bsp, asp, r2sp. 2. Workers 6 and 7 two and three
// times slower: bsp, asp, r2sp without and with batch tuning. For each run:
// time per round (n gradients), PS link utilisation, samples/s, time to the
// target accuracy and final accuracy, with ratios to BSP. MLP on Fashion-MNIST.
// 3. The homogeneous job with the PS as 2 and 4 shards, each with a link of
// --ps-bandwidth: bsp, asp and r2sp against one link.
#include "bench/args.hpp"
#include "bench/paper_job.hpp"
#include <syncpoint/train.hpp>
#include "core/link_model.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace syncpoint;

namespace {

struct row {
  std::string label;
  run_summary s;
};

void print(const char* title, const std::vector<row>& rows, int workers, int batch) {
  std::printf("\n%s\n\n", title);
  std::printf("| run | time per round | link utilisation | samples/s | vs bsp | time to target | vs bsp | final accuracy |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  const run_summary& bsp = rows.front().s;
  for (auto& r : rows) {
    double round_ms = r.s.samples_per_s > 0 ? 1e3 * workers * batch / r.s.samples_per_s : 0;
    char ttt[32] = "not reached", ttt_ratio[32] = "-";
    if (r.s.time_to_target_s >= 0) {
      std::snprintf(ttt, sizeof ttt, "%.2f s", r.s.time_to_target_s);
      if (bsp.time_to_target_s > 0)
        std::snprintf(ttt_ratio, sizeof ttt_ratio, "%.2fx faster", bsp.time_to_target_s / r.s.time_to_target_s);
    }
    std::printf("| %s | %.2f ms | %.2f | %.0f | %.2fx | %s | %s | %.4f |\n", r.label.c_str(), round_ms,
                r.s.link_utilization, r.s.samples_per_s, r.s.samples_per_s / bsp.samples_per_s, ttt, ttt_ratio,
                r.s.final_accuracy);
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  job_config base = bench::paper_job();
  base.target_accuracy = 0.8;
  base.eval_every = 0.05;
  std::string bandwidth = "1.3GB/s";
  CLI::App app{"R2SP against BSP and ASP on a PS link of limited bandwidth, virtual clock", "bench_r2sp"};
  app.add_option("--ps-bandwidth", bandwidth, "the PS link's rate (e.g. 1.3GB/s)")->capture_default_str();
  app.add_option("--workers", base.workers, "workers")->capture_default_str();
  app.add_option("--epochs", base.epochs, "epochs")->capture_default_str()->check(syncpoint::bench::positive());
  app.add_option("--target", base.target_accuracy, "the target accuracy")->capture_default_str()->check(syncpoint::bench::between(0, 1));
  app.add_option("--iter-cost", base.iter_cost_ms, "ms per iteration")->capture_default_str()->check(syncpoint::bench::non_negative());
  app.add_option("--momentum", base.momentum, "momentum")->capture_default_str()->check(syncpoint::bench::between(0, 0.999999));
  app.add_option("--lr", base.lr, "learning rate")->capture_default_str()->check(syncpoint::bench::positive());
  if (int rc = syncpoint::bench::parse(app, argc, argv); rc >= 0)
    return rc;
  auto bw = parse_bandwidth(bandwidth);
  if (!bw || *bw <= 0 || base.workers < 3) {
    std::fprintf(stderr, "bench_r2sp: needs a positive --ps-bandwidth and at least 3 workers\n");
    return 2;
  }
  base.ps_bandwidth = *bw;
  std::printf("virtual clock, %d workers, MLP on Fashion-MNIST, %g epochs, %.0f ms per iteration at batch %d,\n"
              "PS link %s (%.0f MB/s), lr %g, momentum %g, target accuracy %g\n",
              base.workers, base.epochs, base.iter_cost_ms, base.batch, bandwidth.c_str(), *bw / 1e6, base.lr,
              base.momentum, base.target_accuracy);
  auto run = [&](job_config cfg, const std::string& protocol, const std::string& label) {
    cfg.protocol = protocol;
    std::fprintf(stderr, "bench_r2sp: %s ...\n", label.c_str());
    return row{label, train(cfg).summary};
  };
  try {
    std::vector<row> same;
    for (auto p : {"bsp", "asp", "r2sp"})
      same.push_back(run(base, p, p));
    print("1. Homogeneous workers", same, base.workers, base.batch);

    auto het = base;
    het.straggler = std::to_string(base.workers - 2) + ":x2;" + std::to_string(base.workers - 1) + ":x3";
    auto fixed = het;
    fixed.protocol_opts.set("tune-batch", "off");
    std::vector<row> mixed{run(het, "bsp", "bsp"), run(het, "asp", "asp"),
                           run(fixed, "r2sp", "r2sp, batches fixed"), run(het, "r2sp", "r2sp, batches tuned")};
    print(("2. Workers " + het.straggler + " (two slower workers)").c_str(), mixed, het.workers, het.batch);

    // The same load spread over K shards, each with a link of --ps-bandwidth: R²SP's
    // slots on one contended link against more links (issue 24).
    std::vector<row> spread{run(base, "bsp", "bsp, 1 shard"), run(base, "r2sp", "r2sp, 1 shard")};
    for (int k : {2, 4}) {
      auto sharded = base;
      sharded.ps_shards = k;
      for (auto p : {"bsp", "asp", "r2sp"})
        spread.push_back(run(sharded, p, std::string(p) + ", " + std::to_string(k) + " shards"));
    }
    print("3. One PS link against K shards with a link each (homogeneous workers; utilisation: the links' mean)",
          spread, base.workers, base.batch);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_r2sp: %s\n", e.what());
    return 1;
  }
  return 0;
}
