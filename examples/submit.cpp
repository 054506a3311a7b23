// The same actors of your own, following a job on a cluster from this machine
// (<syncpoint/cluster.hpp>): the early-stopping actor and the metrics sink of
// the one-process examples, unchanged. The job runs on the head and its nodes;
// the actors live here, hear every evaluation, progress line and phase change
// as the head relays them, and the early stopper's stop goes back through the
// head.
//
//   syncpoint head --port 4242 &  syncpoint node --join 127.0.0.1:4242 --slots 2 &
//   build/example_submit 127.0.0.1:4242            # CSV on stdout
//   build/example_submit 127.0.0.1:4242 TOKEN      # a head started with --token TOKEN
#include "early_stopping.hpp"
#include "metrics_sink.hpp"

#include <syncpoint/cluster.hpp>

#include <cstdio>
#include <iostream>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: example_submit HOST:PORT [TOKEN]\n");
    return 2;
  }
  syncpoint::job_config cfg;
  cfg.protocol = "bsp";
  cfg.clock = syncpoint::clock_kind::real;  // a cluster job runs in wall time
  cfg.workers = 2;
  cfg.model = "softmax";
  cfg.dataset = "synthetic";
  cfg.train_limit = 4000;
  cfg.test_limit = 500;
  cfg.epochs = 1000;     // far more than it needs: the early stopper ends it
  cfg.max_time_s = 600;  // and this, should it not
  cfg.eval_every = 0.25;
  cfg.lr = 0.1;
  cfg.progress = true;   // the sink writes the progress lines
  syncpoint::submit_options opts;
  opts.head = argv[1];
  opts.token = argc > 2 ? argv[2] : "";
  opts.on_line = [](const std::string&) {};  // the sink has them: keep stderr quiet
  try {
    caf::actor_system_config sys_cfg;
    syncpoint::configure_submitter(sys_cfg, opts);
    caf::actor_system sys{sys_cfg};
    auto run = [&] {  // the handles go with the copy, so that `sys` may end its actors
      auto with = opts;
      // min_delta 0.002: on this small job accuracy creeps up by less once it has learnt.
      with.observers = {sys.spawn(metrics_sink, &std::cout), sys.spawn(early_stopping, 3, 0.002)};
      return syncpoint::submit(sys, cfg, with);
    }();
    std::fprintf(stderr, "job %llu %s%s%s\n", static_cast<unsigned long long>(run.id), run.state.c_str(),
                 run.message.empty() ? "" : ": ", run.message.c_str());
    if (run.ran)
      std::fprintf(stderr, "final accuracy %.4f after %.2f epochs\n", run.result.summary.final_accuracy,
                   static_cast<double>(run.result.summary.samples) / cfg.train_limit);
    return run.state == "stopped" ? 0 : 1;  // done: it ran to its budget, no early stop
  } catch (const syncpoint::config_error& e) {
    std::fprintf(stderr, "example_submit: %s\n", e.what());
    return 2;
  } catch (const syncpoint::cluster_error& e) {
    std::fprintf(stderr, "example_submit: %s\n", e.what());
    return 1;
  }
}
