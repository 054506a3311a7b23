// Model buffers (BatchNorm's running statistics): carried at the end of the
// weights, combined at the PS by the weight rule (docs/buffers.md), used by
// the evaluation, kept by checkpoints.
#include "tests/bn_net.hpp"  // first: doctest's CHECK replaces LibTorch's (glog's)

#include "actors/parameter_server.hpp"
#include "runtime/job.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <chrono>

using namespace syncpoint;
using namespace std::chrono_literals;

namespace {

// A PS of 3 parameters and 2 buffers, lr 0.1, no momentum, 2 workers.
struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<caf::scoped_actor> self;
  ps_actor ps;

  explicit fixture(momentum_rule rule = momentum_rule::plain) {
    register_messages(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    self = std::make_unique<caf::scoped_actor>(*sys);
    ps_config c{{1.0f, 2.0f, 3.0f, 0.0f, 1.0f}, 0.1, 0.0, 0.0, 2, tracer_actor{}, sys->clock().now(), 0, 0, rule};
    c.buffers = 2;
    ps = spawn_parameter_server(*sys, std::move(c));
  }
  ~fixture() { (*self)->send_exit(ps, caf::exit_reason::user_shutdown); }

  void push(worker_id w, std::vector<float> g, uint64_t base = 0, uint32_t samples = 8) {
    (*self)->request(ps, 5s, push_atom::value, gradient_push{w, 1, base, samples, std::move(g)})
      .receive([](const proceed&) {}, [&](caf::error& e) { FAIL("push refused: " << sys->render(e)); });
  }
  std::vector<float> pull(uint64_t min_version = 0) {
    std::vector<float> out;
    (*self)->request(ps, 5s, pull_atom::value, min_version)
      .receive([&](weights& w) { out = w.values.vec(); }, [&](caf::error& e) { FAIL(sys->render(e)); });
    return out;
  }
};

void check_close(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
}

}  // namespace

TEST_CASE("buffers: a BSP round takes the mean of its pushes' buffers, and no optimizer step moves them") {
  fixture f;
  (*f.self)->send(f.ps, mode_atom::value, static_cast<uint8_t>(ps_mode::buffered));
  f.push(0, {1, 2, 3, 0.5f, 2.0f});  // gradients 1, 2, 3; buffers 0.5 and 2
  f.push(1, {3, 2, 1, 1.5f, 4.0f});
  (*f.self)->send(f.ps, commit_atom::value);
  // the parameters: w - 0.1 * mean gradient (2, 2, 2); the buffers: the mean (1, 3)
  check_close(f.pull(1), {0.8, 1.8, 2.8, 1.0, 3.0});
}

TEST_CASE("buffers: a push applied on arrival moves them its weight of the way to its own") {
  SUBCASE("plain rule: its share") {
    fixture f;  // immediate mode
    f.push(0, {0, 0, 0, 2.0f, 3.0f});
    check_close(f.pull(1), {1, 2, 3, 1.0, 2.0});  // 0 + 1/2 (2 - 0), 1 + 1/2 (3 - 1)
    f.push(1, {0, 0, 0, 4.0f, 2.0f});
    check_close(f.pull(2), {1, 2, 3, 2.5, 2.0});
  }
  SUBCASE("adjusted rule: a stale push weighs 1/(1 + tau/n) of its share") {
    fixture f(momentum_rule::adjusted);
    f.push(0, {0, 0, 0, 2.0f, 3.0f});  // fresh: weight 1/2
    check_close(f.pull(1), {1, 2, 3, 1.0, 2.0});
    f.push(1, {0, 0, 0, 4.0f, 2.0f}, /*base=*/0);  // tau 1: weight 1/2 / 1.5 = 1/3
    check_close(f.pull(2), {1, 2, 3, 2.0, 2.0});
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
