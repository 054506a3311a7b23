// Exact protocol decisions on scripted event sequences.
#include "tests/protocol_recorder.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

using namespace syncpoint;
using syncpoint::testing::recorder;
using ids = std::vector<worker_id>;

namespace {

std::unique_ptr<protocol> make(const std::string& name, int staleness = 3) {
  protocol_options o;
  o.staleness = staleness;
  return make_protocol(name, o);
}

}  // namespace

TEST_CASE("registry: unknown protocol names the valid ones") {
  try {
    make("nope");
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    CHECK(msg.find("unknown protocol 'nope'") != std::string::npos);
    std::string valid;
    for (auto& kv : protocol_catalog())  // every registered name, in order
      valid += (valid.empty() ? "" : ", ") + kv.first;
    CHECK(msg == "unknown protocol 'nope' (valid: " + valid + ")");
    CHECK(valid.find("asp, bsp, elastic-bsp, ssp") == 0);
  }
  CHECK_THROWS_AS(make("ssp", -1), std::invalid_argument);
}

TEST_CASE("bsp: nobody is released until every live worker pushed") {
  auto p = make("bsp");
  recorder c(4);
  c.start(*p);
  CHECK(c.mode == ps_mode::buffered);
  CHECK(c.take() == ids{0, 1, 2, 3});
  for (int round = 1; round <= 3; ++round) {
    c.push(*p, 2);
    c.push(*p, 0);
    c.push(*p, 3);
    CHECK(c.take().empty());
    CHECK(c.commits == round - 1);
    c.push(*p, 1);
    CHECK(c.commits == round);
    CHECK(c.take() == ids{0, 1, 2, 3});
  }
}

TEST_CASE("bsp: a worker lost mid-round does not hang the barrier") {
  auto p = make("bsp");
  recorder c(4);
  c.start(*p);
  c.take();
  c.push(*p, 0);
  c.push(*p, 1);
  c.push(*p, 2);
  CHECK(c.take().empty());
  c.lose(*p, 3);
  CHECK(c.commits == 1);
  CHECK(c.take() == ids{0, 1, 2});
  // The next rounds are over the three survivors.
  c.push(*p, 1);
  c.push(*p, 0);
  CHECK(c.take().empty());
  c.push(*p, 2);
  CHECK(c.take() == ids{0, 1, 2});
  CHECK(c.commits == 2);
}

TEST_CASE("bsp: losing a worker before anyone pushed commits nothing") {
  auto p = make("bsp");
  recorder c(3);
  c.start(*p);
  c.take();
  c.lose(*p, 1);
  CHECK(c.commits == 0);
  CHECK(c.take().empty());
  c.push(*p, 0);
  c.push(*p, 2);
  CHECK(c.commits == 1);
  CHECK(c.take() == ids{0, 2});
}

TEST_CASE("asp: never holds anyone and never commits") {
  auto p = make("asp");
  recorder c(5);
  c.start(*p);
  CHECK(c.mode == ps_mode::immediate);
  c.take();
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    worker_id w = static_cast<worker_id>(rng() % 5);
    c.push(*p, w);
    CHECK(c.take() == ids{w});
  }
  CHECK(c.commits == 0);
}

TEST_CASE("ssp: holds exactly when c_i - min c > s, releases when the slowest advances") {
  auto p = make("ssp", 1);
  recorder c(3);
  c.start(*p);
  CHECK(c.mode == ps_mode::immediate);
  c.take();
  c.push(*p, 0);  // c = (1,0,0): 1 - 0 <= 1
  CHECK(c.take() == ids{0});
  c.push(*p, 0);  // c = (2,0,0): 2 - 0 > 1, held
  CHECK(c.take().empty());
  c.push(*p, 1);  // c = (2,1,0): min still 0
  CHECK(c.take() == ids{1});
  c.push(*p, 2);  // c = (2,1,1): min 1, worker 0 within bound again
  CHECK(c.take() == ids{0, 2});
  c.push(*p, 1);  // (2,2,1)
  CHECK(c.take() == ids{1});
  c.push(*p, 1);  // (2,3,1): 3 - 1 > 1
  CHECK(c.take().empty());
  c.push(*p, 0);  // (3,3,1): both held
  CHECK(c.take().empty());
  c.push(*p, 2);  // (3,3,2): both released
  CHECK(c.take() == ids{0, 1, 2});
  CHECK(c.commits == 0);
}

TEST_CASE("ssp: random sequences obey the bound exactly") {
  for (int s : {0, 1, 3}) {
    auto p = make("ssp", s);
    recorder c(4);
    c.start(*p);
    c.take();
    std::mt19937 rng(static_cast<unsigned>(s + 11));
    for (int step = 0; step < 3000; ++step) {
      ids runnable;
      for (worker_id w = 0; w < 4; ++w)
        if (!c.waiting(w))
          runnable.push_back(w);
      REQUIRE(!runnable.empty());  // SSP never deadlocks
      c.push(*p, runnable[rng() % runnable.size()]);
      c.take();
      auto slowest = *std::min_element(c.clock_.begin(), c.clock_.end());
      for (worker_id w = 0; w < 4; ++w)
        CHECK(c.waiting(w) == (c.clock_[w] - slowest > static_cast<uint64_t>(s)));
    }
  }
}

TEST_CASE("ssp: s = 0 orders events as bsp") {
  auto p = make("ssp", 0);
  recorder c(3);
  c.start(*p);
  c.take();
  c.push(*p, 1);
  c.push(*p, 0);
  CHECK(c.take().empty());
  c.push(*p, 2);
  CHECK(c.take() == ids{0, 1, 2});
}

TEST_CASE("ssp: losing the slowest worker releases those it held") {
  auto p = make("ssp", 0);
  recorder c(3);
  c.start(*p);
  c.take();
  c.push(*p, 0);
  c.push(*p, 1);
  CHECK(c.take().empty());
  c.lose(*p, 2);
  CHECK(c.take() == ids{0, 1});
}
