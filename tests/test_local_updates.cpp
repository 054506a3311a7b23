// The local-update protocols (issue 58): each one's decisions on scripted
// events; the worker's local work against sums computed by hand (Local SGD
// averages, DiLoCo's outer step is Nesterov on the mean outer gradient); H = 1
// with plain SGD inner steps and gradient pushes is bsp's run to the byte;
// fragments cut on tensor boundaries; and bad options refused by name.
#include "actors/worker_state.hpp"
#include "tests/cli_run.hpp"
#include "tests/protocol_recorder.hpp"
#include <syncpoint/protocol_archive.hpp>
#include <syncpoint/train.hpp>
#include <syncpoint/worker_client.hpp>
#include <syncpoint/worker_loop.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <random>

using namespace syncpoint;
using syncpoint::testing::recorder;
using ids = std::vector<worker_id>;

namespace {

// bsp, with WBSP's local work made explicit: one plain SGD step a gradient, the gradient pushed.
class bsp_local_h1 : public protocol {
 public:
  explicit bsp_local_h1(const protocol_options&) {}
  void on_start(coordinator_api& c) override {
    local_work one;
    one.inner.type = inner_kind::sgd;  // rate 0: the job's
    c.set_mode(ps_mode::buffered);
    for (auto w : c.live_workers()) {
      c.set_local_work(w, one);
      c.release(w);
    }
  }
  void on_push(coordinator_api& c, worker_id) override { round(c); }
  void on_lost(coordinator_api& c, worker_id) override { round(c); }
  void checkpoint(protocol_archive&) override {}

 private:
  static void round(coordinator_api& c) {
    if (!everyone_waiting(c))
      return;
    c.commit();
    for (auto w : c.live_workers())
      c.release(w);
  }
};
SYNCPOINT_REGISTER_PROTOCOL("test-bsp-local-h1", "bsp with one plain local SGD step a gradient", bsp_local_h1);

// A loss whose gradient is known: worker w pulls its weights toward its own
// center, g = θ − c_w, one sample a step.
const std::vector<std::vector<float>> centers{{1, 2, 3}, {-1, 0, 5}};

struct to_center : worker_loop {
  explicit to_center(int w) : c(centers[static_cast<size_t>(w)]) {}
  step_result step(model& m, const step_input&, float* grad) override {
    auto w = m.current_weights();
    for (size_t i = 0; i < w.size(); ++i)
      grad[i] = w[i] - c[i];
    return {0, 1, {}};
  }
  std::vector<float> c;
};

job_config centers_job(const std::string& protocol, int rounds, int h) {
  static bool registered = register_model("test-local-three", [] { return weights_only(3); }) &&
                           register_loop("test-to-center",
                                         [](const loop_context& c) { return std::make_unique<to_center>(c.worker); });
  (void) registered;
  job_config cfg;
  cfg.protocol = protocol;
  cfg.protocol_opts.set("local-steps", h).set("inner-optimizer", "sgd").set("inner-lr", 0.1);
  cfg.workers = 2;
  cfg.model = "test-local-three";
  cfg.loop = "test-to-center";
  cfg.dataset = "synthetic";
  cfg.train_limit = rounds * h * 2;  // one sample a step: the budget is `rounds` rounds
  cfg.test_limit = 10;
  cfg.epochs = 1;
  cfg.eval_every = 0;
  cfg.iter_cost_ms = 1;
  cfg.progress = false;
  return cfg;
}

// Worker w's model after h steps of plain SGD at rate lr toward its center, from `from`.
std::vector<double> local_model(std::vector<double> from, size_t w, int h, double lr) {
  for (int k = 0; k < h; ++k)
    for (size_t i = 0; i < from.size(); ++i)
      from[i] -= lr * (from[i] - centers[w][i]);
  return from;
}

}  // namespace

