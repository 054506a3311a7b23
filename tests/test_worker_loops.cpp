// A worker loop of the user's own (<syncpoint/worker_loop.hpp>,
// <syncpoint/worker_client.hpp>): it trains what it computes, under the
// same protocol rules as the built-in worker, reports into the trace, ends the
// run when it fails or hangs, and resumes exactly from a checkpoint.
#include "examples/linear_regression.hpp"

#include <syncpoint/train.hpp>
#include <syncpoint/worker_client.hpp>
#include "tests/helpers.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <future>
#include <cmath>
#include <filesystem>

using namespace syncpoint;
namespace fs = std::filesystem;

namespace {

// The least-squares solution of the whole problem, by the normal equations (double).
std::vector<double> least_squares(const linreg::problem& p) {
  constexpr int n = linreg::features + 1;
  std::vector<std::vector<double>> a(n, std::vector<double>(n + 1, 0.0));
  for (size_t i = 0; i < p.y.size(); ++i) {
    double row[n];
    for (int k = 0; k < linreg::features; ++k)
      row[k] = p.x[i * linreg::features + k];
    row[n - 1] = 1;
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c)
        a[r][c] += row[r] * row[c];
      a[r][n] += row[r] * p.y[i];
    }
  }
  for (int c = 0; c < n; ++c) {  // Gauss-Jordan, partial pivoting
    int pivot = c;
    for (int r = c + 1; r < n; ++r)
      if (std::abs(a[r][c]) > std::abs(a[pivot][c]))
        pivot = r;
    std::swap(a[c], a[pivot]);
    for (int r = 0; r < n; ++r)
      if (r != c) {
        double f = a[r][c] / a[c][c];
        for (int k = c; k <= n; ++k)
          a[r][k] -= f * a[c][k];
      }
  }
  std::vector<double> w(n);
  for (int r = 0; r < n; ++r)
    w[r] = a[r][n] / a[r][r];
  return w;
}

job_config linreg_job(const std::string& protocol) {
  linreg::register_linear_regression();  // (again: false, already there)
  return linreg::job(protocol);
}

// Four weights and nothing else: what the small loops below train.
std::string four_weights() {
  static bool registered = register_model("test-loops-w4", [] { return weights_only(4); });
  (void) registered;
  return "test-loops-w4";
}

double relative_distance(const std::vector<float>& w, const std::vector<double>& to) {
  double d = 0, n = 0;
  for (size_t i = 0; i < to.size(); ++i) {
    d += (w[i] - to[i]) * (w[i] - to[i]);
    n += to[i] * to[i];
  }
  return std::sqrt(d / n);
}

}  // namespace

TEST_CASE("worker loops: a client loop of the user's own fits least squares within 1% under ssp with a straggler") {
  auto cfg = linreg_job("ssp");
  auto r = train(cfg);
  REQUIRE(r.failures.empty());
  auto w_ls = least_squares(linreg::make_problem(cfg.seed));
  auto d = relative_distance(r.final_model.values.vec(), w_ls);
  MESSAGE("ssp: ||w - w_ls|| / ||w_ls|| = " << d);
  CHECK(d < 0.01);
  CHECK(r.summary.samples >= static_cast<uint64_t>(20 * linreg::rows));
  CHECK(total_wait_s(r.summary) > 0);  // SSP held the others back for the straggler
  // The evaluation's metric is in the trace, and falls to about the noise's variance (0.25).
  std::vector<double> mse;
  for (auto& e : r.trace)
    if (e.kind == "metric" && e.note == "mse")
      mse.push_back(e.value);
  REQUIRE(mse.size() >= 2);
  CHECK(mse.front() > 1);
  CHECK(mse.back() < 0.3);
}

TEST_CASE("worker loops: a client loop gets the built-in worker's protocol decisions under bsp, asp, ssp and elastic-bsp") {
  // The same job twice: the built-in loop on the softmax, and a client loop
  // pushing zeros into weights of the same size. The protocol sees the same
  // pushes at the same times, so every decision (the spans, the versions,
  // the barriers, the applies' staleness) is the same; only values differ.
  auto base = testing::small_job("bsp");
  base.straggler = "3:x3";
  auto size = make_model("softmax", input_of(make_dataset("synthetic", {"", 4000, 500, 1}).train))->size();
  register_model("test-loops-weights", [size] { return weights_only(size); });
  register_client_loop("test-loops-zeros", [](worker_client& ps) {
    std::vector<float> g(ps.pull().values.size(), 0.0f);
    while (!ps.push(g, ps.batch(), 1.0f).stop)
      ps.pull();
  });
  for (auto protocol : {"bsp", "asp", "ssp", "elastic-bsp"}) {
    CAPTURE(protocol);
    auto cfg = base;
    cfg.protocol = protocol;
    auto builtin = train(cfg);
    cfg.model = "test-loops-weights";
    cfg.loop = "test-loops-zeros";
    auto own = train(cfg);
    REQUIRE(own.failures.empty());
    REQUIRE(own.trace.size() == builtin.trace.size());
    for (size_t i = 0; i < own.trace.size(); ++i) {
      auto& a = builtin.trace[i];
      auto& b = own.trace[i];
      INFO("event " << i << ": " << a.kind << " of worker " << a.worker);
      CHECK(a.kind == b.kind);
      CHECK(a.worker == b.worker);
      CHECK(a.t0 == b.t0);
      CHECK(a.t1 == b.t1);
      CHECK(a.iter == b.iter);
      CHECK(a.version == b.version);
      if (a.kind == "apply" || a.kind == "barrier")
        CHECK(a.value == b.value);  // staleness, a barrier's size
    }
    CHECK(own.summary.staleness_max == builtin.summary.staleness_max);
    if (std::string(protocol) == "bsp")
      CHECK(own.summary.staleness_max == 0);
  }
}

