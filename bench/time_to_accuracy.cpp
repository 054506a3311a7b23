// Time to accuracy on Fashion-MNIST, virtual clock: several protocols on the
// same job and seed, with ratios to BSP.
//
//   build/bench_time_to_accuracy [--straggler SPEC] [--target A] [--epochs E]
//                                [--protocols p1,p2,...] [--lookahead R] [--lr LR] [--momentum M]
//                                [--ps-bandwidth B] [--eval-every E]
//
// Defaults are issue 3's: 4 workers, MLP, straggler 3:x3, target 0.85, 3 epochs,
// bsp, asp, ssp (s=3) and elastic-bsp.
#include "bench/args.hpp"
#include "runtime/report/comparison.hpp"
#include "core/link_model.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

using namespace syncpoint;

int main(int argc, char** argv) {
  std::string straggler = "3:x3", protocols = "bsp,asp,ssp,elastic-bsp";
  double target = 0.85, epochs = 3, lr = 0.05, momentum = 0.9, bandwidth = 0, eval_every = 0.1;
  int lookahead = 15;
  std::string bandwidth_text;
  CLI::App app{"time to a target accuracy per protocol, with a straggler, virtual clock", "bench_time_to_accuracy"};
  app.add_option("--straggler", straggler, "the straggler SPEC")->capture_default_str();
  app.add_option("--target", target, "the target accuracy")->capture_default_str()->check(syncpoint::bench::between(0, 1));
  app.add_option("--epochs", epochs, "epochs (the time cap)")->capture_default_str()->check(syncpoint::bench::positive());
  app.add_option("--protocols", protocols, "protocols, comma-separated")->capture_default_str();
  app.add_option("--lookahead", lookahead, "elastic-bsp's lookahead")->capture_default_str()->check(syncpoint::bench::positive());
  app.add_option("--lr", lr, "learning rate")->capture_default_str()->check(syncpoint::bench::positive());
  app.add_option("--momentum", momentum, "momentum")->capture_default_str()->check(syncpoint::bench::between(0, 0.999999));
  app.add_option("--ps-bandwidth", bandwidth_text, "the PS link's rate (e.g. 1.3GB/s; default: no link model)");
  app.add_option("--eval-every", eval_every, "epochs between evaluations")->capture_default_str()
    ->check(syncpoint::bench::positive());
  if (int rc = syncpoint::bench::parse(app, argc, argv); rc >= 0)
    return rc;
  if (!bandwidth_text.empty()) {
    auto bw = parse_bandwidth(bandwidth_text);
    if (!bw) {
      std::fprintf(stderr, "bench_time_to_accuracy: --ps-bandwidth: not a rate: %s\n", bandwidth_text.c_str());
      return 2;
    }
    bandwidth = *bw;
  }
  std::vector<compared_run> runs;
  std::stringstream list(protocols);
  std::string p;
  try {
    while (std::getline(list, p, ',')) {
      job_config cfg;
      cfg.protocol = p;
      cfg.protocol_opts.set("lookahead", lookahead);
      cfg.workers = 4;
      cfg.model = "mlp";
      cfg.straggler = straggler;
      cfg.epochs = epochs;
      cfg.target_accuracy = target;
      cfg.iter_cost_ms = 10;
      cfg.lr = lr;
      cfg.momentum = momentum;
      cfg.eval_every = eval_every;
      cfg.ps_bandwidth = bandwidth;
      cfg.progress = false;
      compared_run r;
      r.label = protocol_label(p, cfg.protocol_opts);
      r.summary = train(cfg).summary;
      runs.push_back(std::move(r));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_time_to_accuracy: %s\n", e.what());
    return 2;
  }
  std::printf("Fashion-MNIST, MLP, 4 workers, virtual clock (10 ms/iteration), straggler %s, "
              "target %.3f, %.1f epochs, lr %g, momentum %g, PS link %g bytes/s (0: free), seed 1\n\n%s\n",
              straggler.c_str(), target, epochs, lr, momentum, bandwidth,
              report::comparison_table(runs).c_str());
  const run_summary* bsp = nullptr;
  for (auto& r : runs)
    if (r.label == "bsp")
      bsp = &r.summary;
  if (bsp && bsp->time_to_target_s > 0) {
    std::printf("time to %.3f relative to bsp (>1: faster than bsp):\n", target);
    for (auto& r : runs)
      if (r.summary.time_to_target_s > 0)
        std::printf("  %-12s %6.2fx\n", r.label.c_str(), bsp->time_to_target_s / r.summary.time_to_target_s);
      else
        std::printf("  %-12s  not reached\n", r.label.c_str());
  }
  return 0;
}
