// Real jobs: Fashion-MNIST accuracy, virtual-clock determinism, stragglers,
// lost workers, and a real-clock run.
#include <syncpoint/train.hpp>
#include "core/link_model.hpp"
#include "tests/helpers.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace syncpoint;
using syncpoint::testing::small_job;

namespace {

// Commits after every push although the PS applies pushes on arrival: the PS
// must still make a version per commit, or released workers wait forever.
class commit_always : public protocol {
 public:
  explicit commit_always(const protocol_options&) {}
  void on_push(coordinator_api& c, worker_id w) override {
    c.commit();
    c.release(w);
  }
};
SYNCPOINT_REGISTER_PROTOCOL("test-commit-always", "commits on every push (test)", commit_always);

// A protocol with a bug: the coordinator dies with it; the run must end with an error.
class explodes : public protocol {
 public:
  explicit explodes(const protocol_options&) {}
  void on_push(coordinator_api& c, worker_id w) override {
    if (c.clock(w) == 3)
      throw std::runtime_error("boom");
    c.release(w);
  }
};
SYNCPOINT_REGISTER_PROTOCOL("test-explodes", "throws on the third push (test)", explodes);

// A protocol with a quieter bug: from the third push on it never releases anyone.
class forgets : public protocol {
 public:
  explicit forgets(const protocol_options&) {}
  void on_push(coordinator_api& c, worker_id w) override {
    if (c.clock(w) < 3)
      c.release(w);
  }
};
SYNCPOINT_REGISTER_PROTOCOL("test-forgets", "stops releasing at the third push (test)", forgets);

}  // namespace

using syncpoint::testing::slurp;

TEST_CASE("training: 4 workers under BSP reach 82% on Fashion-MNIST (1 epoch, MLP)") {
  job_config cfg;
  cfg.protocol = "bsp";
  cfg.workers = 4;
  cfg.model = "mlp";
  cfg.epochs = 1;
  cfg.test_limit = 5000;
  cfg.eval_every = 0.5;
  cfg.iter_cost_ms = 10;
  cfg.progress = false;
  auto r = train(cfg);
  MESSAGE("final accuracy " << r.summary.final_accuracy);
  CHECK(r.summary.final_accuracy >= 0.82);
  CHECK(r.summary.samples >= 60000);
  CHECK(r.summary.staleness_max == 0);
  for (auto& w : r.summary.per_worker)
    CHECK(w.iterations == r.summary.per_worker[0].iterations);
}

