// An actor of your own that logs a run's metrics as CSV (examples/metrics_sink.hpp):
// every evaluation and progress report, with the figures exact.
//
//   build/example_metrics_sink                 # CSV on stdout
//   build/example_metrics_sink metrics.csv     # ... or into a file
#include "metrics_sink.hpp"

#include <syncpoint/job.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
  syncpoint::job_config cfg;
  cfg.protocol = "sync-switch";  // bsp, then asp: its phase change is a row too
  cfg.workers = 4;
  cfg.model = "softmax";
  cfg.dataset = "synthetic";
  cfg.train_limit = 4000;
  cfg.test_limit = 1000;
  cfg.epochs = 2;
  cfg.eval_every = 0.25;
  cfg.lr = 0.1;
  cfg.straggler = "3:x4";
  cfg.iter_cost_ms = 10;
  cfg.progress = true;           // progress reports go to observers (and, without on_progress, stderr)
  std::ofstream file;
  if (argc > 1) {
    file.open(argv[1]);
    if (!file) {
      std::fprintf(stderr, "example_metrics_sink: cannot write '%s'\n", argv[1]);
      return 2;
    }
  }
  std::ostream& out = argc > 1 ? static_cast<std::ostream&>(file) : std::cout;
  try {
    caf::actor_system_config sys_cfg;
    syncpoint::configure(sys_cfg, cfg);
    caf::actor_system sys{sys_cfg};
    auto sink = sys.spawn(metrics_sink, &out);
    syncpoint::job_options opts;
    opts.observers = {sink};
    opts.on_progress = [](const syncpoint::progress_report&) {};  // the sink has them: keep stderr quiet
    auto job = syncpoint::job::spawn(sys, cfg, opts);
    job.start();
    auto r = job.wait();
    std::fprintf(stderr, "final accuracy %.4f\n", r.summary.final_accuracy);
    return 0;
  } catch (const syncpoint::config_error& e) {
    std::fprintf(stderr, "example_metrics_sink: %s\n", e.what());
    return 2;
  }
}
