// The PS's optimizers against torch::optim on the same model, data and seed;
// each learning-rate schedule's rate at given sample counts, by hand; clipping
// by global norm; and the refusals of options that cannot run.
#include <torch/torch.h>  // first: doctest's CHECK replaces LibTorch's (glog's)

#include "core/optimizer.hpp"
#include <syncpoint/dataset.hpp>
#include <syncpoint/model.hpp>
#include "models/shard_sampler.hpp"
#include <syncpoint/train.hpp>
#include "runtime/job/job_parts.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>

using namespace syncpoint;

namespace {

// One worker on 3200 synthetic examples, 2 epochs: 100 updates of batch 64.
job_config one_worker(const std::string& protocol, const std::string& optimizer) {
  auto cfg = testing::small_job(protocol);
  cfg.workers = 1;
  cfg.model = "mlp";
  cfg.train_limit = 3200;
  cfg.test_limit = 200;
  cfg.optimizer = optimizer;
  cfg.lr = optimizer == "adam" || optimizer == "adamw" ? 1e-3 : 0.05;
  return cfg;
}

// The same run as a plain loop: syncpoint's model computes each gradient on
// the worker's batches (shard_sampler, the job's seed), and a torch optimizer
// from `make` takes it; `lr_at(k)` is the rate of update k (from 1).
std::vector<float> oracle(const job_config& cfg, int updates,
                          const std::function<std::unique_ptr<torch::optim::Optimizer>(torch::Tensor)>& make,
                          const std::function<double(int)>& lr_at) {
  auto data = make_synthetic(cfg.train_limit, cfg.test_limit, cfg.seed);
  auto m = make_model(cfg.model);
  auto w = m->initial_weights(cfg.seed);
  auto p = torch::from_blob(w.data(), {static_cast<int64_t>(w.size())}).clone();
  auto opt = make(p);
  shard_sampler sampler(data.train.size, 1, 0, cfg.seed);
  std::vector<float> x(static_cast<size_t>(cfg.batch * data.train.dim)), g(w.size());
  std::vector<int64_t> y(static_cast<size_t>(cfg.batch));
  for (int k = 1; k <= updates; ++k) {
    for (int i = 0; i < cfg.batch; ++i) {
      auto idx = sampler.next();
      std::copy(data.train.row(idx), data.train.row(idx) + data.train.dim, x.data() + i * data.train.dim);
      y[static_cast<size_t>(i)] = data.train.y[static_cast<size_t>(idx)];
    }
    m->load(p.data_ptr<float>());
    m->gradient({x.data(), y.data(), cfg.batch, data.train.dim}, g.data());
    if (cfg.clip_norm > 0) {
      p.mutable_grad() = torch::from_blob(g.data(), {static_cast<int64_t>(g.size())}).clone();
      torch::nn::utils::clip_grad_norm_(p, cfg.clip_norm);
    } else {
      p.mutable_grad() = torch::from_blob(g.data(), {static_cast<int64_t>(g.size())}).clone();
    }
    for (auto& group : opt->param_groups())
      group.options().set_lr(lr_at(k));
    opt->step();
  }
  return {p.data_ptr<float>(), p.data_ptr<float>() + p.numel()};
}

// Within float tolerance: every weight within 1e-5 + 1e-4 of its size.
void close_to(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double off = std::abs(static_cast<double>(got[i]) - want[i]) / (1e-5 + 1e-4 * std::abs(want[i]));
    if (off > worst) {
      worst = off;
      at = i;
    }
  }
  INFO("worst weight " << at << ": " << got[at] << " against " << want[at]);
  CHECK(worst <= 1.0);
}

std::unique_ptr<torch::optim::Optimizer> torch_adam(torch::Tensor p, const job_config& cfg) {
  auto o = torch::optim::AdamOptions(cfg.lr).betas({cfg.beta1, cfg.beta2}).eps(cfg.eps).weight_decay(cfg.weight_decay);
  return std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{p}, o);
}

std::unique_ptr<torch::optim::Optimizer> torch_adamw(torch::Tensor p, const job_config& cfg) {
  auto o = torch::optim::AdamWOptions(cfg.lr).betas({cfg.beta1, cfg.beta2}).eps(cfg.eps).weight_decay(cfg.weight_decay);
  return std::make_unique<torch::optim::AdamW>(std::vector<torch::Tensor>{p}, o);
}

std::unique_ptr<torch::optim::Optimizer> torch_sgd(torch::Tensor p, const job_config& cfg, bool nesterov) {
  auto o = torch::optim::SGDOptions(cfg.lr).momentum(cfg.momentum).weight_decay(cfg.weight_decay).nesterov(nesterov);
  return std::make_unique<torch::optim::SGD>(std::vector<torch::Tensor>{p}, o);
}

