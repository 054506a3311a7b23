// Time to accuracy on Fashion-MNIST, virtual clock: several protocols on the
// same job and seed, with ratios to BSP.
//
//   build/bench_time_to_accuracy [--straggler SPEC] [--target A] [--epochs E]
//                                [--protocols p1,p2,...] [--lookahead R] [--lr LR] [--momentum M]
//                                [--ps-bandwidth B] [--eval-every E]
//
// Defaults are issue 3's: 4 workers, MLP, straggler 3:x3, target 0.85, 3 epochs,
// bsp, asp, ssp (s=3) and elastic-bsp.
#include "cli/compare.hpp"
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
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--straggler")
      straggler = argv[i + 1];
    else if (a == "--target")
      target = std::atof(argv[i + 1]);
    else if (a == "--epochs")
      epochs = std::atof(argv[i + 1]);
    else if (a == "--protocols")
      protocols = argv[i + 1];
    else if (a == "--lookahead")
      lookahead = std::atoi(argv[i + 1]);
    else if (a == "--lr")
      lr = std::atof(argv[i + 1]);
    else if (a == "--momentum")
      momentum = std::atof(argv[i + 1]);
    else if (a == "--ps-bandwidth") {
      auto bw = parse_bandwidth(argv[i + 1]);
      if (!bw) {
        std::fprintf(stderr, "bench_time_to_accuracy: --ps-bandwidth: not a rate: %s\n", argv[i + 1]);
        return 2;
      }
      bandwidth = *bw;
    }
    else if (a == "--eval-every")
      eval_every = std::atof(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: bench_time_to_accuracy [--straggler S] [--target A] [--epochs E] "
                           "[--protocols p,...] [--lookahead R] [--lr LR] [--momentum M] [--ps-bandwidth B] "
                           "[--eval-every E]\n");
      return 2;
    }
  }
  std::vector<cli::compared_run> runs;
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
      cli::compared_run r;
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
              cli::comparison_table(runs).c_str());
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
