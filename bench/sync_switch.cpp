// Sync-Switch against BSP and ASP, virtual time, Fashion-MNIST (docs/sync-switch.md).
//
//   build/bench_sync_switch [--workers 8] [--epochs 2] [--budget 4] [--tolerance 0.005]
//                           [--momentum M] [--lr LR]
//
// 1. Workers n-2 and n-1 two and three times slower: the share of BSP tuned
//    by tune-switch, then bsp, asp and sync-switch at that share: samples/s,
//    time, final accuracy, side by side with ratios.
// 2. Transient stragglers, each worker 4x slower for its own window of the
//    run: the online policy against plain bsp.
// 3. The cost of a switch (real clock: from the decision to the next phase's
//    first release) and of the online policy per push (against bsp's own).
#include "bench/args.hpp"
#include <syncpoint/protocol.hpp>
#include "bench/null_coordinator.hpp"
#include "bench/paper_job.hpp"
#include <syncpoint/train.hpp>
#include "runtime/studies/tune_switch.hpp"

#include <algorithm>
#include <chrono>
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

void print(const std::vector<row>& rows) {
  const auto& bsp = rows.front().s;
  std::printf("| run | samples/s | vs bsp | run time s | final accuracy | vs bsp (points) |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (auto& r : rows)
    std::printf("| %s | %.0f | %.2fx | %.2f | %.4f | %+.1f |\n", r.label.c_str(), r.s.samples_per_s,
                r.s.samples_per_s / bsp.samples_per_s, r.s.run_time_s, r.s.final_accuracy,
                100 * (r.s.final_accuracy - bsp.final_accuracy));
  std::fflush(stdout);
}

row run(job_config cfg, const std::string& protocol, const std::string& label) {
  cfg.protocol = protocol;
  std::fprintf(stderr, "bench_sync_switch: %s ...\n", label.c_str());
  return row{label, train(cfg).summary};
}

// 1. Two slower workers, the tuned share.
void tuned_share(const job_config& base, double tolerance, int budget) {
  auto het = base;
  het.straggler = std::to_string(base.workers - 2) + ":x2;" + std::to_string(base.workers - 1) + ":x3";
  std::printf("\n1. Workers %s; the share of BSP tuned with tolerance %g, budget %d\n\n", het.straggler.c_str(),
              tolerance, budget);
  std::printf("| tuning run | bsp share | final accuracy | run time s | accepted |\n|---|---|---|---|---|\n");
  int k = 0;
  auto tuned = tune_switch(het, tolerance, budget, [&](const tune_row& r) {
    std::printf("| %s | %.4f | %.4f | %.2f | %s |\n", k == 0 ? "reference" : std::to_string(k).c_str(), r.share,
                r.accuracy, r.time_s, k == 0 ? "-" : (r.accepted ? "yes" : "no"));
    std::fflush(stdout);
    ++k;
  });
  std::printf("\ntuned schedule: %s\n\n", tuned.policy.schedule.c_str());
  auto at_share = het;
  at_share.protocol_opts.set("schedule", tuned.policy.schedule);
  print({run(het, "bsp", "bsp"), run(het, "asp", "asp"),
         run(at_share, "sync-switch", "sync-switch " + tuned.policy.schedule)});
}

// 2. Transient stragglers: worker i is 4x slower for its own window.
void transient_stragglers(const job_config& base) {
  auto transient = base;
  std::string spec;
  double window = 0.6;  // virtual seconds each
  for (int i = 0; i < base.workers; ++i) {
    char item[64];
    std::snprintf(item, sizeof item, "%s%d:x4@%.2f-%.2f", i ? ";" : "", i, 0.3 + i * window, 0.3 + (i + 1) * window);
    spec += item;
  }
  transient.straggler = spec;
  auto online = transient;
  online.protocol_opts.set("online", "on");
  std::printf("\n2. Transient stragglers: each worker 4x slower for %.1f s in turn (%s)\n\n", window, spec.c_str());
  print({run(transient, "bsp", "bsp"), run(online, "sync-switch", "sync-switch --online")});
}

// 3. Costs. A switch on the real clock: from the phase mark to the next release.
void costs(const job_config& base) {
  auto small = base;
  small.model = "softmax";
  small.dataset = "synthetic";
  small.train_limit = 8000;
  small.workers = 4;
  small.epochs = 1;
  small.clock = clock_kind::real;
  small.eval_every = 0;
  small.protocol = "sync-switch";
  small.protocol_opts.set("schedule", "bsp:0.5,asp:0.5");
  std::vector<double> gaps;
  for (int rep = 0; rep < 5; ++rep) {
    auto r = train(small);
    nanos mark = -1;
    for (auto& ev : r.trace) {
      if (ev.kind == "phase" && ev.note.find("share") != std::string::npos)
        mark = ev.t0;
      else if (mark >= 0 && (ev.kind == "pull" || ev.kind == "compute") && ev.t0 >= mark) {
        gaps.push_back(static_cast<double>(ev.t0 - mark) / 1e3);
        break;
      }
    }
  }
  std::sort(gaps.begin(), gaps.end());
  protocol_options on;
  on.set("online", "on");
  auto plain = make_protocol("bsp", {});
  auto policy = make_protocol("sync-switch", on);
  double bsp_ns = bench::ns_per_push(*plain, 8, 400000), online_ns = bench::ns_per_push(*policy, 8, 400000);
  std::printf("\n3. Costs\n\n| what | figure |\n|---|---|\n");
  if (!gaps.empty())
    std::printf("| a switch, real clock: decision to the next phase's first pull or compute (median of %zu) | %.1f us |\n",
                gaps.size(), gaps[gaps.size() / 2]);
  std::printf("| the online policy per push (sync-switch --online, 8 workers) | %.0f ns |\n", online_ns);
  std::printf("| bsp's own decision per push, for scale | %.0f ns |\n", bsp_ns);
}

}  // namespace

int main(int argc, char** argv) {
  job_config base = bench::paper_job();
  base.iter_cost_ms = 10;
  base.eval_every = 0.25;
  base.progress = false;
  int budget = 4;
  double tolerance = 0.005;
  CLI::App app{"Sync-Switch's offline-tuned switch against its schedules, virtual clock", "bench_sync_switch"};
  app.add_option("--workers", base.workers, "workers")->capture_default_str();
  app.add_option("--epochs", base.epochs, "epochs")->capture_default_str()->check(syncpoint::bench::positive());
  app.add_option("--budget", budget, "tuning runs")->capture_default_str();
  app.add_option("--tolerance", tolerance, "accuracy the tuned switch may give up")->capture_default_str()
    ->check(syncpoint::bench::non_negative());
  app.add_option("--momentum", base.momentum, "momentum")->capture_default_str()->check(syncpoint::bench::between(0, 0.999999));
  app.add_option("--lr", base.lr, "learning rate")->capture_default_str()->check(syncpoint::bench::positive());
  if (int rc = syncpoint::bench::parse(app, argc, argv); rc >= 0)
    return rc;
  if (base.workers < 4 || budget < 1) {
    std::fprintf(stderr, "bench_sync_switch: needs at least 4 workers and a budget >= 1\n");
    return 2;
  }
  std::printf("virtual clock, %d workers, MLP on Fashion-MNIST, %g epochs, %.0f ms per iteration, lr %g, "
              "momentum %g\n",
              base.workers, base.epochs, base.iter_cost_ms, base.lr, base.momentum);
  try {
    tuned_share(base, tolerance, budget);
    transient_stragglers(base);
    costs(base);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_sync_switch: %s\n", e.what());
    return 1;
  }
  return 0;
}
