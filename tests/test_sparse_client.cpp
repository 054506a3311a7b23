// A loop of one's own with a sparse model (<syncpoint/worker_client.hpp>,
// docs/sparse.md): pull(keys) brings the rows of the next step's keys with
// the weights, push(grad, row gradients, n) moves them, and the PS trains
// the table as it trains the dense part; misuse is refused naming it.
#include <syncpoint/train.hpp>
#include <syncpoint/worker_client.hpp>
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <mutex>
#include <random>

using namespace syncpoint;

namespace {

// y = c_k x + b for 10 keys k: the coefficients in a table of width 1, the
// intercept the one dense weight. The loop computes every gradient.
class coefficients final : public model {
 public:
  size_t size() const override { return 1; }
  std::vector<float> initial_weights(uint64_t) override { return {0.0f}; }
  void load(const float* w) override { b_ = w[0]; }
  std::vector<float> current_weights() const override { return {b_}; }
  void local_step(const float*, float) override {}
  float gradient(const batch_view&, float*) override { throw std::logic_error("the loop computes it"); }
  void predict(const batch_view& b, int64_t* labels) override { std::fill(labels, labels + b.count, int64_t{0}); }
  std::vector<table_spec> tables() const override {
    table_spec t;
    t.name = "coef";
    t.width = 1;
    t.init = row_init::zeros;
    return {t};
  }
  std::vector<std::vector<uint64_t>> keys(const batch_view&) override { return {{}}; }
  void load_rows(std::vector<row_block> rows) override { rows_ = std::move(rows); }
  const std::vector<row_block>& row_gradients() const override { return none_; }

 private:
  float b_ = 0;
  std::vector<row_block> rows_, none_;
};

float truth(uint64_t k) { return 0.5f * static_cast<float>(k) - 2.0f; }

std::mutex seen_mutex;
std::map<uint64_t, float> seen;  // each key's row as a pull last brought it
float intercept = 0;

job_config coefficients_job(const std::string& loop) {
  auto cfg = testing::small_job("asp");
  cfg.workers = 2;
  cfg.model = "test-sparse-coefficients";
  cfg.loop = loop;
  cfg.lr = 0.5;
  cfg.momentum = 0;
  cfg.epochs = 3;
  cfg.eval_every = 0;
  return cfg;
}

}  // namespace

TEST_CASE("sparse client: a loop of its own pulls its keys' rows, pushes their gradients, and the table learns") {
  register_model("test-sparse-coefficients", [] { return std::make_unique<coefficients>(); });
  register_client_loop("test-sparse-fit", [](worker_client& ps) {
    std::mt19937_64 rng(ps.context().seed * 100 + static_cast<uint64_t>(ps.context().worker));
    std::normal_distribution<float> x_of;
    std::uniform_int_distribution<uint64_t> key_of(0, 9);
    for (;;) {
      std::vector<uint64_t> keys;
      std::vector<std::pair<uint64_t, float>> batch;
      for (int i = 0; i < 32; ++i) {
        batch.emplace_back(key_of(rng), x_of(rng));
        keys.push_back(batch.back().first);
      }
      auto w = ps.pull({keys});  // duplicates too: each key's row comes once
      if (w.rows.size() != 1)  // (the loop's thread: an exception, which ends the run with it)
        throw std::runtime_error("rows of " + std::to_string(w.rows.size()) + " tables came");
      std::map<uint64_t, float> row;
      for (size_t i = 0; i < w.rows[0].keys.size(); ++i)
        row[w.rows[0].keys[i]] = w.rows[0].values[i];
      if (row.size() != w.rows[0].keys.size())
        throw std::runtime_error("a key's row came twice");
      {
        std::lock_guard<std::mutex> lock(seen_mutex);
        for (auto& [k, v] : row)
          seen[k] = v;
        intercept = w.values.at(0);
      }
      std::vector<float> g{0.0f};
      std::map<uint64_t, float> gk;
      for (auto& [k, x] : batch) {
        if (row.count(k) != 1)
          throw std::runtime_error("no row came for key " + std::to_string(k));
        float e = row[k] * x + w.values[0] - (truth(k) * x + 1.0f);
        g[0] += e / 32;
        gk[k] += e * x / 32;
      }
      row_block grads{0, {}, {}};
      for (auto& [k, v] : gk) {
        grads.keys.push_back(k);
        grads.values.push_back(v);
      }
      if (ps.push(g, {grads}, 32).stop)
        return;
    }
  });
  auto r = train(coefficients_job("test-sparse-fit"));
  REQUIRE(r.failures.empty());
  std::lock_guard<std::mutex> lock(seen_mutex);
  REQUIRE(seen.size() == 10);
  for (auto& [k, v] : seen) {
    CAPTURE(k);
    CHECK(v == doctest::Approx(truth(k)).epsilon(0.05));
  }
  CHECK(intercept == doctest::Approx(1.0f).epsilon(0.05));
}

TEST_CASE("sparse client: a sparse model's loop that pulls without keys, or pushes before its pull, is refused naming it") {
  register_model("test-sparse-coefficients", [] { return std::make_unique<coefficients>(); });
  register_client_loop("test-sparse-no-keys", [](worker_client& ps) {
    for (;;)
      if (ps.push({ps.pull().values}, 32).stop)
        return;
  });
  auto r = train(coefficients_job("test-sparse-no-keys"));
  REQUIRE(!r.failures.empty());
  CHECK_MESSAGE(r.failures[0].find("the model has sparse tables, whose rows come with the keys of the step: pull(keys)") !=
                  std::string::npos,
                r.failures[0]);
  register_client_loop("test-sparse-push-first", [](worker_client& ps) {
    while (!ps.push({0.0f}, 32).stop) {
    }
  });
  r = train(coefficients_job("test-sparse-push-first"));
  REQUIRE(!r.failures.empty());
  CHECK_MESSAGE(r.failures[0].find("push before pull(keys)") != std::string::npos, r.failures[0]);
  register_client_loop("test-sparse-wrong-width", [](worker_client& ps) {
    for (;;) {
      auto w = ps.pull({{3, 4}});
      if (ps.push({0.0f}, {row_block{0, {3, 4}, {0.1f}}}, 32).stop)  // 1 value for 2 keys of width 1
        return;
    }
  });
  r = train(coefficients_job("test-sparse-wrong-width"));
  REQUIRE(!r.failures.empty());
  CHECK_MESSAGE(r.failures[0].find("the loop's row gradients of table 0 hold 1 values for 2 keys of width 1") !=
                  std::string::npos,
                r.failures[0]);
}

TEST_CASE("sparse client: a dense model's loop that pulls with keys is refused naming it") {
  register_model("test-sparse-dense-four", [] { return weights_only(4); });
  register_client_loop("test-sparse-keys-on-dense", [](worker_client& ps) {
    for (;;) {
      ps.pull({{1, 2}});
      if (ps.push(std::vector<float>(4, 0.0f), 16).stop)
        return;
    }
  });
  auto cfg = testing::small_job("asp");
  cfg.model = "test-sparse-dense-four";
  cfg.loop = "test-sparse-keys-on-dense";
  auto r = train(cfg);
  REQUIRE(!r.failures.empty());
  CHECK_MESSAGE(r.failures[0].find("pull(keys): the model has no sparse tables") != std::string::npos, r.failures[0]);
}
