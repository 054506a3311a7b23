// Your own network, trained through the library (not the CLI) under the
// protocol you choose: define a torch::nn::Module, register it by name, and
// name it in the job.
//
//   build/example_own_model            # wbsp, 4 workers, one 3x straggler
//   build/example_own_model asp 8      # protocol and worker count
#include "models/torch_model.hpp"  // brings in LibTorch: only for files that define a module
#include "runtime/job.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

// Two hidden layers with a skip connection: [batch, 784] -> [batch, 10] logits.
struct skip_net : torch::nn::Module {
  torch::nn::Linear in{register_module("in", torch::nn::Linear(784, 128))};
  torch::nn::Linear hidden{register_module("hidden", torch::nn::Linear(128, 128))};
  torch::nn::Linear out{register_module("out", torch::nn::Linear(128, 10))};

  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::relu(in(x));
    h = h + torch::relu(hidden(h));
    return out(h);
  }
};

}  // namespace

int main(int argc, char** argv) {
  syncpoint::register_model("skip-net", [] { return syncpoint::wrap_module(std::make_shared<skip_net>()); });

  syncpoint::job_config cfg;
  cfg.model = "skip-net";
  cfg.protocol = argc > 1 ? argv[1] : "wbsp";
  cfg.workers = argc > 2 ? std::atoi(argv[2]) : 4;
  cfg.straggler = "0:x3";       // worker 0 is three times slower
  cfg.epochs = 1;
  cfg.iter_cost_ms = 10;        // virtual clock: each iteration costs 10 ms of run time
  cfg.eval_every = 0.25;        // evaluate four times an epoch
  cfg.progress = false;
  try {
    auto r = syncpoint::train(cfg);
    auto& s = r.summary;
    std::printf("skip-net under %s with %d workers: final accuracy %.4f after %llu samples, %.2f s of virtual time\n",
                s.protocol.c_str(), s.workers, s.final_accuracy, static_cast<unsigned long long>(s.samples),
                s.run_time_s);
    for (auto& e : s.evals)
      std::printf("  at %6.2f s: %.4f\n", e.t_s, e.accuracy);
    return 0;
  } catch (const syncpoint::config_error& e) {  // an unknown protocol, a bad worker count, ...
    std::fprintf(stderr, "example_own_model: %s\n", e.what());
    return 2;
  }
}