TEST_CASE("worker loops: a loop that throws ends the run with its message") {
  register_client_loop("test-loops-throws", [](worker_client& ps) {
    std::vector<float> g(4, 0.1f);
    for (;;) {
      ps.pull();
      if (ps.context().worker == 1 && ps.step() == 3)
        throw std::runtime_error("the environment broke");
      if (ps.push(g, 16).stop)
        return;
    }
  });
  auto cfg = testing::small_job("bsp");
  cfg.model = four_weights();
  cfg.loop = "test-loops-throws";
  auto r = train(cfg);
  REQUIRE(r.failures.size() >= 1);
  CHECK(r.failures[0].find("user_loop_failed") != std::string::npos);
  CHECK(r.failures[0].find("worker 1's loop failed: the environment broke") != std::string::npos);
  CHECK(r.summary.lost == 1);
  CHECK(r.summary.samples < 4000);  // it ended there, not at its budget of 2 epochs
}

TEST_CASE("worker loops: a gradient of the wrong length ends the run naming both lengths") {
  register_client_loop("test-loops-short", [](worker_client& ps) {
    std::vector<float> g(3, 0.0f);
    while (!ps.push(g, 16).stop) {
    }
  });
  auto cfg = testing::small_job("asp");
  cfg.model = four_weights();
  cfg.loop = "test-loops-short";
  auto r = train(cfg);
  REQUIRE(!r.failures.empty());
  CHECK(r.failures[0].find("push of a gradient of 3 values; the model has 4") != std::string::npos);
}

namespace {
std::promise<void> release_hung_loop;  // the test sets it once the run has ended
std::shared_future<void> hung_loop_released = release_hung_loop.get_future().share();
}

TEST_CASE("worker loops: a loop that never pushes is ended by the request timeout") {
  // The loop holds its own share of the future's state: its thread, left running, may read it
  // after the test's globals are gone, and the last share frees it (TSan saw the global's free race).
  register_client_loop("test-loops-hangs", [released = hung_loop_released](worker_client& ps) {
    std::vector<float> g(4, 0.0f);
    for (;;) {
      ps.pull();
      if (ps.context().worker == 2 && ps.step() == 5)
        released.wait();
      if (ps.push(g, 16).stop)
        return;
    }
  });
  auto cfg = testing::small_job("ssp");
  cfg.model = four_weights();
  cfg.loop = "test-loops-hangs";
  cfg.request_timeout_s = 0.5;
  auto r = train(cfg);
  release_hung_loop.set_value();  // its thread, left running, ends now
  REQUIRE(!r.failures.empty());
  CHECK(r.failures[0].find("worker 2's loop failed: it did not push within 0.5 s (--request-timeout)") !=
        std::string::npos);
  CHECK(r.summary.per_worker[2].iterations == 5);
}

TEST_CASE("worker loops: a loop's reported metrics are traced with its worker and step") {
  register_client_loop("test-loops-reports", [](worker_client& ps) {
    std::vector<float> g(4, 0.0f);
    do {
      ps.report("reward", static_cast<double>(ps.step()) + 0.5);
      ps.pull();
    } while (!ps.push(g, 16, 2.0f).stop);
  });
  auto cfg = testing::small_job("bsp");
  cfg.model = four_weights();
  cfg.loop = "test-loops-reports";
  cfg.epochs = 0.2;
  auto r = train(cfg);
  REQUIRE(r.failures.empty());
  int seen = 0;
  for (auto& e : r.trace)
    if (e.kind == "metric" && e.note == "reward" && e.worker == 1) {
      CHECK(e.value == static_cast<double>(e.iter) + 0.5);  // reported before push number iter + 1
      ++seen;
    }
  CHECK(seen == static_cast<int>(r.summary.per_worker[1].iterations));
  for (auto& e : r.trace)
    if (e.kind == "compute")
      CHECK(e.value == 2.0);
}

TEST_CASE("worker loops: a client loop with state of its own resumes from a checkpoint bit for bit") {
  testing::temp_folder dir("syncpoint_worker_loops_resume");
  for (auto protocol : {"ssp", "bsp"}) {
    CAPTURE(protocol);
    auto cfg = linreg_job(protocol);
    cfg.epochs = 2;
    auto plain = train(cfg);
    cfg.checkpoint_every_s = plain.summary.run_time_s / 5;
    cfg.checkpoint_dir = (dir.path / protocol / "all").string();
    cfg.checkpoint_keep = 0;
    auto whole = train(cfg);
    CHECK(whole.final_model.values == plain.final_model.values);
    auto files = testing::checkpoint_files(cfg.checkpoint_dir);
    REQUIRE(files.size() >= 3);
    auto file = files[files.size() / 2];
    auto resumed = train(testing::resuming_from(cfg, file, dir.path / protocol / "from"));
    REQUIRE(resumed.trace.size() == whole.trace.size());
    for (size_t i = 0; i < whole.trace.size(); ++i) {
      INFO("event " << i << ": " << whole.trace[i].kind);
      CHECK(resumed.trace[i].t0 == whole.trace[i].t0);
      CHECK(resumed.trace[i].value == whole.trace[i].value);
    }
    CHECK(resumed.final_model.values == whole.final_model.values);
  }
}

TEST_CASE("worker loops: an unknown loop is refused, naming the known ones") {
  auto cfg = testing::small_job("bsp");
  cfg.loop = "no-such-loop";
  try {
    validate(cfg);
    FAIL("validated");
  } catch (const config_error& e) {
    CHECK(std::string(e.what()).find("unknown loop 'no-such-loop' (known: ") != std::string::npos);
    CHECK(std::string(e.what()).find("classify") != std::string::npos);
  }
}
