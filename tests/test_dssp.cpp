// DSSP's exact decisions on scripted event sequences (examples/protocols/dssp.cpp).
// Times are set by hand: push_at(p, w, t) is worker w's push at time t.
#include "tests/protocol_recorder.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

using namespace syncpoint;
using syncpoint::testing::recorder;
using ids = std::vector<worker_id>;

namespace {

std::unique_ptr<protocol> make_dssp(long long s, long long r) {
  protocol_options o;
  o.set("staleness", s).set("dssp-range", r);
  return make_protocol("dssp", o);
}

std::unique_ptr<protocol> make_ssp(long long s) {
  protocol_options o;
  o.set("staleness", s);
  return make_protocol("ssp", o);
}

}  // namespace

TEST_CASE("dssp: with no timing history it decides exactly as ssp(s)") {
  SUBCASE("the clock never moves: no iteration has a length, the ssp script gives the ssp answers") {
    auto p = make_dssp(1, 4);
    recorder c(3);
    c.start(*p);
    CHECK(c.mode == ps_mode::immediate);
    CHECK(c.take() == ids{0, 1, 2});
    c.push(*p, 0);  // c = (1,0,0): 1 - 0 <= 1
    CHECK(c.take() == ids{0});
    c.push(*p, 0);  // (2,0,0): past s, no timing: held
    CHECK(c.take().empty());
    c.push(*p, 1);  // (2,1,0)
    CHECK(c.take() == ids{1});
    c.push(*p, 2);  // (2,1,1): the minimum advances
    CHECK(c.take() == ids{0, 2});
    c.push(*p, 1);  // (2,2,1)
    CHECK(c.take() == ids{1});
    c.push(*p, 1);  // (2,3,1): held
    CHECK(c.take().empty());
    c.push(*p, 0);  // (3,3,1): held
    CHECK(c.take().empty());
    c.push(*p, 2);  // (3,3,2)
    CHECK(c.take() == ids{0, 1, 2});
    CHECK(c.commits == 0);
  }
  SUBCASE("the clock never moves: random sequences give ssp's releases, step by step") {
    for (int s : {0, 1, 3})
      for (int r : {0, 4}) {
        auto p = make_dssp(s, r);
        auto q = make_ssp(s);
        recorder c(4), d(4);
        c.start(*p);
        d.start(*q);
        REQUIRE(c.take() == d.take());
        std::mt19937 rng(static_cast<unsigned>(10 * s + r + 1));
        for (int step = 0; step < 2000; ++step) {
          ids runnable;
          for (worker_id w = 0; w < 4; ++w)
            if (!c.waiting(w))
              runnable.push_back(w);
          REQUIRE(!runnable.empty());
          auto w = runnable[rng() % runnable.size()];
          c.push(*p, w);
          d.push(*q, w);
          REQUIRE(c.take() == d.take());
        }
      }
  }
  SUBCASE("time runs, but the slowest worker has not pushed yet") {
    auto p = make_dssp(1, 4);
    recorder c(3);
    c.start(*p);
    c.take();
    c.push_at(*p, 0, 1.0);  // (1,0,0)
    CHECK(c.take() == ids{0});
    c.push_at(*p, 1, 1.5);  // (1,1,0)
    CHECK(c.take() == ids{1});
    c.push_at(*p, 0, 2.0);  // (2,1,0): past s; worker 2 has no iteration time: held
    CHECK(c.take().empty());
    c.push_at(*p, 1, 2.5);  // (2,2,0): the same
    CHECK(c.take().empty());
    c.push_at(*p, 2, 10.0);  // (2,2,1): within s again
    CHECK(c.take() == ids{0, 1, 2});
  }
}

