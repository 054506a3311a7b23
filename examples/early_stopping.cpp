// An actor of your own that ends a run early (examples/early_stopping.hpp): it
// watches the evaluations and stops the job when accuracy has not improved for
// K of them. The job's actors run in this program's own actor system.
//
//   build/example_early_stopping            # ssp, patience 3
//   build/example_early_stopping asp 2      # protocol and patience
#include "early_stopping.hpp"

#include <syncpoint/job.hpp>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  syncpoint::job_config cfg;
  cfg.protocol = argc > 1 ? argv[1] : "ssp";
  cfg.workers = 4;
  cfg.model = "softmax";
  cfg.dataset = "synthetic";
  cfg.train_limit = 4000;
  cfg.test_limit = 1000;
  cfg.epochs = 30;              // far more than it needs: the actor ends it
  cfg.eval_every = 0.5;         // an evaluation every half epoch
  cfg.lr = 0.1;
  cfg.straggler = "3:x4";
  cfg.iter_cost_ms = 10;        // the virtual clock
  cfg.progress = false;
  int patience = argc > 2 ? std::atoi(argv[2]) : 3;
  try {
    caf::actor_system_config sys_cfg;
    syncpoint::configure(sys_cfg, cfg);
    caf::actor_system sys{sys_cfg};
    auto stopper = sys.spawn(early_stopping, patience, 0.0);
    auto job = syncpoint::job::spawn(sys, cfg, {{stopper}});
    job.start();
    auto r = job.wait();
    std::printf("%s: stopped after %.2f of %.0f epochs (%.2f s of virtual time), final accuracy %.4f\n",
                r.summary.protocol.c_str(), static_cast<double>(r.summary.samples) / 4000.0, cfg.epochs,
                r.summary.run_time_s, r.summary.final_accuracy);
    for (auto& e : r.summary.evals)
      std::printf("  at %6.2f s: %.4f\n", e.t_s, e.accuracy);
    return r.summary.samples < static_cast<uint64_t>(cfg.epochs * 4000) ? 0 : 1;  // it ran to its budget: no early stop
  } catch (const syncpoint::config_error& e) {
    std::fprintf(stderr, "example_early_stopping: %s\n", e.what());
    return 2;
  }
}
