// A loop of a LibTorch model, a loss and a batch source
// (<syncpoint/torch_loop.hpp>): with the cross-entropy and the job's data set
// it is the built-in worker, byte for byte; with a source of its own it
// trains on what the source makes and resumes exactly.
#include "tests/bn_net.hpp"  // first: doctest's CHECK replaces LibTorch's (glog's)

#include <syncpoint/torch_loop.hpp>
#include <syncpoint/train.hpp>
#include "tests/helpers.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <numeric>
#include <random>
#include <sstream>

using namespace syncpoint;

namespace {

std::string cross_entropy_loop() {
  static bool registered = [] {
    torch_loop_spec spec;
    spec.loss = [](torch_model& m, const torch_batch& b) {
      return torch::nn::functional::cross_entropy(m.forward(b.data), b.target);
    };
    spec.evaluate = [](torch_model& m, const dataset& test, const loop_context&) {
      return std::vector<metric>{{"accuracy", accuracy(m, nullptr, test)}};
    };
    return register_torch_loop("test-cross-entropy", spec);
  }();
  (void) registered;
  return "test-cross-entropy";
}

job_config mlp_job(const std::string& protocol) {
  job_config cfg;
  cfg.protocol = protocol;
  cfg.workers = 3;
  cfg.model = "mlp";
  cfg.train_limit = 2400;
  cfg.test_limit = 300;
  cfg.epochs = 1;
  cfg.eval_every = 0.5;
  cfg.straggler = "2:x3";
  cfg.iter_cost_ms = 0.7;
  cfg.progress = false;
  return cfg;
}

// Points on two noisy lines, made by the source itself: y = 2x + 1 or y = -x, labelled 0 or 1.
struct two_lines : batch_source {
  std::mt19937_64 rng;
  uint64_t drawn = 0;
  explicit two_lines(const loop_context& c) : rng(c.seed * 31 + static_cast<uint64_t>(c.worker)) {}
  torch_batch next(int64_t size) override {
    std::normal_distribution<float> x_of, noise(0, 0.05f);
    std::bernoulli_distribution which;
    auto x = torch::empty({size, 2});
    auto y = torch::empty({size}, torch::kLong);
    for (int64_t i = 0; i < size; ++i) {
      bool second = which(rng);
      float a = x_of(rng);
      x[i][0] = a;
      x[i][1] = (second ? -a : 2 * a + 1) + noise(rng);
      y[i] = second ? 1 : 0;
    }
    drawn += static_cast<uint64_t>(size);
    return {x, y};
  }
  loop_state save() const override {
    std::ostringstream out;
    out << rng;
    return {drawn, out.str()};
  }
  void restore(const loop_state& s) override {
    std::istringstream in(s.bytes);
    in >> rng;
    drawn = s.position;
  }
};

struct line_net : torch::nn::Module {
  torch::nn::Linear fc1{register_module("fc1", torch::nn::Linear(2, 16))};
  torch::nn::Linear fc2{register_module("fc2", torch::nn::Linear(16, 2))};
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::tanh(fc1(x))); }
};

// Three ids of 200 an example, labelled 1 when most of them are odd: what a
// mean of the ids' rows learns once each row has learned its id's parity.
struct odd_ids : batch_source {
  std::mt19937_64 rng;
  uint64_t drawn = 0;
  explicit odd_ids(const loop_context& c) : rng(c.seed * 131 + static_cast<uint64_t>(c.worker)) {}
  torch_batch next(int64_t size) override {
    std::uniform_int_distribution<int> id(0, 199);
    auto x = torch::empty({size, 3});
    auto y = torch::empty({size}, torch::kLong);
    for (int64_t i = 0; i < size; ++i) {
      int odd = 0;
      for (int64_t j = 0; j < 3; ++j) {
        int k = id(rng);
        x[i][j] = static_cast<float>(k);
        odd += k % 2;
      }
      y[i] = odd >= 2 ? 1 : 0;
    }
    drawn += static_cast<uint64_t>(size);
    return {x, y};
  }
  loop_state save() const override {
    std::ostringstream out;
    out << rng;
    return {drawn, out.str()};
  }
  void restore(const loop_state& s) override {
    std::istringstream in(s.bytes);
    in >> rng;
    drawn = s.position;
  }
};

struct id_bag : torch::nn::Module {
  ps_embedding ids{nullptr};
  torch::nn::Linear out{nullptr};
  explicit id_bag(table_spec t) {
    ids = register_module("ids", ps_embedding(t));
    out = register_module("out", torch::nn::Linear(t.width, 2));
  }
  torch::Tensor forward(const torch::Tensor& x) { return out(ids(x.to(torch::kLong)).mean(1)); }
};

}  // namespace

TEST_CASE("torch loop: the cross-entropy on the job's data set is the built-in worker, trace and model byte for byte") {
  for (auto protocol : {"bsp", "ssp", "wbsp"}) {
    CAPTURE(protocol);
    auto cfg = mlp_job(protocol);
    auto builtin = train(cfg);
    cfg.loop = cross_entropy_loop();
    auto own = train(cfg);
    REQUIRE(own.failures.empty());
    REQUIRE(own.trace.size() == builtin.trace.size());
    for (size_t i = 0; i < own.trace.size(); ++i) {
      INFO("event " << i << ": " << builtin.trace[i].kind);
      CHECK(to_json(own.trace[i]) == to_json(builtin.trace[i]));
    }
    CHECK(own.final_model.values == builtin.final_model.values);
    CHECK(own.summary.final_accuracy == builtin.summary.final_accuracy);
  }
}