TEST_CASE("local updates: local-sgd and diloco give every worker H steps and an outer push, and close a round when all pushed") {
  for (auto name : {"local-sgd", "diloco"}) {
    CAPTURE(name);
    protocol_options o;
    o.set("local-steps", 7);
    auto p = make_protocol(name, o);
    recorder c(3);
    c.start(*p);
    CHECK(c.mode == ps_mode::buffered);
    CHECK(c.take() == ids{0, 1, 2});
    for (worker_id w : {0, 1, 2}) {
      auto work = c.local_work_of(w);
      CHECK(work.steps == 7);
      CHECK(work.push == push_kind::outer);
      CHECK(work.fragments == 1);
      CHECK(work.inner.type == (std::string(name) == "diloco" ? inner_kind::adamw : inner_kind::sgd));
    }
    c.push(*p, 0);
    c.push(*p, 2);
    CHECK(c.commits == 0);
    CHECK(c.take().empty());
    c.push(*p, 1);  // the last: one outer step on the mean, everyone pulls it
    CHECK(c.commits == 1);
    CHECK(c.take() == ids{0, 1, 2});
    CHECK(c.pulled == std::vector<bool>{});
    c.push(*p, 0);
    c.push(*p, 1);
    c.lose(*p, 2);  // the round is over the live ones
    CHECK(c.commits == 2);
    CHECK(c.take() == ids{0, 1});
  }
  CHECK(protocol_job_defaults("diloco") ==
        std::map<std::string, std::string>{{"lr", "0.7"}, {"momentum", "0.9"}, {"optimizer", "nesterov"}});
  CHECK(protocol_job_defaults("local-sgd") ==
        std::map<std::string, std::string>{{"lr", "1"}, {"momentum", "0"}, {"optimizer", "sgd"}});
  CHECK(protocol_job_defaults("bsp").empty());
}

TEST_CASE("local updates: streaming-diloco syncs one fragment a round, in the order of their offsets, every H/F steps") {
  protocol_options o;
  o.set("local-steps", 8).set("fragments", 4).set("alpha", 0.25).set("overlap-steps", 1);
  auto p = make_protocol("streaming-diloco", o);
  recorder c(2);
  c.start(*p);
  CHECK(c.mode == ps_mode::buffered);
  CHECK(c.take() == ids{0, 1});
  // Fragment p syncs at steps 2p of each period of 8 (fragment 0 at its end): 1, 2, 3, 0, 1, ...
  for (uint32_t expect : {1u, 2u, 3u, 0u, 1u, 2u}) {
    for (worker_id w : {0, 1}) {
      auto work = c.local_work_of(w);
      CHECK(work.fragment == expect);
      CHECK(work.fragments == 4);
      CHECK(work.steps == 2);
      CHECK(work.alpha == 0.25);
      CHECK(work.overlap == 1);
      CHECK(work.push == push_kind::outer);
    }
    auto commits = c.commits;
    c.push(*p, 1);
    CHECK(c.commits == commits);
    c.push(*p, 0);
    CHECK(c.commits == commits + 1);
    CHECK(c.take() == ids{0, 1});
  }
  // An offset of 1 with F = 3, H = 9: syncs at steps 1, 2 and 9 of each period.
  o.set("local-steps", 9).set("fragments", 3).set("fragment-offset", 1).set("overlap-steps", 0);
  auto q = make_protocol("streaming-diloco", o);
  recorder d(1);
  d.start(*q);
  std::vector<std::pair<uint32_t, uint32_t>> seen;
  for (int i = 0; i < 4; ++i) {
    seen.emplace_back(d.local_work_of(0).fragment, d.local_work_of(0).steps);
    d.take();
    d.push(*q, 0);
  }
  CHECK(seen == std::vector<std::pair<uint32_t, uint32_t>>{{1, 1}, {2, 1}, {0, 7}, {1, 1}});
}

TEST_CASE("local updates: async-diloco releases at once, adds momentum every N pushes, and gives a slow worker fewer steps") {
  protocol_options o;
  o.set("local-steps", 10);
  auto p = make_protocol("async-diloco", o);
  recorder c(3);
  c.start(*p);
  CHECK(c.mode == ps_mode::delayed);
  CHECK(c.take() == ids{0, 1, 2});
  c.push_at(*p, 0, 1.0);  // 10 steps in 1 s
  CHECK(c.take() == ids{0});
  CHECK(c.local_work_of(0).steps == 10);
  c.push_at(*p, 1, 2.0);  // 10 steps in 2 s: half the fastest's speed
  CHECK(c.take() == ids{1});
  CHECK(c.local_work_of(1).steps == 5);
  CHECK(c.commits == 0);
  c.push_at(*p, 2, 4.0);  // a quarter: 2.5 steps, rounded
  CHECK(c.local_work_of(2).steps == 3);
  CHECK(c.commits == 1);  // N = 3 pushes (the workers): one momentum step
  c.push_at(*p, 1, 2.5);  // 5 steps in 0.5 s: now as fast as worker 0
  CHECK(c.local_work_of(1).steps == 10);
  // Off: every worker keeps H; -1: momentum with every push (immediate mode).
  o.set("dynamic-steps", "off").set("delay", -1);
  auto q = make_protocol("async-diloco", o);
  recorder d(2);
  d.start(*q);
  CHECK(d.mode == ps_mode::immediate);
  d.push_at(*q, 0, 1.0);
  d.push_at(*q, 1, 9.0);
  CHECK(d.local_work_of(1).steps == 10);
  CHECK(d.commits == 0);
}

