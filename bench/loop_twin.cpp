// The C++ twin of bench/python_overhead.py's Python loop: the same step in
// LibTorch C++ around a worker_client (pull, copy the weights into the
// module, forward, backward, concatenate the gradient, push), so that the
// Python loop is measured against the same loop in C++ and not against the
// built-in classify loop, which holds its weights in place. Prints one line,
// the run's samples per second.
//
//   bench_loop_twin --loop client|client-flat|builtin --workers 2 --max-time 8
//
// Given a command first, it is the `syncpoint` command knowing these loops
// (command_main): a cluster's head, nodes and submit, for the same loops a
// process a worker.
//
//   bench_loop_twin head --port 0 | node --join HOST:PORT --slots 1 | submit --loop bench-cpp-classify-flat ...
#include "bench/args.hpp"

#include <syncpoint/command.hpp>
#include <syncpoint/train.hpp>
#include <syncpoint/worker_client.hpp>

#include <torch/torch.h>

#include <cstdio>

namespace {

struct mlp_twin : torch::nn::Module {
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  mlp_twin() {
    fc1 = register_module("fc1", torch::nn::Linear(784, 256));
    fc2 = register_module("fc2", torch::nn::Linear(256, 10));
  }
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x.flatten(1)))); }
};

// As python_overhead.py's classify(): 4096 random images, batches drawn with
// a generator seeded per worker, one intra-op thread.
void classify(syncpoint::worker_client& ps) {
  auto job = ps.context();
  torch::set_num_threads(1);
  torch::manual_seed(static_cast<uint64_t>(job.seed * 1000 + job.worker));
  auto net = std::make_shared<mlp_twin>();
  auto params = net->parameters();
  auto x_all = torch::rand({4096, 1, 28, 28});
  auto y_all = torch::randint(0, 10, {4096});
  for (;;) {
    auto w = ps.pull().values;
    auto flat = torch::from_blob(w.data(), {static_cast<int64_t>(w.size())});
    {
      torch::NoGradGuard no_grad;
      int64_t at = 0;
      for (auto& p : params) {
        p.copy_(flat.slice(0, at, at + p.numel()).view_as(p));
        at += p.numel();
      }
    }
    auto i = torch::randint(0, x_all.size(0), {ps.batch()});
    net->zero_grad();
    auto loss = torch::nn::functional::cross_entropy(net->forward(x_all.index_select(0, i)), y_all.index_select(0, i));
    loss.backward();
    std::vector<torch::Tensor> grads;
    for (auto& p : params)
      grads.push_back(p.grad().flatten());
    auto grad = torch::cat(grads);
    std::vector<float> g(grad.data_ptr<float>(), grad.data_ptr<float>() + grad.numel());
    if (ps.push(g, ps.batch(), loss.item<float>()).stop)
      return;
  }
}

// As python_overhead.py's classify_flat(), syncpoint.FlatModule's layout by
// hand: the parameters are views of one weight buffer and their gradients
// views of one gradient buffer, so a step copies the pulled weights in once
// and pushes the gradient buffer as it is.
void classify_flat(syncpoint::worker_client& ps) {
  auto job = ps.context();
  torch::set_num_threads(1);
  torch::manual_seed(static_cast<uint64_t>(job.seed * 1000 + job.worker));
  auto net = std::make_shared<mlp_twin>();
  auto params = net->parameters();
  int64_t size = 0;
  for (auto& p : params)
    size += p.numel();
  auto weights = torch::empty({size});
  auto gradient = torch::zeros({size});
  int64_t at = 0;
  for (auto& p : params) {
    p.set_data(weights.slice(0, at, at + p.numel()).view_as(p));
    p.mutable_grad() = gradient.slice(0, at, at + p.numel()).view_as(p);
    at += p.numel();
  }
  auto x_all = torch::rand({4096, 1, 28, 28});
  auto y_all = torch::randint(0, 10, {4096});
  for (;;) {
    auto w = ps.pull().values;
    {
      torch::NoGradGuard no_grad;
      weights.copy_(torch::from_blob(w.data(), {size}));
    }
    auto i = torch::randint(0, x_all.size(0), {ps.batch()});
    gradient.zero_();
    auto loss = torch::nn::functional::cross_entropy(net->forward(x_all.index_select(0, i)), y_all.index_select(0, i));
    loss.backward();
    std::vector<float> g(gradient.data_ptr<float>(), gradient.data_ptr<float>() + size);
    if (ps.push(g, ps.batch(), loss.item<float>()).stop)
      return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  syncpoint::register_client_loop("bench-cpp-classify", classify);
  syncpoint::register_client_loop("bench-cpp-classify-flat", classify_flat);
  if (argc > 1 && argv[1][0] != '-')  // head, node, submit ...
    return syncpoint::command_main(argc, argv);
  std::string loop = "client";
  int workers = 2;
  double max_time = 8;
  CLI::App app{"samples/s of the mlp's step as a C++ loop around a worker_client (or the built-in loop)",
               "bench_loop_twin"};
  app.add_option("--loop", loop,
                 "client (the twin of the Python loop that copies), client-flat (of the one with FlatModule) or builtin")
    ->capture_default_str()
    ->check(CLI::IsMember({"client", "client-flat", "builtin"}));
  app.add_option("--workers", workers, "workers in the process")->capture_default_str()->check(CLI::Range(1, 64));
  app.add_option("--max-time", max_time, "wall seconds of the run")
    ->capture_default_str()
    ->check(syncpoint::bench::positive());
  if (int rc = syncpoint::bench::parse(app, argc, argv); rc >= 0)
    return rc;
  syncpoint::job_config cfg;
  cfg.protocol = "asp";
  cfg.workers = workers;
  cfg.model = "mlp";
  cfg.clock = syncpoint::clock_kind::real;
  cfg.max_time_s = max_time;
  cfg.seed = 1;
  cfg.progress = false;
  if (loop != "builtin")
    cfg.loop = loop == "client" ? "bench-cpp-classify" : "bench-cpp-classify-flat";
  auto r = syncpoint::train(cfg);
  std::printf("%.1f\n", r.summary.samples_per_s);
}
