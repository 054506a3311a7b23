// Peak memory against model size (docs/performance.md, "Memory"): one
// training run per process (forked), virtual clock, 1, 4 and 16 workers, for
// the mlp and for a wide MLP (784-4096-10, 13 MB) registered here, so that the
// model's copies stand out of the ~180 MB the libraries take. Peak RSS comes
// from the kernel (getrusage of the child). Prints the RSS and the cost of
// each added worker, and of the PS side, in copies of the model.
//
//   build/bench_memory
#include <syncpoint/torch_model.hpp>
#include <syncpoint/train.hpp>
#include "runtime/studies/simulate.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using namespace syncpoint;

namespace {

struct wide_mlp : torch::nn::Module {
  torch::nn::Linear fc1{register_module("fc1", torch::nn::Linear(784, 4096))};
  torch::nn::Linear fc2{register_module("fc2", torch::nn::Linear(4096, 10))};
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x.flatten(1)))); }
};

// Peak RSS in bytes of `run` in a child process; -1 if it failed.
double peak_rss(const std::function<void()>& run) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    try {
      run();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_memory: %s\n", e.what());
      _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  rusage ru{};
  if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return -1;
  return static_cast<double>(ru.ru_maxrss) * 1024.0;
}

job_config job(const std::string& model, int workers, const std::string& protocol) {
  job_config cfg;
  cfg.protocol = protocol;
  cfg.model = model;
  cfg.workers = workers;
  cfg.dataset = "synthetic";
  cfg.train_limit = 2048;
  cfg.test_limit = 256;
  cfg.epochs = 1;
  cfg.eval_every = 0;
  cfg.iter_cost_ms = 1;
  cfg.straggler = "0:x2";  // some rounds hold pushes: the buffers are in use
  cfg.progress = false;
  return cfg;
}

}  // namespace

int main() {
  register_model("wide-mlp", [] { return wrap_module(std::make_shared<wide_mlp>()); });
  const std::vector<int> workers{1, 4, 16};
  std::printf("peak RSS of one training run per process (virtual clock, synthetic data: 2048 examples, 1 epoch)\n\n");
  std::printf("| model | protocol | model MB | simulate MB |");
  for (int w : workers)
    std::printf(" %d worker%s MB |", w, w == 1 ? "" : "s");
  std::printf(" per added worker (model copies) | PS side with 1 worker (model copies) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (std::string model : {"mlp", "wide-mlp"})
    for (std::string protocol : {"bsp", "asp", "wbsp"}) {
      double bytes = static_cast<double>(make_model(model)->size() * sizeof(float));
      std::vector<double> rss;
      for (int w : workers)
        rss.push_back(peak_rss([&] { train(job(model, w, protocol)); }));
      // The same process with nothing computed: the libraries and actors, no model state.
      double base = peak_rss([&] { simulate(job("mlp", 1, protocol), 32); });
      std::printf("| %s | %s | %.2f | %.1f |", model.c_str(), protocol.c_str(), bytes / 1e6, base / 1e6);
      for (double r : rss)
        std::printf(" %.1f |", r / 1e6);
      std::printf(" %.2f | %.2f |\n", (rss.back() - rss.front()) / (workers.back() - workers.front()) / bytes,
                  (rss.front() - base) / bytes);
    }
  std::printf("\nA worker holds its model (parameters as views of the pulled weights), a gradient and a batch;\n"
              "the PS the weights, the velocity, and a round's sum (bsp) or the published copy (wbsp).\n");
  return 0;
}
