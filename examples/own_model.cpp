// Your own network, and your own data, trained through the library (not the
// CLI) under the protocol you choose: define a torch::nn::Module, register it
// by name, and name it in the job; register a data set the same way.
//
//   build/example_own_model            # wbsp, 4 workers, one 3x straggler
//   build/example_own_model asp 8      # protocol and worker count
#include <syncpoint/data_registry.hpp>
#include <syncpoint/torch_model.hpp>  // brings in LibTorch: only for files that define a module
#include <syncpoint/train.hpp>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace {

// Two hidden layers with a skip connection: [batch, 1, 28, 28] -> [batch, 10] logits.
struct skip_net : torch::nn::Module {
  torch::nn::Linear in{register_module("in", torch::nn::Linear(784, 128))};
  torch::nn::Linear hidden{register_module("hidden", torch::nn::Linear(128, 128))};
  torch::nn::Linear out{register_module("out", torch::nn::Linear(128, 10))};

  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::relu(in(x.flatten(1)));
    h = h + torch::relu(hidden(h));
    return out(h);
  }
};

// Your data: 16 measurements per example, 4 classes, each a cloud around its
// own corner. Any shape works: an example here is a vector of 16 floats.
syncpoint::train_test clouds(const syncpoint::data_request& r) {
  auto make = [](int64_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> noise(0.0f, 1.0f);
    std::uniform_int_distribution<int64_t> pick(0, 3);
    // Labels drawn at random, not i % 4: workers shard by i % workers, and a
    // worker that saw one class only would give BatchNorm one class's statistics.
    return syncpoint::dataset_from(n, {16}, 4, [&](int64_t, float* x) {
      int64_t label = pick(rng);
      for (int k = 0; k < 16; ++k)
        x[k] = (k % 4 == label ? 1.2f : 0.0f) + noise(rng);
      return label;
    });
  };
  return {make(r.train_size, r.seed), make(r.test_size, r.seed + 1)};
}

// A network with BatchNorm: its running statistics travel with the weights
// and the PS combines them (docs/buffers.md). [batch, 16] -> [batch, 4].
struct norm_net : torch::nn::Module {
  torch::nn::Linear in{register_module("in", torch::nn::Linear(16, 64))};
  torch::nn::BatchNorm1d norm{register_module("norm", torch::nn::BatchNorm1d(64))};
  torch::nn::Linear out{register_module("out", torch::nn::Linear(64, 4))};

  torch::Tensor forward(const torch::Tensor& x) { return out(torch::relu(norm(in(x)))); }
};

void report(const syncpoint::run_summary& s, const char* what) {
  std::printf("%s under %s with %d workers: final accuracy %.4f after %llu samples, %.2f s of virtual time\n", what,
              s.protocol.c_str(), s.workers, s.final_accuracy, static_cast<unsigned long long>(s.samples),
              s.run_time_s);
  for (auto& e : s.evals)
    std::printf("  at %6.2f s: %.4f\n", e.t_s, e.accuracy);
}

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
    report(syncpoint::train(cfg).summary, "skip-net");

    // Your data and a BatchNorm net, trained by AdamW on the PS with a cosine
    // schedule after a warmup of 5 % of the run (docs/optimizers.md).
    syncpoint::register_dataset("clouds", clouds);
    syncpoint::register_model("norm-net", [] { return syncpoint::wrap_module(std::make_shared<norm_net>()); });
    cfg.dataset = "clouds";
    cfg.train_limit = 8000;       // a generated set: these are its sizes
    cfg.test_limit = 2000;
    cfg.model = "norm-net";
    cfg.epochs = 3;
    cfg.optimizer = "adamw";
    cfg.lr = 0.01;
    cfg.weight_decay = 0.01;
    cfg.lr_schedule = "cosine";
    cfg.warmup = "0.05";
    cfg.iter_cost_ms = 1;
    report(syncpoint::train(cfg).summary, "norm-net on your data");
    return 0;
  } catch (const syncpoint::config_error& e) {  // an unknown protocol, a bad worker count, ...
    std::fprintf(stderr, "example_own_model: %s\n", e.what());
    return 2;
  }
}