// Worker 0 takes 1.0 s an iteration, worker 1 takes 3.0 s; s = 1.
// Hand computation (d = mean iteration time, release to push; T = the slowest's
// next push = its last release + its d; a* = round((T - now) / d), ties down,
// capped at s + r + 1 - lag):
//   t=1  w0 (1,0) lag 1: within s, released.
//   t=2  w0 (2,0) lag 2: w1 has no iteration time yet: held, as SSP.
//   t=3  w1 (2,1): both released at 3.
//   t=4  w0 (3,1) lag 2 = s + 1: d0 = 1, T = 3 + 3 = 6, (6 - 4) / 1 = 2, cap r = 4:
//        r* = 2: released at t=4 and t=5, held at t=6 (its 2nd extra iteration
//        ends at 6, when the slowest is due).
//   t=6  w1 (5,2): the minimum advances; w0 lag 3, still past s: decided afresh:
//        T = 6 + 3 = 9, (9 - 6) / 1 = 3, cap s + r + 1 - 3 = 3: a* = 3:
//        released at 6, 7, 8; held at 9 with lag 6 = s + r + 1.
//   t=9  w1 (8,3): w0 lag 5: T = 12, (12 - 9) / 1 = 3, cap 6 - 5 = 1: a* = 1.
//   t=10 w0 (9,3) lag 6: held.
TEST_CASE("dssp: a fast worker at the bound runs the extra iterations that end nearest the slowest's push") {
  recorder c(2);
  SUBCASE("r = 4: granted 2, then 3 up to the bound s + r, then 1 at the bound") {
    auto p = make_dssp(1, 4);
    c.start(*p);
    CHECK(c.take() == ids{0, 1});
    c.push_at(*p, 0, 1.0);
    CHECK(c.take() == ids{0});
    c.push_at(*p, 0, 2.0);
    CHECK(c.take().empty());
    c.push_at(*p, 1, 3.0);
    CHECK(c.take() == ids{0, 1});
    c.push_at(*p, 0, 4.0);  // r* = 2: first extra iteration
    CHECK(c.take() == ids{0});
    c.push_at(*p, 0, 5.0);  // second
    CHECK(c.take() == ids{0});
    c.push_at(*p, 0, 6.0);  // no third
    CHECK(c.take().empty());
    c.push_at(*p, 1, 6.0);  // a* = 3
    CHECK(c.take() == ids{0, 1});
    for (double t : {7.0, 8.0}) {
      c.push_at(*p, 0, t);
      CHECK(c.take() == ids{0});
    }
    c.push_at(*p, 0, 9.0);  // (8,2): lag 6 = s + r + 1
    CHECK(c.take().empty());
    c.push_at(*p, 1, 9.0);  // (8,3) lag 5: a* = 1, the bound
    CHECK(c.take() == ids{0, 1});
    c.push_at(*p, 0, 10.0);  // (9,3) lag 6
    CHECK(c.take().empty());
  }
  SUBCASE("r = 1: the same run, never more than r past s") {
    auto p = make_dssp(1, 1);
    c.start(*p);
    c.take();
    c.push_at(*p, 0, 1.0);
    c.push_at(*p, 0, 2.0);
    c.push_at(*p, 1, 3.0);
    CHECK(c.take() == ids{0, 0, 1});
    c.push_at(*p, 0, 4.0);  // (3,1) lag 2: (6 - 4) / 1 = 2, capped at s + r + 1 - 2 = 1
    CHECK(c.take() == ids{0});
    c.push_at(*p, 0, 5.0);  // (4,1) lag 3 = s + r + 1
    CHECK(c.take().empty());
    c.push_at(*p, 1, 6.0);  // (4,2) lag 2: T = 9, (9 - 6) / 1 = 3, capped at 1
    CHECK(c.take() == ids{0, 1});
    c.push_at(*p, 0, 7.0);  // (5,2) lag 3
    CHECK(c.take().empty());
  }
  SUBCASE("the grant is counted, not predicted again at each push") {
    // As above, r* = 2 at t=4. Its extra iterations take 0.5 s; at t=5 a new
    // prediction would give (6 - 5) / mean(1, 0.5, 0.5) = 1.5 -> 1 more, but the
    // decision stands until the minimum advances: held.
    auto p = make_dssp(1, 4);
    c.start(*p);
    c.take();
    c.push_at(*p, 0, 1.0);
    c.push_at(*p, 0, 2.0);
    c.push_at(*p, 1, 3.0);
    c.push_at(*p, 0, 4.0);
    CHECK(c.take() == ids{0, 0, 1, 0});
    c.push_at(*p, 0, 4.5);
    CHECK(c.take() == ids{0});
    c.push_at(*p, 0, 5.0);
    CHECK(c.take().empty());
  }
  SUBCASE("a tie between two counts takes the smaller") {
    // Worker 1 takes 3.5 s. At t=4.5: T = 3.5 + 3.5 = 7, (7 - 4.5) / 1 = 2.5:
    // 2 iterations end at 6.5 and 3 at 7.5, both 0.5 s from T: r* = 2.
    auto p = make_dssp(1, 4);
    c.start(*p);
    c.take();
    c.push_at(*p, 0, 1.0);
    c.push_at(*p, 0, 2.0);
    c.push_at(*p, 1, 3.5);
    CHECK(c.take() == ids{0, 0, 1});
    c.push_at(*p, 0, 4.5);
    CHECK(c.take() == ids{0});
    c.push_at(*p, 0, 5.5);
    CHECK(c.take() == ids{0});
    c.push_at(*p, 0, 6.5);
    CHECK(c.take().empty());
  }
}

