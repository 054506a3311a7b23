// ElasticBSP's decisions on scripted push sequences.
#include "protocols/elastic_bsp/zipline.hpp"
#include "tests/protocol_recorder.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace syncpoint;
using syncpoint::testing::recorder;
using ids = std::vector<worker_id>;

namespace {

std::unique_ptr<protocol> make(int lookahead = 6, int window = 1) {
  protocol_options o;
  o.set("lookahead", lookahead);
  o.set("interval-window", window);
  return make_protocol("elastic-bsp", o);
}

// Plays one monitoring phase: worker i pushes at multiples of period[i]
// (starting at `t0 + period[i]`) until every worker has pushed twice. Returns
// the worker whose push completed monitoring. Checks nobody is held before.
worker_id monitor(protocol& p, recorder& c, const std::vector<double>& period, double t0,
                  std::vector<int>& pushes) {
  struct ev {
    double t;
    worker_id w;
  };
  std::vector<ev> evs;
  for (worker_id w = 0; w < static_cast<worker_id>(period.size()); ++w)
    for (int k = 1; k <= 40; ++k)
      evs.push_back({t0 + k * period[w], w});
  std::stable_sort(evs.begin(), evs.end(), [](const ev& a, const ev& b) { return a.t < b.t; });
  for (auto& e : evs) {
    c.push_at(p, e.w, e.t);
    ++pushes[e.w];
    bool all_twice = std::all_of(pushes.begin(), pushes.end(), [](int n) { return n >= 2; });
    if (all_twice)
      return e.w;
    REQUIRE_MESSAGE(c.take() == ids{e.w}, "held during monitoring at t=" << e.t);
  }
  FAIL("monitoring never completed");
  return -1;
}

}  // namespace

TEST_CASE("elastic-bsp: no barrier before every worker pushed twice, stops are ZipLine's") {
  auto p = make(6);
  recorder c(3);
  c.start(*p);
  c.take();
  std::vector<double> period{1.0, 1.5, 4.0};
  std::vector<int> pushes(3, 0);
  worker_id trigger = monitor(*p, c, period, 0.0, pushes);
  CHECK(trigger == 2);  // the slowest completes monitoring, at t = 8
  // The predicted matrix, built by hand from the rule in elastic_bsp.cpp.
  zipline_matrix m(3, 6);
  for (worker_id w = 0; w < 3; ++w) {
    double b = pushes[w] * period[w];  // last push
    double first = w == trigger ? 0 : 1;
    for (size_t r = 0; r < 6; ++r)
      m.at(w, r) = b + (r + first) * period[w];
  }
  auto z = zipline(m, zipline_variant::opt_bs);
  // Play on: each worker keeps pushing at its period; it must be held exactly
  // at its predicted stop, not before.
  std::vector<int> stop(3);
  for (worker_id w = 0; w < 3; ++w)
    stop[w] = pushes[w] + static_cast<int>(z.stops[w]) + (w == trigger ? 0 : 1);
  auto released = c.take();
  CHECK((std::find(released.begin(), released.end(), trigger) != released.end())
        == (pushes[trigger] < stop[trigger]));
  struct ev {
    double t;
    worker_id w;
  };
  std::vector<ev> evs;
  for (worker_id w = 0; w < 3; ++w)
    for (int k = pushes[w] + 1; k <= stop[w]; ++k)
      evs.push_back({k * period[w], w});
  std::stable_sort(evs.begin(), evs.end(), [](const ev& a, const ev& b) { return a.t < b.t; });
  int held = pushes[trigger] >= stop[trigger] ? 1 : 0;
  for (size_t i = 0; i < evs.size(); ++i) {
    auto& e = evs[i];
    c.push_at(*p, e.w, e.t);
    ++pushes[e.w];
    auto rel = c.take();
    if (pushes[e.w] < stop[e.w]) {
      CHECK(rel == ids{e.w});  // not at its stop yet: runs on
    } else if (++held < 3) {
      CHECK(rel.empty());  // at its stop: waits while others continue
    } else {
      CHECK(i + 1 == evs.size());
      CHECK(rel == ids{0, 1, 2});  // the last one closes the barrier: everyone pulls
      CHECK(std::all_of(c.pulled.begin(), c.pulled.end(), [](bool b) { return b; }));
    }
  }
  CHECK(held == 3);
  // The barrier time is ZipLine's.
  CHECK(c.time == doctest::Approx(z.barrier));
}

