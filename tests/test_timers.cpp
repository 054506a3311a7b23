// The protocol API's clock: releases and timers at exact times (virtual
// clock), and batch sizes with their gradient weights.
#include <syncpoint/train.hpp>
#include "core/link_model.hpp"
#include "tests/protocol_recorder.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <map>

using namespace syncpoint;
using syncpoint::testing::small_job;

namespace {

// Holds every worker after each push until an odd, off-grid time, and sets a
// timer at another; records both.
class timed_release : public protocol {
 public:
  explicit timed_release(const protocol_options&) {}
  void on_push(coordinator_api& c, worker_id w) override {
    double t = c.now() + 0.0123456789 + 0.001 * w;
    scheduled.emplace_back(w, t);
    c.release_at(w, t);
    if (c.clock(w) == 2) {
      timer_set.push_back(c.now() + 0.5 / 3);
      c.set_timer(timer_set.back(), static_cast<uint64_t>(w));
    }
  }
  void on_timer(coordinator_api& c, uint64_t tag) override { timer_fired.emplace_back(tag, c.now()); }
  static inline std::vector<std::pair<worker_id, double>> scheduled;
  static inline std::vector<double> timer_set;
  static inline std::vector<std::pair<uint64_t, double>> timer_fired;
};
SYNCPOINT_REGISTER_PROTOCOL("test-timed-release", "releases at odd times (test)", timed_release);

nanos ns(double t) {
  return static_cast<nanos>(std::llround(t * 1e9));
}

}  // namespace

TEST_CASE("timers: a release scheduled at t happens at exactly t in virtual time, and so does a timer") {
  timed_release::scheduled.clear();
  timed_release::timer_set.clear();
  timed_release::timer_fired.clear();
  auto cfg = small_job("test-timed-release");
  cfg.epochs = 1;
  auto r = train(cfg);
  REQUIRE(timed_release::scheduled.size() > 50);
  // Each release ends the worker's wait at that nanosecond: its next pull starts then.
  std::map<worker_id, std::vector<nanos>> pulls;
  for (auto& ev : r.trace)
    if (ev.kind == "pull")
      pulls[ev.worker].push_back(ev.t0);
  size_t exact = 0;
  for (auto& [w, t] : timed_release::scheduled) {
    auto& starts = pulls[w];
    if (std::find(starts.begin(), starts.end(), ns(t)) != starts.end())
      ++exact;
  }
  // Every release before the budget ran out (the last pushes are answered with "stop").
  CHECK(exact + static_cast<size_t>(cfg.workers) >= timed_release::scheduled.size());
  CHECK(exact > 50);
  REQUIRE(timed_release::timer_fired.size() == timed_release::timer_set.size());
  for (size_t i = 0; i < timed_release::timer_set.size(); ++i)
    CHECK(ns(timed_release::timer_fired[i].second) == ns(timed_release::timer_set[i]));
  // Deterministic: the same run gives the same trace.
  auto again = train(cfg);
  CHECK(again.trace.size() == r.trace.size());
}

TEST_CASE("timers: the recorder fires releases and timers in time order, a loss cancels a release") {
  syncpoint::testing::recorder c(3);
  timed_release p{protocol_options{}};
  timed_release::scheduled.clear();
  c.release(0, true);
  c.release(1, true);
  c.release(2, true);
  c.take();
  c.push_at(p, 0, 1.0);  // release at 1.0123...
  c.push_at(p, 1, 1.0);  // at 1.0133...
  c.push_at(p, 2, 1.0);  // at 1.0143...
  CHECK(c.take().empty());
  c.lose(p, 1);
  c.advance(p, 1.0130);
  CHECK(c.take() == std::vector<worker_id>{0});
  c.advance(p, 2.0);
  CHECK(c.take() == std::vector<worker_id>{2});  // 1 was lost: its release never comes
  CHECK(c.release_log.back().second == doctest::Approx(1.0143456789));
}

TEST_CASE("batches: per-worker batch sizes set the gradient weights b_i / sum b") {
  syncpoint::testing::recorder c(3);
  c.set_batch(0, 32);
  c.set_batch(1, 64);
  c.set_batch(2, 96);
  CHECK(c.weight(0) + c.weight(1) + c.weight(2) == doctest::Approx(1.0));
  CHECK(c.weight(2) == doctest::Approx(0.5));
}