TEST_CASE("training: two virtual-clock runs with the same seed write identical traces") {
  auto dir = std::filesystem::temp_directory_path() / "syncpoint_determinism";
  std::filesystem::remove_all(dir);
  for (auto protocol : {"ssp", "bsp"}) {
    auto cfg = small_job(protocol);
    cfg.model = "mlp";
    cfg.train_limit = 2000;
    cfg.straggler = "1:x2;3:x3@0.2-0.6;2:+3ms";
    cfg.out_dir = (dir / "a").string();
    train(cfg);
    cfg.out_dir = (dir / "b").string();
    train(cfg);
    auto a = slurp(dir / "a" / "trace.jsonl");
    CHECK(a.size() > 10000);
    CHECK(a == slurp(dir / "b" / "trace.jsonl"));
    CHECK(slurp(dir / "a" / "summary.json") == slurp(dir / "b" / "summary.json"));
    cfg.seed = 2;
    cfg.out_dir = (dir / "c").string();
    train(cfg);
    CHECK(a != slurp(dir / "c" / "trace.jsonl"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("training: with a 4x straggler ASP does the same work in far less virtual time than BSP") {
  auto bsp_cfg = small_job("bsp");
  bsp_cfg.straggler = "3:x4";
  auto asp_cfg = bsp_cfg;
  asp_cfg.protocol = "asp";
  auto bsp = train(bsp_cfg).summary;
  auto asp = train(asp_cfg).summary;
  auto iterations = [](const run_summary& s) {
    uint64_t n = 0;
    for (auto& w : s.per_worker)
      n += w.iterations;
    return n;
  };
  MESSAGE("bsp " << bsp.run_time_s << " s, asp " << asp.run_time_s << " s");
  // The budget is samples: both stop within one in-flight batch per worker.
  CHECK(iterations(asp) == doctest::Approx(iterations(bsp)).epsilon(0.05));
  // BSP runs at the straggler's pace (1 iteration per 40 ms); ASP at 3 + 1/4 per 10 ms.
  CHECK(asp.run_time_s < 0.4 * bsp.run_time_s);
  CHECK(bsp.per_worker[3].iterations == bsp.per_worker[0].iterations);
  CHECK(asp.per_worker[3].iterations * 3 < asp.per_worker[0].iterations);
  CHECK(bsp.mean_compute_ratio < 0.5);
  CHECK(asp.mean_compute_ratio > 0.95);
  CHECK(bsp.barriers > 0);
  CHECK(asp.barriers == 0);
  CHECK(asp.final_accuracy > 0.8);
}

TEST_CASE("training: a worker lost mid-run leaves every protocol cleanly") {
  for (auto protocol : {"bsp", "ssp", "asp"}) {
    auto cfg = small_job(protocol);
    cfg.protocol_opts.set("staleness", 0);
    cfg.internals.fail_worker = 2;
    cfg.internals.fail_at_iter = 5;
    auto s = train(cfg).summary;
    CHECK_MESSAGE(s.lost == 1, protocol);
    CHECK(s.per_worker[2].iterations == 4);  // pushed 4 gradients, died instead of the 5th push
    CHECK(s.per_worker[0].iterations > 20);
    CHECK(s.samples >= 8000);
    CHECK(s.final_accuracy > 0.8);
  }
}

TEST_CASE("training: a diverged model (NaN gradients) ends the run instead of spinning") {
  auto cfg = small_job("bsp");
  cfg.model = "mlp";
  cfg.lr = 1e30;
  cfg.momentum = 0;
  auto r = train(cfg);
  CHECK(r.summary.lost == 4);
  CHECK(r.summary.rejected >= 4 * 7);
  for (auto& w : r.summary.per_worker)  // the first round is applied, then NaN: no iterations
    CHECK(w.iterations <= 2);
  REQUIRE(r.failures.size() == 4);
  CHECK(r.failures[0].find("gradients in a row rejected") != std::string::npos);
  CHECK(r.failures[0].find("contains NaN or Inf") != std::string::npos);
}

TEST_CASE("training: real clock, with the straggler's delay served by delayed_send" * doctest::test_suite("real-clock")) {
  auto cfg = small_job("bsp");
  cfg.clock = clock_kind::real;
  cfg.workers = 2;
  cfg.epochs = 0.5;  // 2000 samples: ~32 rounds of 2 x 32
  cfg.batch = 32;
  cfg.straggler = "1:+20ms";
  auto s = train(cfg).summary;
  CHECK(s.clock == "real");
  CHECK(s.samples >= 2000);
  auto rounds = s.per_worker[0].iterations;
  CHECK(rounds == s.per_worker[1].iterations);
  CHECK(s.run_time_s >= 0.02 * static_cast<double>(rounds));
  CHECK(s.per_worker[0].wait_s > 0.5 * 0.02 * static_cast<double>(rounds));
  CHECK(s.final_accuracy > 0.6);
}

TEST_CASE("training: bad configurations are refused with a clear message") {
  auto cfg = small_job("bsp");
  cfg.protocol = "zipzap";
  try {
    train(cfg);
    FAIL("no error");
  } catch (const config_error& e) {  // this binary registers test protocols too
    CHECK(std::string(e.what()).rfind("unknown protocol 'zipzap' (valid: asp, async-diloco, bsp, ", 0) == 0);
  }
  cfg = small_job("bsp");
  cfg.straggler = "7:x2";
  CHECK_THROWS_WITH_AS(train(cfg), "--straggler: straggler item for worker 7: only workers 0..3 exist",
                       config_error);
  cfg = small_job("bsp");
  cfg.dataset = "fashion-mnist";
  cfg.data_dir = "/nonexistent";
  CHECK_THROWS_WITH_AS(train(cfg), "/nonexistent/train-images-idx3-ubyte.gz: no such file", config_error);
  cfg = small_job("bsp");
  cfg.momentum = 1.5;
  CHECK_THROWS_AS(train(cfg), config_error);
}

TEST_CASE("training: commits in immediate mode never leave workers waiting for a version" * doctest::test_suite("real-clock")) {
  for (auto clock : {clock_kind::virtual_time, clock_kind::real}) {
    auto cfg = small_job("test-commit-always");
    cfg.clock = clock;
    cfg.epochs = 0.5;
    auto s = train(cfg).summary;
    CHECK(s.samples >= 2000);
    CHECK(s.lost == 0);
  }
}

TEST_CASE("training: a protocol that throws ends the run with an error, not a hang" * doctest::test_suite("real-clock")) {
  for (auto clock : {clock_kind::virtual_time, clock_kind::real}) {
    auto cfg = small_job("test-explodes");
    cfg.clock = clock;
    try {
      train(cfg);
      FAIL("no error");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()).find("the run failed: the coordinator stopped") != std::string::npos);
    }
  }
}

TEST_CASE("training: a push never answered ends the worker after --request-timeout, not a hang" * doctest::test_suite("real-clock")) {
  auto cfg = small_job("test-forgets");
  cfg.clock = clock_kind::real;
  cfg.request_timeout_s = 0.5;
  auto r = train(cfg);
  CHECK(r.summary.lost == 4);
  REQUIRE(r.failures.size() == 4);
  for (auto& f : r.failures) {  // "... had no reply in 0.512 s (--request-timeout 0.5 s)"
    auto at = f.find("its push had no reply in ");
    REQUIRE_MESSAGE(at != std::string::npos, f);
    CHECK(std::atof(f.c_str() + at + 25) >= 0.5);  // how much more is the machine's
    CHECK_MESSAGE(f.find(" s (--request-timeout 0.5 s)") != std::string::npos, f);
  }
  // The watchdog's period is the limit: each worker ends between 0.5 s and
  // 1 s after its unanswered push, not a period later.
  for (auto& l : r.summary.losses) {
    CHECK(l.t_s >= 0.5);
    CHECK(l.t_s < 1.0 + 3 * 0.2);
  }
}

TEST_CASE("training: limits that could never stop a run are refused or bounded") {
  auto cfg = small_job("asp");
  cfg.epochs = 0;
  cfg.target_accuracy = 0.5;
  cfg.eval_every = 0;
  CHECK_THROWS_WITH_AS(train(cfg),
                       "--target-accuracy as the only limit needs --eval-every > 0 (nothing would be "
                       "evaluated before the end)",
                       config_error);
  cfg = small_job("asp");
  cfg.epochs = 1e-9;  // rounds to zero samples: still a budget of one push
  CHECK(train(cfg).summary.samples > 0);
  cfg = small_job("asp");
  cfg.max_time_s = 1e300;
  CHECK_THROWS_AS(train(cfg), config_error);
}

TEST_CASE("training: the final evaluation counts for the time to target") {
  auto cfg = small_job("bsp");
  cfg.eval_every = 0;
  cfg.target_accuracy = 0.5;
  auto s = train(cfg).summary;
  REQUIRE(s.final_accuracy >= 0.5);
  CHECK(s.time_to_target_s == doctest::Approx(s.run_time_s));
}

TEST_CASE("training: elastic-bsp runs, places barriers and survives a lost worker") {
  auto cfg = small_job("elastic-bsp");
  cfg.straggler = "3:x3";
  auto s = train(cfg).summary;
  CHECK(s.barriers > 5);
  CHECK(s.samples >= 8000);
  CHECK(s.final_accuracy > 0.8);
  // Regular workers in virtual time: ZipLine finds barriers nobody waits at.
  CHECK(s.mean_compute_ratio > 0.95);
  cfg.internals.fail_worker = 1;
  cfg.internals.fail_at_iter = 7;
  auto lost = train(cfg).summary;
  CHECK(lost.lost == 1);
  CHECK(lost.samples >= 8000);
}

TEST_CASE("link model: transfers queue on the PS link and add latency") {
  link_model link(1000, 0.01);  // 1000 bytes/s, 10 ms
  CHECK(link.deliver_at(0, 500) == doctest::Approx(0.51));
  CHECK(link.deliver_at(0, 500) == doctest::Approx(1.01));  // waited for the first
  CHECK(link.deliver_at(2, 100) == doctest::Approx(2.11));  // idle link: no queue
  CHECK_FALSE(link_model().active());
}

TEST_CASE("link model: in virtual time each BSP iteration pays a push and a pull on the link") {
  auto cfg = small_job("bsp");
  cfg.workers = 1;
  cfg.epochs = 0.25;  // 1000 samples: 16 iterations of 64
  double bytes = 7850 * 4;
  cfg.ps_bandwidth = bytes / 0.002;  // 2 ms per model-sized transfer
  cfg.latency_ms = 0.5;
  auto s = train(cfg).summary;
  auto it = s.per_worker[0].iterations;
  REQUIRE(it == 16);
  // Per iteration: pull (2 + 0.5 ms), compute (10 ms), push (2 + 0.5 ms).
  CHECK(s.run_time_s == doctest::Approx(it * 0.015).epsilon(1e-6));
  CHECK(s.per_worker[0].comm_s == doctest::Approx(it * 0.005).epsilon(1e-6));
  // Four BSP workers push and pull at the same moments: they queue on the link
  // (transfers end at 2, 4, 6, 8 ms), so communication per iteration grows.
  cfg.workers = 4;
  auto shared = train(cfg).summary;
  double comm = 0, iterations = 0;
  for (auto& w : shared.per_worker) {
    comm += w.comm_s;
    iterations += static_cast<double>(w.iterations);
  }
  CHECK(comm / iterations > 1.5 * 0.005);  // 5, 7, 9 and 11 ms by queue position
}

TEST_CASE("summary: accuracy at a sample count interpolates between evaluations") {
  run_summary s;
  s.evals = {{1.0, 100, 0.5}, {2.0, 300, 0.7}, {3.0, 400, 0.9}};
  CHECK(accuracy_at_samples(s, 50) < 0);  // before the first evaluation: unknown
  CHECK(accuracy_at_samples(s, 100) == doctest::Approx(0.5));
  CHECK(accuracy_at_samples(s, 200) == doctest::Approx(0.6));
  CHECK(accuracy_at_samples(s, 350) == doctest::Approx(0.8));
  CHECK(accuracy_at_samples(s, 400) == doctest::Approx(0.9));
  CHECK(accuracy_at_samples(s, 500) == doctest::Approx(0.9));  // the run ended at its last one
  s.evals.push_back({3.1, 400, 0.85});  // the final evaluation, at the same count (a last commit)
  CHECK(accuracy_at_samples(s, 400) == doctest::Approx(0.85));
  CHECK(accuracy_at_samples(s, 350) == doctest::Approx(0.8));
  s.samples = 500;  // the final evaluation counts as the last point
  s.final_accuracy = 0.95;
  CHECK(accuracy_at_samples(s, 450) == doctest::Approx(0.9));
  CHECK(accuracy_at_samples(s, 500) == doctest::Approx(0.95));
  CHECK(accuracy_at_samples(s, 600) == doctest::Approx(0.95));
}