lr_schedule job_schedule(const job_config& cfg) {
  return make_plan(cfg, {cfg.train_limit, 1}).schedule;
}

}  // namespace

TEST_CASE("optimizers: one worker with adam follows torch::optim::Adam to float tolerance, per push and per round") {
  for (auto protocol : {"asp", "bsp"}) {
    CAPTURE(protocol);
    auto cfg = one_worker(protocol, "adam");
    cfg.beta2 = 0.99;
    // L2, added to the gradient. Kept small: where it cancels a gradient,
    // Adam's normalized step turns rounding into a full step's difference.
    cfg.weight_decay = 1e-3;
    auto run = train(cfg);
    REQUIRE(run.final_model.version == 100);
    close_to(run.final_model.values.vec(),
             oracle(cfg, 100, [&](torch::Tensor p) { return torch_adam(p, cfg); }, [&](int) { return cfg.lr; }));
  }
}

TEST_CASE("optimizers: adamw's decay is decoupled, and a cosine schedule with warmup is followed update by update") {
  auto cfg = one_worker("asp", "adamw");
  cfg.weight_decay = 0.05;
  cfg.lr_schedule = "cosine";
  cfg.warmup = "0.1";
  auto schedule = job_schedule(cfg);
  REQUIRE(schedule.warmup == 640);
  REQUIRE(schedule.horizon == 6400);
  auto run = train(cfg);
  REQUIRE(run.final_model.version == 100);
  close_to(run.final_model.values.vec(), oracle(cfg, 100, [&](torch::Tensor p) { return torch_adamw(p, cfg); },
                                                [&](int k) { return schedule.at(static_cast<uint64_t>(k) * 64); }));
  // The trace has the rate as it moved: rising through the warmup, then down to 0.
  std::vector<double> rates;
  for (auto& e : run.trace)
    if (e.kind == "lr")
      rates.push_back(e.value);
  REQUIRE(rates.size() >= 20);
  CHECK(rates.front() == doctest::Approx(1e-3 * 64 / 640));
  auto peak = std::max_element(rates.begin(), rates.end());
  CHECK(*peak == doctest::Approx(1e-3).epsilon(0.02));
  CHECK(std::is_sorted(rates.begin(), peak + 1));
  CHECK(std::is_sorted(peak, rates.end(), std::greater<>()));
  CHECK(rates.back() < 1e-5);
}

TEST_CASE("optimizers: nesterov and heavy-ball momentum follow torch::optim::SGD, step decay included") {
  for (bool nesterov : {false, true}) {
    CAPTURE(nesterov);
    auto cfg = one_worker("bsp", nesterov ? "nesterov" : "sgd");
    cfg.weight_decay = 5e-4;
    cfg.lr_schedule = "step";
    cfg.lr_milestones = {0.5, 1.5};
    cfg.lr_gamma = 0.2;
    auto schedule = job_schedule(cfg);
    auto run = train(cfg);
    close_to(run.final_model.values.vec(), oracle(cfg, 100, [&](torch::Tensor p) { return torch_sgd(p, cfg, nesterov); },
                                                  [&](int k) { return schedule.at(static_cast<uint64_t>(k) * 64); }));
  }
}

TEST_CASE("optimizers: --clip-norm scales each pushed gradient to the norm, as clip_grad_norm_") {
  // 20 updates: torch sums the norm in float, the worker in double, and the
  // clipped steps, near the norm, then part by more than float tolerance.
  auto cfg = one_worker("asp", "sgd");
  cfg.clip_norm = 0.5;
  cfg.epochs = 20 * 64.0 / 3200;
  auto run = train(cfg);
  REQUIRE(run.final_model.version == 20);
  auto clipped = oracle(cfg, 20, [&](torch::Tensor p) { return torch_sgd(p, cfg, false); }, [&](int) { return cfg.lr; });
  close_to(run.final_model.values.vec(), clipped);
  cfg.clip_norm = 0;  // and clipping changed the run
  auto free = oracle(cfg, 20, [&](torch::Tensor p) { return torch_sgd(p, cfg, false); }, [&](int) { return cfg.lr; });
  CHECK(free != clipped);
}