TEST_CASE("local updates: H = 1 with plain SGD inner steps and gradient pushes is bsp's run, to the byte") {
  job_config cfg;
  cfg.workers = 3;
  cfg.model = "mlp";
  cfg.train_limit = 1500;
  cfg.test_limit = 200;
  cfg.epochs = 1;
  cfg.straggler = "2:x3";
  cfg.ps_bandwidth = 400e6;
  cfg.iter_cost_ms = 1;
  cfg.progress = false;
  cfg.protocol = "bsp";
  auto a = train(cfg);
  cfg.protocol = "test-bsp-local-h1";
  auto b = train(cfg);
  REQUIRE(a.trace.size() == b.trace.size());
  for (size_t i = 0; i < a.trace.size(); ++i) {
    CAPTURE(i);
    CHECK(a.trace[i].kind == b.trace[i].kind);
    CHECK(a.trace[i].t0 == b.trace[i].t0);
    CHECK(a.trace[i].t1 == b.trace[i].t1);
    CHECK(a.trace[i].value == b.trace[i].value);
  }
  CHECK(a.final_model.values == b.final_model.values);
  CHECK(a.summary.final_accuracy == b.summary.final_accuracy);
}

TEST_CASE("local updates: Local SGD's outer step is the mean of the workers' local models, computed by hand") {
  auto cfg = centers_job("local-sgd", 2, 3);
  apply_job_defaults(cfg);  // sgd at rate 1 without momentum: the mean
  auto r = train(cfg);
  std::vector<double> theta{0, 0, 0};
  for (int round = 0; round < 2; ++round) {
    auto a = local_model(theta, 0, 3, 0.1), b = local_model(theta, 1, 3, 0.1);
    for (size_t i = 0; i < 3; ++i)
      theta[i] = (a[i] + b[i]) / 2;
  }
  REQUIRE(r.final_model.values.size() == 3);
  CHECK(r.final_model.version == 2);
  for (size_t i = 0; i < 3; ++i)
    CHECK(r.final_model.values.data()[i] == doctest::Approx(theta[i]).epsilon(1e-6));
  uint64_t pushes = 0;
  for (auto& w : r.summary.per_worker)
    pushes += w.iterations;
  CHECK(pushes == 4);
  CHECK(r.summary.samples == 12);
}

TEST_CASE("local updates: DiLoCo's outer step is Nesterov on the mean outer gradient, computed by hand") {
  auto cfg = centers_job("diloco", 3, 4);
  apply_job_defaults(cfg);  // nesterov, rate 0.7, momentum 0.9
  auto r = train(cfg);
  std::vector<double> theta{0, 0, 0}, v{0, 0, 0};
  for (int round = 0; round < 3; ++round) {
    auto a = local_model(theta, 0, 4, 0.1), b = local_model(theta, 1, 4, 0.1);
    for (size_t i = 0; i < 3; ++i) {
      double g = ((theta[i] - a[i]) + (theta[i] - b[i])) / 2;  // the mean Δ
      v[i] = 0.9 * v[i] + g;
      theta[i] -= 0.7 * (g + 0.9 * v[i]);
    }
  }
  REQUIRE(r.final_model.values.size() == 3);
  for (size_t i = 0; i < 3; ++i)
    CHECK(r.final_model.values.data()[i] == doctest::Approx(theta[i]).epsilon(1e-5));
}

