// A training program in a dozen lines: 4 workers, SSP, one straggler, virtual time.
#include <syncpoint/train.hpp>

#include <cstdio>

int main() {
  syncpoint::job_config cfg;
  cfg.protocol = "ssp";
  cfg.protocol_opts.set("staleness", 2);
  cfg.workers = 4;
  cfg.model = "mlp";
  cfg.epochs = 1;
  cfg.straggler = "3:x4";   // worker 3 is four times slower
  cfg.iter_cost_ms = 10;    // virtual time charged per iteration
  auto result = syncpoint::train(cfg);
  std::printf("accuracy %.3f after %.1f virtual seconds\n", result.summary.final_accuracy,
              result.summary.run_time_s);
}
