#include "bench/plain_loop.hpp"

#include "models/torch_nets.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <random>

namespace syncpoint::bench {

plain_result plain_torch_loop(const dataset& train, int batch, int64_t samples, double lr,
                              double momentum, uint64_t seed) {
  torch::manual_seed(seed);
  torch::nn::Sequential net(torch::nn::Linear(784, 256), torch::nn::ReLU(), torch::nn::Linear(256, 10));
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(lr).momentum(momentum));
  std::vector<int64_t> order(static_cast<size_t>(train.size));
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<int64_t>(i);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<float> x(static_cast<size_t>(batch * train.dim));
  std::vector<int64_t> y(static_cast<size_t>(batch));
  size_t cursor = 0;
  plain_result r;
  auto t0 = std::chrono::steady_clock::now();
  int64_t done = 0;
  while (done < samples) {
    for (int i = 0; i < batch; ++i) {  // the same gather a syncpoint worker does
      if (cursor == order.size()) {
        std::shuffle(order.begin(), order.end(), rng);
        cursor = 0;
      }
      auto idx = order[cursor++];
      std::copy(train.row(idx), train.row(idx) + train.dim, x.data() + i * train.dim);
      y[static_cast<size_t>(i)] = train.y[static_cast<size_t>(idx)];
    }
    auto xt = torch::from_blob(x.data(), {batch, train.dim});
    auto yt = torch::from_blob(y.data(), {batch}, torch::kLong);
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(net->forward(xt), yt);
    loss.backward();
    opt.step();
    r.final_loss = loss.item<double>();
    done += batch;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.samples_per_s = static_cast<double>(done) / secs;
  return r;
}

plain_result plain_model_loop(const std::string& model, const dataset& train, int batch, int64_t samples, double lr,
                              double momentum, uint64_t seed, const std::string& device) {
  torch::manual_seed(seed);
  model_input in;
  in.shape = train.shape;
  in.classes = train.classes;
  auto net = make_torch_net(model, in);
  torch::Device on(device);
  net.module->to(on);
  net.module->train();
  torch::optim::SGD opt(net.module->parameters(), torch::optim::SGDOptions(lr).momentum(momentum));
  std::vector<int64_t> order(static_cast<size_t>(train.size));
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<int64_t>(i);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<int64_t> sizes{batch};
  sizes.insert(sizes.end(), train.shape.begin(), train.shape.end());
  auto pinned = !on.is_cpu();
  auto x = torch::empty(sizes, torch::TensorOptions().pinned_memory(pinned));
  auto y = torch::empty({batch}, torch::TensorOptions().dtype(torch::kLong).pinned_memory(pinned));
  size_t cursor = 0;
  plain_result r;
  auto t0 = std::chrono::steady_clock::now();
  int64_t done = 0;
  while (done < samples) {
    for (int i = 0; i < batch; ++i) {  // the same gather a syncpoint worker does
      if (cursor == order.size()) {
        std::shuffle(order.begin(), order.end(), rng);
        cursor = 0;
      }
      auto idx = order[cursor++];
      std::copy(train.row(idx), train.row(idx) + train.dim, x.data_ptr<float>() + i * train.dim);
      y.data_ptr<int64_t>()[i] = train.y[static_cast<size_t>(idx)];
    }
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(net.forward(x.to(on, /*non_blocking=*/true)),
                                                     y.to(on, /*non_blocking=*/true));
    loss.backward();
    opt.step();
    r.final_loss = loss.item<double>();  // waits for the step, as a worker waits for its gradient
    done += batch;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.samples_per_s = static_cast<double>(done) / secs;
  return r;
}

copy_times time_copies(int64_t values, const std::string& device, int repeat) {
  torch::Device on(device);
  auto on_device = torch::zeros({values}, torch::TensorOptions().device(on));
  auto pinned = torch::zeros({values}, torch::TensorOptions().pinned_memory(true));
  auto pageable = torch::zeros({values});
  auto median_us = [&](auto copy) {
    std::vector<double> us;
    for (int k = 0; k < repeat + 1; ++k) {  // the first warms the path up
      torch::cuda::synchronize();
      auto t0 = std::chrono::steady_clock::now();
      copy();
      torch::cuda::synchronize();
      if (k > 0)
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
  };
  copy_times t;
  t.to_host_pinned = median_us([&] { pinned.copy_(on_device); });
  t.to_host_pageable = median_us([&] { pageable.copy_(on_device); });
  t.to_device_pinned = median_us([&] { on_device.copy_(pinned, /*non_blocking=*/true); });
  t.to_device_pageable = median_us([&] { on_device.copy_(pageable); });
  return t;
}

}  // namespace syncpoint::bench