namespace {
// Gives worker w a batch of 32 * (w + 1) from the start.
class graded_batches : public protocol {
 public:
  explicit graded_batches(const protocol_options&) {}
  void on_start(coordinator_api& c) override {
    for (auto w : c.live_workers())
      c.set_batch(w, static_cast<uint32_t>(32 * (w + 1)));
    protocol::on_start(c);
  }
  void on_push(coordinator_api& c, worker_id w) override { c.release(w); }
};
SYNCPOINT_REGISTER_PROTOCOL("test-graded-batches", "batch 32(w+1) per worker (test)", graded_batches);
}  // namespace

TEST_CASE("batches: a batch set by the protocol reaches the worker (virtual compute time scales with it)") {
  auto cfg = small_job("test-graded-batches");  // 10 ms per iteration at batch 64
  cfg.epochs = 0.5;
  auto r = train(cfg);
  std::map<worker_id, nanos> span;
  for (auto& ev : r.trace)
    if (ev.kind == "compute")
      span[ev.worker] = ev.t1 - ev.t0;
  CHECK(span[0] == 5000000);   // 32 examples
  CHECK(span[1] == 10000000);  // 64
  CHECK(span[3] == 20000000);  // 128
  CHECK(r.summary.final_accuracy > 0.8);
}

TEST_CASE("link: --ps-bandwidth accepts units") {
  CHECK(*parse_bandwidth("400e6") == 400e6);
  CHECK(*parse_bandwidth("25MB/s") == 25e6);
  CHECK(*parse_bandwidth("1Gbit/s") == 125e6);
  CHECK(*parse_bandwidth("100 Mbps") == 12.5e6);
  CHECK(*parse_bandwidth("2GiB/s") == 2.0 * 1024 * 1024 * 1024);
  CHECK(*parse_bandwidth("800kB/s") == 800e3);
  CHECK(*parse_bandwidth("10Gb/s") == 1.25e9);
  CHECK(*parse_bandwidth("64KiB") == 65536);
  for (auto bad : {"", "fast", "25XB/s", "-5MB/s", "MB/s", "1e400", "25MB/h"})
    CHECK_MESSAGE(!parse_bandwidth(bad), bad);
}

#include "actors/coordinator.hpp"

TEST_CASE("batches: the coordinator sends the PS weights b_i / sum b, summing to 1 over the live workers") {
  caf::actor_system_config cfg;
  register_messages(cfg);
  caf::actor_system sys{cfg};
  caf::scoped_actor ps{sys};  // stands in for the PS: sees what the coordinator sends it
  std::vector<std::unique_ptr<caf::scoped_actor>> workers;
  std::vector<worker_actor> handles;
  for (int i = 0; i < 4; ++i) {
    workers.push_back(std::make_unique<caf::scoped_actor>(sys));
    handles.push_back(caf::actor_cast<worker_actor>(workers.back()->ptr()));
  }
  auto co = std::make_shared<coordinator_config>();
  co->protocol_name = "test-graded-batches";
  co->proto = make_protocol("test-graded-batches", {});
  co->workers = 4;
  co->batch = 64;
  co->sample_budget = 1 << 20;
  co->ps = ps_group::one(caf::actor_cast<ps_actor>(ps.ptr()));
  co->origin = sys.clock().now();
  auto coordinator = spawn_coordinator(sys, co);
  ps->send(coordinator, start_atom::value, handles, evaluator_actor{});
  std::vector<float> last;
  bool done = false;
  while (!done)
    ps->receive([&](weights_atom, std::vector<float>& w) { last = w; },
                [&](attach_atom, coordinator_actor&, std::vector<worker_actor>&) {},
                [&](mode_atom, uint8_t) { done = true; },  // on_start sets the mode after the batches
                caf::after(std::chrono::seconds(120)) >> [&] { FAIL("no mode change within 120 s (a hang)"); });
  REQUIRE(last.size() == 4);  // batches 32, 64, 96, 128: sum 320
  CHECK(last[0] == doctest::Approx(32.0 / 320));
  CHECK(last[3] == doctest::Approx(128.0 / 320));
  CHECK(last[0] + last[1] + last[2] + last[3] == doctest::Approx(1.0));
  for (auto& w : workers)  // each got its batch with the start
    (*w)->receive([&](const proceed& p) { CHECK(p.batch % 32 == 0); CHECK(p.batch > 0); },
                  caf::after(std::chrono::seconds(120)) >> [] { FAIL("a worker got no start within 120 s"); });
  ps->send_exit(coordinator, caf::exit_reason::user_shutdown);
}
