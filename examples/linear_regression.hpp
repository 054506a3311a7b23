// A worker loop of your own, with no LibTorch: least squares on generated
// data, y = X w + noise, written against the worker client alone
// (<syncpoint/worker_client.hpp>). Used by examples/linear_regression.cpp and
// tests/test_worker_loops.cpp, which solves the same problem exactly.
//
//   register_linear_regression();            // model "linreg-weights", loop "linreg"
//   cfg.model = "linreg-weights"; cfg.loop = "linreg";
#pragma once

#include <syncpoint/data_registry.hpp>
#include <syncpoint/job_config.hpp>
#include <syncpoint/worker_client.hpp>

#include <random>
#include <sstream>
#include <vector>

namespace linreg {

constexpr int features = 8;     // w has features + 1 values: the last is the intercept
constexpr int64_t rows = 4096;  // the training set; each worker owns the rows i with i % workers == worker
constexpr int batch = 32;

// The problem for a seed: X (rows x features), y, and the held-out rows after them.
struct problem {
  std::vector<double> x, y;  // row-major
  std::vector<double> x_test, y_test;
};

inline problem make_problem(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> w_true(features + 1);
  for (auto& v : w_true)
    v = 2 * normal(rng);
  problem p;
  auto fill = [&](int64_t n, std::vector<double>& x, std::vector<double>& y) {
    for (int64_t i = 0; i < n; ++i) {
      double target = w_true[features];
      for (int k = 0; k < features; ++k) {
        x.push_back(normal(rng));
        target += w_true[k] * x.back();
      }
      y.push_back(target + 0.5 * normal(rng));
    }
  };
  fill(rows, p.x, p.y);
  fill(1024, p.x_test, p.y_test);
  return p;
}

// Mean squared error of w on rows [x, y).
inline double mse(const std::vector<float>& w, const std::vector<double>& x, const std::vector<double>& y) {
  double sum = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    double e = w[features] - y[i];
    for (int k = 0; k < features; ++k)
      e += w[k] * x[i * features + k];
    sum += e * e;
  }
  return sum / static_cast<double>(y.size());
}

// One worker: batches of its own rows, drawn by an engine of its own, whose
// state a checkpoint keeps (on_save / resumed_state), so a resumed run draws
// what the whole run would have.
inline void worker_loop(syncpoint::worker_client& ps) {
  const auto& c = ps.context();
  auto p = make_problem(c.seed);
  std::vector<int64_t> mine;
  for (int64_t i = c.worker; i < rows; i += c.workers)
    mine.push_back(i);
  std::mt19937_64 rng(c.seed * 7919 + static_cast<uint64_t>(c.worker));
  if (auto saved = ps.resumed_state()) {
    std::istringstream in(*saved);
    in >> rng;
  }
  ps.on_save([&] {
    std::ostringstream out;
    out << rng;
    return out.str();
  });
  std::uniform_int_distribution<size_t> pick(0, mine.size() - 1);
  std::vector<float> g(features + 1);
  for (;;) {
    std::vector<float> w = ps.pull().values;
    std::fill(g.begin(), g.end(), 0.0f);
    double loss = 0;
    for (int b = 0; b < batch; ++b) {  // d/dw of (Xw - y)^2 / 2, averaged
      auto i = static_cast<size_t>(mine[pick(rng)]);
      double e = w[features] - p.y[i];
      for (int k = 0; k < features; ++k)
        e += w[k] * p.x[i * features + k];
      for (int k = 0; k < features; ++k)
        g[k] += static_cast<float>(e * p.x[i * features + k] / batch);
      g[features] += static_cast<float>(e / batch);
      loss += e * e / 2 / batch;
    }
    if (ps.push(g, batch, static_cast<float>(loss)).stop)
      return;
  }
}

// The model (weights only, zeros to start) and the loop, evaluated by the held-out MSE.
inline void register_linear_regression() {
  syncpoint::register_model("linreg-weights", [] { return syncpoint::weights_only(features + 1); });
  syncpoint::register_client_loop(
    "linreg", worker_loop, [](syncpoint::model& m, const syncpoint::dataset&, const syncpoint::loop_context& job) {
      auto p = make_problem(job.seed);  // the held-out rows are the loop's own, not the job's data set
      return std::vector<syncpoint::metric>{{"mse", mse(m.current_weights(), p.x_test, p.y_test)}};
    });
}

// The job: 4 workers, worker 3 four times slower, 20 epochs of the rows,
// plain SGD with a cosine schedule, 1 ms a gradient on the virtual clock.
inline syncpoint::job_config job(const std::string& protocol) {
  syncpoint::job_config cfg;
  cfg.protocol = protocol;
  cfg.workers = 4;
  cfg.straggler = "3:x4";
  cfg.model = "linreg-weights";  // 9 floats: the loop's own weights
  cfg.loop = "linreg";
  cfg.dataset = "blank";         // the loop makes its data; the set's size is the epoch
  cfg.train_limit = rows;
  cfg.batch = batch;
  cfg.epochs = 20;
  cfg.lr = 0.1;
  cfg.momentum = 0;
  cfg.lr_schedule = "cosine";
  cfg.iter_cost_ms = 1;
  cfg.progress = false;
  return cfg;
}

}  // namespace linreg