TEST_CASE("local updates: fragments are whole tensors, strided or contiguous, with the buffers in every one") {
  struct shaped : model {
    std::vector<size_t> sizes;
    size_t bufs = 0;
    size_t size() const override {
      size_t n = bufs;
      for (auto s : sizes)
        n += s;
      return n;
    }
    size_t buffers() const override { return bufs; }
    std::vector<size_t> tensor_sizes() const override { return sizes; }
    std::vector<float> initial_weights(uint64_t) override { return std::vector<float>(size()); }
    void load(const float*) override {}
    void local_step(const float*, float) override {}
    float gradient(const batch_view&, float*) override { return 0; }
    void predict(const batch_view&, int64_t*) override {}
  };
  shaped m;
  m.sizes = {100, 10, 40, 4, 6};
  local_work w;
  CHECK(fragment_ranges(m, w).empty());  // F = 1: the whole model
  w.fragments = 3;  // strided, tensors of one size: round-robin, tensor i in fragment i mod 3
  m.sizes = {8, 8, 8, 8, 8, 8, 8};
  w.fragment = 0;
  CHECK(fragment_ranges(m, w) == std::vector<uint64_t>{0, 8, 24, 32, 48, 56});
  w.fragment = 2;
  CHECK(fragment_ranges(m, w) == std::vector<uint64_t>{16, 24, 40, 48});
  m.sizes = {40, 10, 40, 4, 6, 30};  // each in turn to the fragment holding least: 40 | 10 4 6 30 | 40
  w.fragment = 0;
  CHECK(fragment_ranges(m, w) == std::vector<uint64_t>{0, 40});
  w.fragment = 1;
  CHECK(fragment_ranges(m, w) == std::vector<uint64_t>{40, 50, 90, 130});
  w.fragment = 2;
  CHECK(fragment_ranges(m, w) == std::vector<uint64_t>{50, 90});
  m.sizes = {100, 10, 40, 4, 6};
  w.fragments = 2;
  w.fragment = 1;
  w.layout = fragment_layout::contiguous;  // 100 | 10 40 4 6: each fragment at least one tensor
  CHECK(fragment_ranges(m, w) == std::vector<uint64_t>{100, 160});
  w.fragments = 5;
  w.fragment = 4;
  CHECK(fragment_ranges(m, w) == std::vector<uint64_t>{154, 160});
  m.bufs = 3;
  w.fragment = 0;
  CHECK(fragment_ranges(m, w) == std::vector<uint64_t>{0, 100, 160, 163});
  w.fragments = 6;
  CHECK_THROWS_AS(fragment_ranges(m, w), std::invalid_argument);
}

TEST_CASE("local updates: streaming-diloco on the mlp in two contiguous fragments pushes about half of diloco's bytes a push, and learns") {
  job_config cfg;
  cfg.workers = 2;
  cfg.model = "mlp";
  cfg.train_limit = 2560;
  cfg.test_limit = 300;
  cfg.epochs = 2;
  cfg.iter_cost_ms = 1;
  cfg.progress = false;
  cfg.protocol = "diloco";
  cfg.protocol_opts.set("local-steps", 8).set("inner-lr", 0.002);
  apply_job_defaults(cfg);
  auto whole = train(cfg);
  cfg.protocol = "streaming-diloco";
  cfg.protocol_opts.set("fragments", 2).set("fragment-layout", "contiguous");
  auto streamed = train(cfg);
  CHECK(whole.summary.final_accuracy > 0.6);
  CHECK(streamed.summary.final_accuracy > 0.6);
  // The mlp's fc1 is 99% of it: contiguous halves are fc1.weight and the rest.
  auto bytes_per_push = [](const run_result& r) {
    uint64_t pushes = 0;
    for (auto& w : r.summary.per_worker)
      pushes += w.iterations;
    return static_cast<double>(r.summary.pushed_bytes) / static_cast<double>(pushes);
  };
  CHECK(bytes_per_push(streamed) < 0.6 * bytes_per_push(whole));
}