TEST_CASE("torch loop: a source of its own trains, traces its loss, and resumes from a checkpoint bit for bit") {
  register_model("test-line-net", [] { return wrap_module(std::make_shared<line_net>()); });
  torch_loop_spec spec;
  spec.loss = [](torch_model& m, const torch_batch& b) {
    return torch::nn::functional::cross_entropy(m.forward(b.data), b.target);
  };
  spec.source = [](const loop_context& c) { return std::make_unique<two_lines>(c); };
  spec.evaluate = [](torch_model& m, const dataset&, const loop_context& job) {
    loop_context held_out = job;
    held_out.seed = job.seed + 1000;
    two_lines source(held_out);
    auto b = source.next(1000);
    torch::NoGradGuard no_grad;
    auto right = (m.forward(b.data).argmax(1) == b.target).sum().item<double>();
    return std::vector<metric>{{"accuracy", right / 1000}};
  };
  register_torch_loop("test-two-lines", spec);
  testing::temp_folder dir("syncpoint_torch_loop_resume");
  job_config cfg;
  cfg.protocol = "ssp";
  cfg.workers = 3;
  cfg.model = "test-line-net";
  cfg.loop = "test-two-lines";
  cfg.dataset = "blank";
  cfg.train_limit = 3000;
  cfg.epochs = 3;
  cfg.eval_every = 1;
  cfg.lr = 0.1;
  cfg.iter_cost_ms = 1;
  cfg.straggler = "1:x3";
  cfg.progress = false;
  auto plain = train(cfg);
  REQUIRE(plain.failures.empty());
  CHECK(plain.summary.final_accuracy > 0.9);  // "accuracy" among the metrics is the run's accuracy
  cfg.checkpoint_every_s = plain.summary.run_time_s / 4;
  cfg.checkpoint_dir = (dir.path / "all").string();
  cfg.checkpoint_keep = 0;
  auto whole = train(cfg);
  auto files = testing::checkpoint_files(cfg.checkpoint_dir);
  REQUIRE(files.size() >= 2);
  auto resumed = train(testing::resuming_from(cfg, files[files.size() / 2], dir.path / "from"));
  REQUIRE(resumed.trace.size() == whole.trace.size());
  for (size_t i = 0; i < whole.trace.size(); ++i)
    CHECK(to_json(resumed.trace[i]) == to_json(whole.trace[i]));
  CHECK(resumed.final_model.values == whole.final_model.values);
  CHECK(whole.final_model.values == plain.final_model.values);
}

TEST_CASE("torch loop: a ps_embedding's keys come from the source's next batch, go with the pull, train, and resume bit for bit") {
  register_model("test-id-bag", [] {
    table_spec t;
    t.name = "ids";
    t.width = 8;
    t.init_scale = 0.1;
    t.optimizer = row_optimizer::adagrad;
    return wrap_module(std::make_shared<id_bag>(t));
  });
  torch_loop_spec spec;
  spec.loss = [](torch_model& m, const torch_batch& b) {
    return torch::nn::functional::cross_entropy(m.forward(b.data), b.target);
  };
  spec.source = [](const loop_context& c) { return std::make_unique<odd_ids>(c); };
  register_torch_loop("test-odd-ids", spec);
  testing::temp_folder dir("syncpoint_torch_loop_rows");
  job_config cfg;
  cfg.protocol = "ssp";
  cfg.workers = 3;
  cfg.model = "test-id-bag";
  cfg.loop = "test-odd-ids";
  cfg.dataset = "blank";
  cfg.train_limit = 3000;
  cfg.epochs = 6;
  cfg.lr = 0.5;
  cfg.batch = 32;
  cfg.iter_cost_ms = 1;
  cfg.straggler = "1:x3";
  cfg.progress = false;
  auto plain = train(cfg);
  REQUIRE(plain.failures.empty());
  CHECK(plain.final_model.values.size() == 8 * 2 + 2);  // the rows are the PS's table, not dense weights
  std::vector<double> losses;
  for (auto& e : plain.trace)
    if (e.kind == "compute")
      losses.push_back(e.value);
  REQUIRE(losses.size() > 100);
  auto mean = [](auto from, auto to) { return std::accumulate(from, to, 0.0) / static_cast<double>(to - from); };
  double first = mean(losses.begin(), losses.begin() + 30), last = mean(losses.end() - 30, losses.end());
  MESSAGE("the loss of the first 30 steps " << first << ", of the last 30 " << last);
  CHECK(last < 0.6 * first);  // the rows learned their ids' parity (chance: ln 2 = 0.69)
  cfg.checkpoint_every_s = plain.summary.run_time_s / 4;
  cfg.checkpoint_dir = (dir.path / "all").string();
  cfg.checkpoint_keep = 0;
  auto whole = train(cfg);
  auto files = testing::checkpoint_files(cfg.checkpoint_dir);
  REQUIRE(files.size() >= 2);
  auto resumed = train(testing::resuming_from(cfg, files[files.size() / 2], dir.path / "from"));
  REQUIRE(resumed.failures.empty());
  REQUIRE(resumed.trace.size() == whole.trace.size());
  for (size_t i = 0; i < whole.trace.size(); ++i)
    CHECK(to_json(resumed.trace[i]) == to_json(whole.trace[i]));
  CHECK(resumed.final_model.values == whole.final_model.values);
  CHECK(whole.final_model.values == plain.final_model.values);
}

TEST_CASE("torch loop: a model that is not LibTorch's is refused before the job starts, naming the loop and the model") {
  auto cfg = testing::small_job("bsp");  // the Eigen softmax
  cfg.loop = cross_entropy_loop();
  try {
    train(cfg);
    FAIL("trained");
  } catch (const config_error& e) {
    CHECK(std::string(e.what()).find("loop 'test-cross-entropy' cannot train model 'softmax': the loop needs a "
                                     "LibTorch model") != std::string::npos);
  }
}
