// syncpoint simulate (runtime/studies/simulate.hpp): its timeline is train's, event
// for event, with nothing computed; it scales; and the coordinator's O(1)
// answers to the protocol (live_count, waiting_count, min_clock) agree with
// counting through losses and a resume.
#include <syncpoint/protocol_archive.hpp>
#include "runtime/studies/simulate.hpp"
#include "tests/helpers.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <tuple>
#include <unistd.h>

using namespace syncpoint;
using syncpoint::testing::small_job;

namespace {

const std::vector<std::string> every_protocol{"bsp",  "asp",          "ssp",  "elastic-bsp", "wbsp",
                                              "wbsp-overlap", "r2sp", "sync-switch", "dssp"};

// What timing decides: which event, whose, when, at which iteration and version.
using timed = std::tuple<std::string, worker_id, nanos, nanos, uint64_t, uint64_t>;

std::vector<timed> timeline(const std::vector<trace_event>& trace) {
  static const std::set<std::string> kinds{"compute", "push", "pull", "wait", "barrier", "link", "phase", "lost"};
  std::vector<timed> out;
  for (auto& e : trace)
    if (kinds.count(e.kind))
      out.emplace_back(e.kind, e.worker, e.t0, e.t1, e.iter, e.version);
  return out;
}

}  // namespace

TEST_CASE("simulate: the timeline is train's, event for event, for every protocol, with a straggler and a link") {
  for (auto& p : every_protocol) {
    CAPTURE(p);
    auto cfg = small_job(p);
    cfg.workers = 5;
    cfg.batch = 16;
    cfg.straggler = "1:x3;2:+4ms@0.05-0.2";
    cfg.ps_bandwidth = 2e6;  // a softmax model (31 kB) takes 15.7 ms: the link is contended
    cfg.latency_ms = 0.5;
    cfg.eval_every = 0;
    uint64_t k = 24;
    auto sim = simulate(cfg, k);
    cfg.train_limit = cfg.workers * cfg.batch;  // the same sample budget: workers x k batches
    cfg.epochs = static_cast<double>(k);
    auto real = train(cfg);
    CHECK(sim.as_model == "softmax");
    CHECK(sim.wire_bytes == 7850 * 4);
    CHECK(sim.run.summary.samples == real.summary.samples);
    CHECK(sim.run.summary.run_time_s == real.summary.run_time_s);
    CHECK(sim.run.summary.barriers == real.summary.barriers);
    auto a = timeline(sim.run.trace), b = timeline(real.trace);
    REQUIRE(a.size() == b.size());
    CHECK(a == b);
    CHECK(sim.run.profile.coordinator_pushes >= static_cast<uint64_t>(cfg.workers) * k);
    CHECK(sim.coordinator_us_per_push > 0);
  }
}

TEST_CASE("simulate: 512 workers of bsp wait for a 4x straggler every round, exactly") {
  job_config cfg;
  cfg.protocol = "bsp";
  cfg.workers = 512;
  cfg.straggler = "3:x4";
  cfg.iter_cost_ms = 2;
  cfg.progress = false;
  auto s = simulate(cfg, 20);
  auto& r = s.run.summary;
  CHECK(r.model == "timing-only");
  CHECK(r.samples == 512u * 20 * 64);
  CHECK(r.run_time_s == doctest::Approx(20 * 4 * 2e-3).epsilon(1e-9));
  CHECK(r.barriers == 19);
  CHECK(s.run.profile.coordinator_pushes == 512u * 20);
  for (auto& w : r.per_worker) {
    CHECK(w.iterations == 20);
    CHECK(w.compute_ratio == doctest::Approx(w.id == 3 ? 1.0 : 0.25).epsilon(1e-6));
  }
  // Reproducible: the same simulation, the same trace.
  CHECK(simulate(cfg, 20).run.trace.size() == s.run.trace.size());
}

TEST_CASE("simulate: what it cannot do is refused, naming it") {
  auto message = [](job_config cfg, uint64_t k) {
    try {
      simulate(cfg, k);
    } catch (const config_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  job_config cfg;
  cfg.progress = false;
  CHECK(message(cfg, 0) == "--iterations must be at least 1, and --iterations x --batch at most 1e6");
  CHECK(message(cfg, 20000) == "--iterations must be at least 1, and --iterations x --batch at most 1e6");
  auto real = cfg;
  real.clock = clock_kind::real;
  CHECK(message(real, 5) == "simulate runs on the virtual clock only (a real-clock run computes: use train)");
  auto measured = cfg;
  measured.internals.measure_iter_cost = true;
  CHECK(message(measured, 5) == "simulate charges a given or reference cost: --iter-cost measure is for train");
  auto unknown = cfg;
  unknown.protocol = "nope";
  CHECK(message(unknown, 5).find("unknown protocol 'nope'") == 0);
  auto many = cfg;
  many.workers = 5000;
  CHECK(message(many, 5) == "--workers must be in 1..4096");
}

// -- the coordinator's counts ------------------------------------------------------

namespace {

int count_mismatches = 0;
int count_checks = 0;

// ssp, checking at every callback that the coordinator's O(1) answers are
// what counting through live_workers() (the API's defaults) gives.
class counted_ssp : public protocol {
 public:
  explicit counted_ssp(const protocol_options&) : inner_(make_protocol("ssp", {})) {}
  void on_start(coordinator_api& c) override { check(c), inner_->on_start(c), check(c); }
  void on_push(coordinator_api& c, worker_id w) override { check(c), inner_->on_push(c, w), check(c); }
  void on_lost(coordinator_api& c, worker_id w) override { check(c), inner_->on_lost(c, w), check(c); }
  void on_joined(coordinator_api& c, worker_id w) override { check(c), inner_->on_joined(c, w), check(c); }
  void checkpoint(protocol_archive& ar) override { inner_->checkpoint(ar); }

 private:
  static void check(const coordinator_api& c) {
    ++count_checks;
    if (c.live_count() != c.coordinator_api::live_count() || c.waiting_count() != c.coordinator_api::waiting_count()
        || c.min_clock() != c.coordinator_api::min_clock())
      ++count_mismatches;
  }
  std::unique_ptr<protocol> inner_;
};

SYNCPOINT_REGISTER_PROTOCOL("test-counted-ssp", "ssp, checking the coordinator's counts (test)", counted_ssp);

}  // namespace

TEST_CASE("coordinator: its O(1) counts agree with counting, through a loss, a straggler and a resume") {
  count_mismatches = count_checks = 0;
  auto cfg = small_job("test-counted-ssp");
  cfg.straggler = "2:x3";
  cfg.internals.fail_worker = 1;
  cfg.internals.fail_at_iter = 20;
  cfg.eval_every = 0;
  auto dir = std::filesystem::temp_directory_path() / ("syncpoint_counts_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  cfg.checkpoint_dir = dir.string();
  cfg.checkpoint_every_s = 0.5;
  auto whole = train(cfg);
  CHECK(whole.summary.lost == 1);
  auto resumed_cfg = cfg;
  resumed_cfg.resume_dir = cfg.checkpoint_dir;
  auto resumed = train(resumed_cfg);
  CHECK(resumed.summary.samples == whole.summary.samples);
  std::filesystem::remove_all(dir);
  CHECK(count_checks > 300);  // two per callback: 250 pushes in the whole run, more resumed
  CHECK(count_mismatches == 0);
}