TEST_CASE("elastic-bsp: the barrier releases everyone in one event, so all pull one version") {
  auto p = make(1);  // look-ahead 1: stop at the first opportunity
  recorder c(2);
  c.start(*p);
  c.take();
  c.push_at(*p, 0, 1);
  c.push_at(*p, 1, 2);
  c.push_at(*p, 0, 2);
  CHECK(c.take() == ids{0, 1, 0});
  c.push_at(*p, 1, 4);  // monitoring done; worker 1 stops now, worker 0 at its next push
  CHECK(c.take().empty());
  c.push_at(*p, 0, 3);
  CHECK(c.pulled == std::vector<bool>{true, true});
  CHECK(c.take() == ids{0, 1});
  // The next cycle monitors afresh.
  c.push_at(*p, 0, 4);
  CHECK(c.take() == ids{0});
}

TEST_CASE("elastic-bsp: a worker lost while others wait at the barrier does not hang them") {
  auto p = make(1);
  recorder c(3);
  c.start(*p);
  c.take();
  for (worker_id w = 0; w < 3; ++w)
    c.push_at(*p, w, 1 + w);
  c.push_at(*p, 0, 4);
  c.push_at(*p, 1, 5);
  CHECK(c.take() == ids{0, 1, 2, 0, 1});
  c.push_at(*p, 2, 6);  // monitoring complete: 2 stops now, 0 and 1 at their next push
  CHECK(c.take().empty());
  c.push_at(*p, 0, 7);
  CHECK(c.take().empty());
  c.lose(*p, 1);  // 1 never reaches its stop
  CHECK(c.take() == ids{0, 2});
}

TEST_CASE("elastic-bsp: a worker that changes speed is re-predicted from recent pushes only") {
  auto p = make(8, 8);  // up to 8 intervals averaged, but never across a barrier
  recorder c(2);
  c.start(*p);
  c.take();
  // Cycle 1: worker 0 slow (period 5), worker 1 fast (period 1).
  for (int t = 1; t <= 9; ++t) {
    c.push_at(*p, 1, t);
    if (t == 5)
      c.push_at(*p, 0, 5);
  }
  CHECK(c.take().size() == 10);
  c.push_at(*p, 0, 10);  // monitoring done: rows 10,15,.. and 10,11,..: both stop at 10
  CHECK(c.take().empty());
  c.push_at(*p, 1, 10);
  CHECK(c.take() == ids{0, 1});
  // Cycle 2: worker 0 fast now (period 1), worker 1 slower (period 2.5).
  c.push_at(*p, 0, 11);
  c.push_at(*p, 0, 12);
  c.push_at(*p, 1, 12.5);
  c.push_at(*p, 0, 13);
  c.push_at(*p, 0, 14);
  CHECK(c.take() == ids{0, 0, 1, 0, 0});
  c.push_at(*p, 1, 15);  // monitoring done. Worker 0's interval is 1 (cycle 2 only; an
                         // average reaching back to its push at 5 would be 1.8, and
                         // ZipLine would then pick 17.5/17.6 and release worker 1), so
                         // its row is 15,16,..: worker 1 holds, worker 0 stops at 15.
  CHECK(c.take().empty());
  c.push_at(*p, 0, 15);
  CHECK(c.take() == ids{0, 1});
}

TEST_CASE("elastic-bsp: bad options are refused") {
  protocol_options o;
  o.set("lookahead", 0);
  CHECK_THROWS_AS(make_protocol("elastic-bsp", o), std::invalid_argument);
  o = {};
  o.set("zipline-variant", "fastest");
  CHECK_THROWS_WITH_AS(make_protocol("elastic-bsp", o),
                       "invalid value in '--zipline-variant=fastest' (valid: zipline, zipline-opt, zipline-opt-bs)",
                       std::invalid_argument);
}
