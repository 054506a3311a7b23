// R²SP on scripted timelines: a worker released at r pushes at r + its cycle
// time (which may depend on its batch); the protocol's releases are checked.
#include <syncpoint/train.hpp>
#include "tests/protocol_recorder.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>

using namespace syncpoint;
using syncpoint::testing::recorder;

namespace {

using cycle_fn = std::function<double(worker_id, uint32_t batch, double t)>;

struct timeline {
  recorder c;
  std::unique_ptr<protocol> p;
  cycle_fn cycle;
  std::vector<double> push_at;
  size_t seen = 0;

  timeline(int n, protocol_options o, cycle_fn f)
    : c(n), p(make_protocol("r2sp", o)), cycle(std::move(f)),
      push_at(static_cast<size_t>(n), std::numeric_limits<double>::infinity()) {
    c.start(*p);
    absorb();
  }

  void absorb() {  // a release at r means a push at r + cycle
    for (; seen < c.release_log.size(); ++seen) {
      auto [w, r] = c.release_log[seen];
      push_at[static_cast<size_t>(w)] = r + cycle(w, c.batch(w), r);
    }
  }

  void run_until(double end, std::function<void(double)> at = {}) {
    for (;;) {
      double next_release = std::numeric_limits<double>::infinity();
      for (auto& kv : c.scheduled)
        next_release = std::min(next_release, kv.second.first);
      auto w = static_cast<worker_id>(std::min_element(push_at.begin(), push_at.end()) - push_at.begin());
      double next_push = push_at[static_cast<size_t>(w)];
      double next = std::min(next_release, next_push);
      if (next > end)
        break;
      if (at)
        at(next);
      if (next_release <= next_push) {
        c.advance(*p, next_release);
      } else {
        push_at[static_cast<size_t>(w)] = std::numeric_limits<double>::infinity();
        if (c.live(w))
          c.push_at(*p, w, next_push);
      }
      absorb();
    }
  }

  std::vector<double> releases(worker_id w, double from) const {
    std::vector<double> out;
    for (auto& [v, t] : c.release_log)
      if (v == w && t >= from)
        out.push_back(t);
    return out;
  }
  std::vector<double> all_releases(double from) const {
    std::vector<double> out;
    for (auto& [v, t] : c.release_log)
      if (t >= from)
        out.push_back(t);
    std::sort(out.begin(), out.end());
    return out;
  }
};

protocol_options opts(int retune, bool tune) {
  protocol_options o;
  o.set("retune", retune).set("tune-batch", tune ? "on" : "off");
  return o;
}

void check_spacing(const std::vector<double>& ts, double gap) {
  REQUIRE(ts.size() > 4);
  for (size_t i = 1; i < ts.size(); ++i)
    CHECK(ts[i] - ts[i - 1] == doctest::Approx(gap).epsilon(1e-6));
}

}  // namespace

TEST_CASE("r2sp: after the measuring round, releases (and so pushes) are spaced T/n apart") {
  timeline tl(4, opts(2, false), [](worker_id, uint32_t, double) { return 1.0; });
  tl.run_until(10);
  check_spacing(tl.all_releases(2.0), 0.25);  // T = 1, n = 4
  CHECK(tl.c.mode == ps_mode::immediate);     // pushes are applied on arrival
}

TEST_CASE("r2sp: an early worker waits for its slot, the slowest sets the period") {
  // Worker 0 cycles in 0.4 s, the others in 1 s: T = 1 and worker 0 is held 0.6 s each time.
  timeline tl(4, opts(2, false), [](worker_id w, uint32_t, double) { return w == 0 ? 0.4 : 1.0; });
  tl.run_until(10);
  check_spacing(tl.releases(0, 3.0), 1.0);
  check_spacing(tl.all_releases(3.0), 0.25);
}

TEST_CASE("r2sp: a lost worker's slot is given up and the others rebalance") {
  timeline tl(4, opts(2, false), [](worker_id, uint32_t, double) { return 1.0; });
  tl.run_until(3.1);
  tl.c.lose(*tl.p, 3);
  tl.run_until(12);
  check_spacing(tl.all_releases(6.0), 1.0 / 3);  // three slots in a period of 1 s
}

TEST_CASE("r2sp: the period follows a change of speed after --retune rounds") {
  // Every cycle takes 1 s until t = 5, then 2 s.
  timeline tl(4, opts(3, false), [](worker_id, uint32_t, double t) { return t < 5 ? 1.0 : 2.0; });
  tl.run_until(40);
  check_spacing(tl.releases(1, 20.0), 2.0);
  check_spacing(tl.all_releases(20.0), 0.5);
}