TEST_CASE("local updates: bad local-update options are refused with exit 2, naming the option") {
  using syncpoint::testing::check_refused;
  using syncpoint::testing::fast_job;
  check_refused("train --protocol diloco --local-steps 0" + fast_job, "--local-steps");
  check_refused("train --protocol streaming-diloco --alpha 1.5" + fast_job, "--alpha");
  check_refused("train --protocol streaming-diloco --alpha -0.1" + fast_job, "--alpha");
  check_refused("train --protocol streaming-diloco --fragments 9 --model mlp --train-limit 500 --progress=false",
                "--fragments 9 is more than the model's 4 tensors");
  check_refused("train --protocol bsp --inner-optimizer adamw" + fast_job,
                "--inner-optimizer is an option of async-diloco, diloco, local-sgd, streaming-diloco, not of bsp");
  check_refused("train --protocol diloco --inner-optimizer adam" + fast_job, "--inner-optimizer");
  check_refused("train --protocol streaming-diloco --local-steps 8 --fragments 2 --overlap-steps 4" + fast_job,
                "--overlap-steps 4");
}

TEST_CASE("local updates: a blocking loop of the user's own takes its inner steps through the same API, and fits a line") {
  // worker_client's loop pushes a gradient a step; under diloco each push is
  // an inner step on the worker's copy, and pull() shows the loop that copy:
  // the weights move between pushes while the PS's version stays.
  static std::atomic<int> moved_locally{0};
  register_model("test-local-line", [] { return weights_only(2); });
  register_client_loop("test-local-fit-line", [](worker_client& ps) {
    std::mt19937_64 rng(ps.context().seed * 1000 + ps.context().worker);
    std::normal_distribution<float> x_of, noise(0, 0.1f);
    pulled_weights last;
    for (;;) {
      auto now = ps.pull();
      if (now.version == last.version && !last.values.empty() && now.values != last.values)
        ++moved_locally;
      std::vector<float> g{0, 0};
      for (int i = 0; i < 32; ++i) {
        float x = x_of(rng), y = 3 * x + 1 + noise(rng), e = now.values[0] + now.values[1] * x - y;
        g[0] += e / 32, g[1] += e * x / 32;
      }
      last = std::move(now);
      if (ps.push(g, 32).stop)
        return;
    }
  });
  job_config cfg;
  cfg.protocol = "diloco";
  cfg.protocol_opts.set("local-steps", 4).set("inner-optimizer", "sgd").set("inner-lr", 0.1);
  cfg.optimizer = "sgd";  // the outer step: the mean of the workers' models
  cfg.lr = 1;
  cfg.momentum = 0;
  cfg.workers = 2;
  cfg.model = "test-local-line";
  cfg.loop = "test-local-fit-line";
  cfg.dataset = "blank";
  cfg.train_limit = 2000;
  cfg.test_limit = 400;
  cfg.epochs = 10;
  cfg.eval_every = 0;
  cfg.iter_cost_ms = 1;
  cfg.progress = false;
  auto r = train(cfg);
  REQUIRE(r.failures.empty());
  CHECK(moved_locally.load() > 0);
  CHECK(r.final_model.values.vec()[0] == doctest::Approx(1.0f).epsilon(0.02));
  CHECK(r.final_model.values.vec()[1] == doctest::Approx(3.0f).epsilon(0.02));
}

TEST_CASE("local updates: the quorum example merges K reports and those within the grace window, the rest the next time") {
  protocol_options o;
  o.set("quorum", 2).set("grace", 1.0).set("local-steps", 4);
  auto p = make_protocol("quorum", o);
  recorder c(4);
  c.start(*p);
  CHECK(c.mode == ps_mode::buffered);
  CHECK(c.take() == ids{0, 1, 2, 3});
  CHECK(c.local_work_of(2).steps == 4);
  CHECK(c.local_work_of(2).push == push_kind::outer);
  c.push_at(*p, 0, 1.0);
  c.push_at(*p, 1, 2.0);  // K in: the window opens until 3.0
  CHECK(c.commits == 0);
  c.push_at(*p, 2, 2.5);  // within it
  c.advance(*p, 3.0);
  CHECK(c.commits == 1);
  CHECK(c.take() == ids{0, 1, 2});
  c.push_at(*p, 3, 3.5);  // the straggler's report opens the next merge
  c.push_at(*p, 0, 4.0);
  c.advance(*p, 4.6);
  CHECK(c.commits == 1);
  c.push_at(*p, 1, 4.8);
  c.push_at(*p, 2, 4.9);  // every live learner in: at once, before the window ends
  CHECK(c.commits == 2);
  CHECK(c.take() == ids{0, 1, 2, 3});
  c.advance(*p, 10);  // the old window's timer is void
  CHECK(c.commits == 2);
}