TEST_CASE("dssp: with several workers at the minimum, the slowest push is the latest of theirs") {
  // Worker 0 takes 1 s, worker 1 3 s, worker 2 4 s; s = 1, r = 4.
  auto p = make_dssp(1, 4);
  recorder c(3);
  c.start(*p);
  c.take();
  c.push_at(*p, 0, 1.0);  // (1,0,0)
  CHECK(c.take() == ids{0});
  c.push_at(*p, 0, 2.0);  // (2,0,0): no timing for 1 and 2: held
  CHECK(c.take().empty());
  c.push_at(*p, 1, 3.0);  // (2,1,0)
  CHECK(c.take() == ids{1});
  c.push_at(*p, 2, 4.0);  // (2,1,1)
  CHECK(c.take() == ids{0, 2});
  // t=5 (3,1,1) lag 2: workers 1 and 2 are at the minimum, due at 3 + 3 = 6 and
  // 4 + 4 = 8; the minimum advances at T = 8: (8 - 5) / 1 = 3 extra iterations
  // (by worker 1 alone it would be 1).
  c.push_at(*p, 0, 5.0);
  CHECK(c.take() == ids{0});
  c.push_at(*p, 0, 6.0);
  CHECK(c.take() == ids{0});
  c.push_at(*p, 1, 6.0);  // (4,2,1): worker 1 within s; the minimum is still 1
  CHECK(c.take() == ids{1});
  c.push_at(*p, 0, 7.0);
  CHECK(c.take() == ids{0});
  c.push_at(*p, 0, 8.0);  // (6,2,1): its 3 are done
  CHECK(c.take().empty());
  // t=8 worker 2 (6,2,2): worker 0 lag 4. At the minimum: worker 1, due at 6 + 3 = 9,
  // and worker 2, released now, due at 8 + 4 = 12: (12 - 8) / 1 = 4, capped at
  // s + r + 1 - 4 = 2.
  c.push_at(*p, 2, 8.0);
  CHECK(c.take() == ids{0, 2});
  c.push_at(*p, 0, 9.0);
  CHECK(c.take() == ids{0});
  c.push_at(*p, 0, 10.0);  // (8,2,2) lag 6
  CHECK(c.take().empty());
}

