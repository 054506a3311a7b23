#include "bench/plain_loop.hpp"

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

}  // namespace syncpoint::bench
