// Model buffers (BatchNorm's running statistics): carried at the end of the
// weights, combined at the PS by the weight rule (docs/buffers.md), used by
// the evaluation, kept by checkpoints.
#include "tests/bn_net.hpp"  // first: doctest's CHECK replaces LibTorch's (glog's)

#include "actors/parameter_server.hpp"
#include <syncpoint/train.hpp>
#include "tests/ps_fixture.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

using namespace syncpoint;
using syncpoint::testing::check_close;

namespace {

// A PS of 3 parameters and 2 buffers, lr 0.1, no momentum or decay, 2 workers.
testing::fixture buffered_ps(momentum_rule rule = momentum_rule::plain) {
  return testing::fixture(2, 0.0, 0.0, rule, {1.0f, 2.0f, 3.0f, 0.0f, 1.0f}, 2);
}

}  // namespace

TEST_CASE("buffers: a BSP round takes the mean of its pushes' buffers, and no optimizer step moves them") {
  auto f = buffered_ps();
  (*f.self)->send(f.ps, mode_atom::value, static_cast<uint8_t>(ps_mode::buffered));
  REQUIRE(!f.push(0, {1, 2, 3, 0.5f, 2.0f}));  // gradients 1, 2, 3; buffers 0.5 and 2
  REQUIRE(!f.push(1, {3, 2, 1, 1.5f, 4.0f}));
  (*f.self)->send(f.ps, commit_atom::value);
  // the parameters: w - 0.1 * mean gradient (2, 2, 2); the buffers: the mean (1, 3)
  check_close(f.pull(1).values.vec(), {0.8, 1.8, 2.8, 1.0, 3.0});
}

TEST_CASE("buffers: a push applied on arrival moves them its weight of the way to its own") {
  SUBCASE("plain rule: its share") {
    auto f = buffered_ps();  // immediate mode
    REQUIRE(!f.push(0, {0, 0, 0, 2.0f, 3.0f}));
    check_close(f.pull(1).values.vec(), {1, 2, 3, 1.0, 2.0});  // 0 + 1/2 (2 - 0), 1 + 1/2 (3 - 1)
    REQUIRE(!f.push(1, {0, 0, 0, 4.0f, 2.0f}));
    check_close(f.pull(2).values.vec(), {1, 2, 3, 2.5, 2.0});
  }
  SUBCASE("adjusted rule: a stale push weighs 1/(1 + tau/n) of its share") {
    auto f = buffered_ps(momentum_rule::adjusted);
    REQUIRE(!f.push(0, {0, 0, 0, 2.0f, 3.0f}));  // fresh: weight 1/2
    check_close(f.pull(1).values.vec(), {1, 2, 3, 1.0, 2.0});
    REQUIRE(!f.push(1, {0, 0, 0, 4.0f, 2.0f}, /*base=*/0));  // tau 1: weight 1/2 / 1.5 = 1/3
    check_close(f.pull(2).values.vec(), {1, 2, 3, 2.0, 2.0});
  }
}

TEST_CASE("buffers: a torch module's BatchNorm statistics ride at the end of its weights") {
  auto m = make_model(testing::bn_net_model());
  REQUIRE(m->buffers() == 64);  // running mean and variance of 32 features; the batch count stays local
  REQUIRE(m->size() == 784 * 32 + 32 + 32 + 32 + 32 * 10 + 10 + 64);
  auto w = m->initial_weights(1);
  const size_t p = m->size() - m->buffers();
  CHECK(w[p - 10 - 320 - 1] == 0.0f);  // BatchNorm's shift as torch makes it
  CHECK(w[p - 10 - 320 - 33] == 1.0f);  // ... and its scale
  for (size_t i = 0; i < 32; ++i) {
    CHECK(w[p + i] == 0.0f);        // running mean
    CHECK(w[p + 32 + i] == 1.0f);   // running variance
  }
  auto data = make_synthetic(256, 256, 1);
  std::vector<float> g(m->size());
  m->load(w.data());
  m->gradient(data.train.view(0, 64), g.data());
  // The forward pass moved the statistics 0.1 of the way to the batch's: they are in the gradient's place.
  bool moved = false;
  for (size_t i = 0; i < 64; ++i)
    moved = moved || g[p + i] != w[p + i];
  CHECK(moved);
  // Predictions use the statistics they are given: other statistics, other predictions.
  std::vector<int64_t> a(256), b(256);
  m->load(w.data());
  m->predict(data.test.view(0, 256), a.data());
  auto shifted = w;
  for (size_t i = 0; i < 32; ++i)
    shifted[p + i] = 5.0f;  // a running mean far from the data's
  m->load(shifted.data());
  m->predict(data.test.view(0, 256), b.data());
  CHECK(a != b);
}

TEST_CASE("buffers: trained under bsp and asp, the PS's statistics move, and the evaluation reads them") {
  for (auto protocol : {"bsp", "asp"}) {
    CAPTURE(protocol);
    auto cfg = testing::small_job(protocol);
    cfg.model = testing::bn_net_model();
    cfg.lr = 0.05;
    auto run = train(cfg);
    auto m = make_model(cfg.model);
    const size_t p = m->size() - m->buffers();
    auto& w = run.final_model.values.vec();
    auto initial = m->initial_weights(cfg.seed);
    bool moved = false;
    for (size_t i = p; i < w.size(); ++i)
      moved = moved || w[i] != initial[i];
    CHECK(moved);
    for (size_t i = p + 32; i < w.size(); ++i)
      CHECK(w[i] > 0);  // variances
    // The final accuracy is the PS's model with the PS's statistics.
    auto data = make_synthetic(cfg.train_limit, cfg.test_limit, cfg.seed);
    CHECK(accuracy(*m, w.data(), data.test) == run.summary.final_accuracy);
    CHECK(run.summary.final_accuracy > 0.8);
    // ... which matter: with torch's initial statistics the same parameters predict otherwise.
    auto reset = w;
    std::copy(initial.begin() + static_cast<std::ptrdiff_t>(p), initial.end(), reset.begin() + static_cast<std::ptrdiff_t>(p));
    std::vector<int64_t> with_ps(static_cast<size_t>(data.test.size)), with_reset(with_ps.size());
    m->load(w.data());
    m->predict(data.test.view(0, data.test.size), with_ps.data());
    m->load(reset.data());
    m->predict(data.test.view(0, data.test.size), with_reset.data());
    CHECK(with_ps != with_reset);
  }
}