TEST_CASE("r2sp: batch sizes follow measured speed within the bounds, weights sum to 1, cycles equalize") {
  // Cycle = batch/64 x slowdown (1, 1, 2, 3): speeds are 64, 64, 32, 21.3 samples/s.
  std::vector<double> slow{1, 1, 2, 3};
  auto f = [&](worker_id w, uint32_t b, double) { return b / 64.0 * slow[static_cast<size_t>(w)]; };
  timeline tl(4, opts(2, true), f);
  tl.run_until(30);
  // b_i = round(256 x v_i / sum v) = 90, 90, 45, 30 (B = 4 x 64).
  CHECK(tl.c.batch(0) == 90);
  CHECK(tl.c.batch(1) == 90);
  CHECK(tl.c.batch(2) == 45);
  CHECK(tl.c.batch(3) == 30);
  double sum = 0;
  for (worker_id w = 0; w < 4; ++w)
    sum += tl.c.weight(w);
  CHECK(sum == doctest::Approx(1.0));
  CHECK(tl.c.weight(0) == doctest::Approx(90.0 / 255));
  // Equal cycles (about 1.41 s): every worker is released once per period.
  auto r0 = tl.releases(0, 15), r3 = tl.releases(3, 15);
  CHECK(r0[1] - r0[0] == doctest::Approx(r3[1] - r3[0]).epsilon(0.02));

  auto clamped = opts(2, true);
  clamped.set("min-batch", 40).set("max-batch", 80);
  timeline tc(4, clamped, f);
  tc.run_until(30);
  CHECK(tc.c.batch(0) == 80);
  CHECK(tc.c.batch(3) == 40);
  for (worker_id w = 0; w < 4; ++w) {
    CHECK(tc.c.batch(w) >= 40);
    CHECK(tc.c.batch(w) <= 80);
  }
}

TEST_CASE("r2sp: without tuning the batches stay as given") {
  std::vector<double> slow{1, 1, 2, 3};
  timeline tl(4, opts(2, false), [&](worker_id w, uint32_t b, double) { return b / 64.0 * slow[static_cast<size_t>(w)]; });
  tl.run_until(30);
  for (worker_id w = 0; w < 4; ++w)
    CHECK(tl.c.batch(w) == 64);
  check_spacing(tl.releases(0, 15), 3.0);  // the slowest (3 s) sets the period
}

#include "models/shard_sampler.hpp"

#include <set>

TEST_CASE("shard: with batch sizes that change, every pass covers the shard exactly once") {
  shard_sampler s(1003, 4, 3, 7);  // worker 3 of 4: examples 3, 7, ..., 999 (250 of them)
  REQUIRE(s.shard_size() == 250);
  std::vector<int64_t> seen;
  uint32_t sizes[] = {64, 90, 45, 30, 8, 128, 77};  // as batch tuning might give them
  for (int k = 0; seen.size() < 5 * s.shard_size(); ++k)
    for (uint32_t i = 0; i < sizes[k % 7]; ++i)
      seen.push_back(s.next());
  for (size_t pass = 0; pass < 5; ++pass) {
    std::set<int64_t> once(seen.begin() + static_cast<long>(pass * 250),
                           seen.begin() + static_cast<long>((pass + 1) * 250));
    CHECK(once.size() == 250);  // nothing skipped, nothing twice within the pass
    CHECK(*once.begin() == 3);
    CHECK(*once.rbegin() == 999);
    for (auto i : once)
      CHECK(i % 4 == 3);
  }
}

TEST_CASE("shard: a peek shows the next draws without taking them, within the pass") {
  // A worker gathers its next batch while it waits for a reply (actors/worker_step.cpp):
  // the batch must be the one it would draw, whatever batch size comes next.
  shard_sampler s(1003, 4, 3, 7), twin(1003, 4, 3, 7);
  for (int i = 0; i < 240; ++i)
    CHECK(s.next() == twin.next());
  REQUIRE(s.can_peek(10));
  CHECK_FALSE(s.can_peek(11));  // the pass has 10 left; an 11th would be reshuffled
  std::vector<int64_t> peeked;
  for (uint64_t i = 0; i < 10; ++i)
    peeked.push_back(s.peek(i));
  CHECK(s.draws() == 240);
  CHECK(s.rng_state() == twin.rng_state());
  for (auto p : peeked)
    CHECK(p == twin.next());
  s.advance(10);
  CHECK(s.draws() == twin.draws());
  CHECK(s.next() == twin.next());  // the reshuffled pass, the same on both
  CHECK(s.can_peek(249));
}

TEST_CASE("r2sp: a push a little late is released at once and keeps its place on the grid") {
  // Worker 2 is 5% slower than the period once in a while (every 4th cycle).
  int k = 0;
  timeline tl(4, opts(100, false), [&](worker_id w, uint32_t, double t) {
    return w == 2 && t > 3 && (++k % 4 == 0) ? 1.05 : 1.0;
  });
  tl.run_until(30);
  auto r = tl.releases(2, 5.0);
  REQUIRE(r.size() > 10);
  for (size_t i = 1; i < r.size(); ++i)  // never a skipped period
    CHECK(r[i] - r[i - 1] < 1.06);
  auto r0 = tl.releases(0, 5.0);
  check_spacing(r0, 1.0);  // the others are undisturbed
}

TEST_CASE("r2sp: trains end to end on both clocks, with a link and two slower workers" * doctest::test_suite("real-clock")) {
  for (auto clock : {clock_kind::virtual_time, clock_kind::real}) {
    auto cfg = syncpoint::testing::small_job("r2sp");
    cfg.clock = clock;
    cfg.straggler = "2:x2;3:x3";
    cfg.ps_bandwidth = 50e6;
    cfg.momentum = 0;
    auto r = train(cfg);
    CHECK(r.summary.final_accuracy > 0.85);
    CHECK(r.summary.samples >= 8000);
    CHECK(r.summary.link_utilization > 0);
    CHECK(r.summary.lost == 0);
  }
}