TEST_CASE("dssp: losing the slowest worker releases those it held, and the next slowest times the rest") {
  // Worker 0 takes 1 s, worker 1 2 s; worker 2 never pushes. s = 1, r = 4.
  auto p = make_dssp(1, 4);
  recorder c(3);
  c.start(*p);
  c.take();
  c.push_at(*p, 0, 1.0);  // (1,0,0)
  CHECK(c.take() == ids{0});
  c.push_at(*p, 0, 2.0);  // (2,0,0): worker 2 has no timing: held
  c.push_at(*p, 1, 2.0);  // (2,1,0)
  CHECK(c.take() == ids{1});
  c.push_at(*p, 1, 4.0);  // (2,2,0): held too
  CHECK(c.take().empty());
  c.advance(*p, 5.0);
  c.lose(*p, 2);  // the minimum is now 2
  CHECK(c.take() == ids{0, 1});
  c.push_at(*p, 0, 6.0);  // (3,2)
  CHECK(c.take() == ids{0});
  // (4,2) lag 2: worker 1, released at 5 with iterations of 2 s, is due at 7 = now: no extra iteration.
  c.push_at(*p, 0, 7.0);
  CHECK(c.take().empty());
  c.push_at(*p, 1, 7.0);  // (4,3)
  CHECK(c.take() == ids{0, 1});
  c.lose(*p, 1);
  c.lose(*p, 0);  // nobody left: nothing to do
  CHECK(c.take().empty());
}

TEST_CASE("dssp: on random timed runs nobody within s waits, nobody starts more than s + r ahead, r = 0 is ssp") {
  const std::vector<double> period{1.0, 1.5, 2.0, 4.0};
  for (int s : {0, 1, 2})
    for (int r : {0, 2, 5}) {
      CAPTURE(s);
      CAPTURE(r);
      auto p = make_dssp(s, r);
      auto q = make_ssp(s);
      recorder c(4), d(4);
      c.start(*p);
      d.start(*q);
      std::mt19937 rng(static_cast<unsigned>(100 * s + r));
      std::uniform_real_distribution<double> jitter(0.8, 1.2);
      std::vector<double> due(4);
      auto run = [&](const ids& released) {
        for (auto w : released)
          due[static_cast<size_t>(w)] = c.time + period[static_cast<size_t>(w)] * jitter(rng);
      };
      run(c.take());
      d.take();
      for (int step = 0; step < 2000; ++step) {
        worker_id next = -1;
        for (worker_id w = 0; w < 4; ++w)
          if (!c.waiting(w) && (next < 0 || due[static_cast<size_t>(w)] < due[static_cast<size_t>(next)]))
            next = w;
        REQUIRE(next >= 0);  // never a deadlock
        double t = due[static_cast<size_t>(next)];
        c.push_at(*p, next, t);
        auto released = c.take();
        auto slowest = *std::min_element(c.clock_.begin(), c.clock_.end());
        for (worker_id w = 0; w < 4; ++w) {
          auto lag = c.clock_[static_cast<size_t>(w)] - slowest;
          if (c.waiting(w))
            CHECK(lag > static_cast<uint64_t>(s));
          if (std::find(released.begin(), released.end(), w) != released.end())
            CHECK(lag <= static_cast<uint64_t>(s + r));
        }
        if (r == 0) {
          d.push_at(*q, next, t);
          REQUIRE(d.take() == released);
        }
        run(released);
      }
    }
}

TEST_CASE("dssp: options: staleness shared with ssp, dssp-range >= 0, both in the label") {
  auto refused = [](protocol_options o) -> std::string {
    try {
      make_protocol("dssp", o);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  CHECK_THROWS_AS(make_dssp(3, -1), std::invalid_argument);
  CHECK(refused(protocol_options{}.set("dssp-range", -1)) == "invalid value in '--dssp-range=-1' (must be in 0..1e+09)");
  CHECK(refused(protocol_options{}.set("dssp-range", "two")) == "invalid value in '--dssp-range=two' (expected an integer)");
  CHECK(refused(protocol_options{}.set("staleness", -1)) == "invalid value in '--staleness=-1' (must be in 0..1e+09)");
  CHECK(refused(protocol_options{}) == "accepted");
  CHECK(refused(protocol_options{}.set("dssp-range", 0)) == "accepted");
  CHECK(protocol_label("dssp", {}) == "dssp(s=3,r=4)");
  CHECK(protocol_label("dssp", protocol_options{}.set("staleness", 2).set("dssp-range", 6)) == "dssp(s=2,r=6)");
  auto shared = all_protocol_options().at("staleness");
  CHECK(shared.second == std::vector<std::string>{"dssp", "ssp"});
  CHECK(shared.first.type == option_spec::kind::integer);
  CHECK(shared.first.short_name == "s");
}
