// A user brings their own torch::nn::Module: wrapped, registered, trained.
#include <syncpoint/torch_model.hpp>
#include <syncpoint/train.hpp>
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

namespace {

struct tiny_net : torch::nn::Module {
  torch::nn::Linear fc{register_module("fc", torch::nn::Linear(784, 10))};
  torch::Tensor forward(const torch::Tensor& x) { return fc(x.flatten(1)); }
};

}  // namespace

TEST_CASE("models: any torch::nn::Module trains under syncpoint once registered") {
  REQUIRE(syncpoint::register_model("tiny-net", [] {
    return syncpoint::wrap_module(std::make_shared<tiny_net>());
  }));
  CHECK_FALSE(syncpoint::register_model("tiny-net", [] { return syncpoint::make_softmax_model(); }));
  CHECK(syncpoint::make_model("tiny-net")->size() == 7850);
  auto cfg = syncpoint::testing::small_job("asp");
  cfg.workers = 3;
  cfg.model = "tiny-net";
  cfg.train_limit = 3000;
  auto s = syncpoint::train(cfg).summary;
  CHECK(s.final_accuracy > 0.85);
  CHECK(s.samples >= 6000);
}