TEST_CASE("schedules: each shape's rate at given sample counts, by hand") {
  // step: 0.1, times 0.5 at epochs 1 and 2 of 1000 samples
  auto step = make_lr_schedule(0.1, "step", {1, 2}, 0.5, "", 0, 1000);
  CHECK(step.at(0) == 0.1);
  CHECK(step.at(999) == 0.1);
  CHECK(step.at(1000) == doctest::Approx(0.05));
  CHECK(step.at(1999) == doctest::Approx(0.05));
  CHECK(step.at(2000) == doctest::Approx(0.025));
  CHECK(step.at(1000000) == doctest::Approx(0.025));
  // cosine: 0.1 to 0.01 over 1000 samples
  auto cosine = make_lr_schedule(0.1, "cosine", {}, 0.1, "", 1000, 500, 0, 0.01);
  CHECK(cosine.at(0) == doctest::Approx(0.1));
  CHECK(cosine.at(500) == doctest::Approx(0.055));
  CHECK(cosine.at(250) == doctest::Approx(0.01 + 0.09 * 0.5 * (1 + std::cos(M_PI / 4))));
  CHECK(cosine.at(1000) == doctest::Approx(0.01));
  CHECK(cosine.at(5000) == doctest::Approx(0.01));
  // a warmup share: 10 % of 1000 samples from 0, then the cosine over the other 900
  auto warm = make_lr_schedule(0.1, "cosine", {}, 0.1, "0.1", 1000, 500);
  CHECK(warm.warmup == 100);
  CHECK(warm.at(0) == 0);
  CHECK(warm.at(50) == doctest::Approx(0.05));
  CHECK(warm.at(100) == doctest::Approx(0.1));
  CHECK(warm.at(550) == doctest::Approx(0.05));
  // a warmup in samples from a quarter of the rate, on a constant rate
  auto constant = make_lr_schedule(0.1, "constant", {}, 0.1, "200", 0, 500, 0.25);
  CHECK(constant.varies());
  CHECK(constant.at(100) == doctest::Approx(0.1 * (0.25 + 0.75 * 0.5)));
  CHECK(constant.at(200) == 0.1);
  CHECK_FALSE(make_lr_schedule(0.1, "constant", {}, 0.1, "", 0, 500).varies());
  CHECK(describe(step) == "step 0.10000000000000001 x0.5 at 1000,2000 samples");
}

TEST_CASE("schedules: --lr-scaling linear multiplies the rate by workers x batch / 256, and warms up from the unscaled one") {
  auto cfg = testing::small_job("bsp");
  cfg.workers = 8;
  cfg.batch = 64;
  cfg.lr = 0.1;
  cfg.lr_scaling = "linear";
  cfg.warmup = "0.25";  // of 2 epochs of 4000
  auto s = job_schedule(cfg);
  CHECK(s.base == doctest::Approx(0.2));
  CHECK(s.warmup == 2000);
  CHECK(s.at(0) == doctest::Approx(0.1));
  CHECK(s.at(1000) == doctest::Approx(0.15));
  CHECK(s.at(2000) == doctest::Approx(0.2));
}

TEST_CASE("optimizers: options that cannot run are refused, naming the option") {
  auto refused = [](job_config cfg, const std::string& words) {
    CAPTURE(words);
    try {
      train(cfg);
      FAIL("not refused");
    } catch (const config_error& e) {
      CHECK(std::string(e.what()).find(words) != std::string::npos);
    }
  };
  auto cfg = testing::small_job("bsp");
  auto with = [&](auto change) {
    auto c = cfg;
    change(c);
    return c;
  };
  refused(with([](job_config& c) { c.optimizer = "lamb"; }), "--optimizer must be sgd, nesterov, adam or adamw, not 'lamb'");
  refused(with([](job_config& c) { c.optimizer = "nesterov"; c.momentum = 0; }), "nesterov needs --momentum > 0");
  refused(with([](job_config& c) { c.beta2 = 1; }), "--beta2 must be in [0, 1)");
  refused(with([](job_config& c) { c.eps = 0; }), "--eps must be a positive number");
  refused(with([](job_config& c) { c.lr_schedule = "linear"; }), "--lr-schedule must be constant, step or cosine, not 'linear'");
  refused(with([](job_config& c) { c.lr_schedule = "step"; }), "--lr-schedule step needs --lr-milestones");
  refused(with([](job_config& c) { c.lr_schedule = "step"; c.lr_milestones = {2, 1}; }), "ascending order");
  refused(with([](job_config& c) { c.lr_milestones = {1}; }), "--lr-milestones goes with --lr-schedule step");
  refused(with([](job_config& c) { c.lr_schedule = "cosine"; c.epochs = 0; c.max_time_s = 5; }),
          "--lr-schedule cosine needs the run's length");
  refused(with([](job_config& c) { c.warmup = "soon"; }), "--warmup 'soon' is not a share");
  refused(with([](job_config& c) { c.warmup = "2.5"; }), "a number of samples is a whole number");
  refused(with([](job_config& c) { c.lr_schedule = "cosine"; c.warmup = "9000"; }), "--warmup is as long as the run");
  refused(with([](job_config& c) { c.lr_gamma = 0; }), "--lr-gamma must be in (0, 1]");
  refused(with([](job_config& c) { c.lr_scaling = "sqrt"; }), "--lr-scaling must be none or linear");
  refused(with([](job_config& c) { c.clip_norm = -1; }), "--clip-norm must be >= 0");
}
