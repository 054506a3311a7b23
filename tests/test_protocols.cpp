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
  o.set("staleness", staleness);
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
    CHECK(valid.find("asp, async-diloco, bsp, ") == 0);  // sorted; other protocols may come between the built-in ones
    CHECK(valid.find(", elastic-bsp, ") != std::string::npos);
    CHECK(valid.find(", ssp, ") != std::string::npos);
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

namespace {
// A protocol declared here, with options of every kind, registered like any other.
class probe : public protocol {
 public:
  static std::vector<option_spec> options() {
    using k = option_spec::kind;
    return {{"probe-count", k::integer, "4", "a count", 1, 10, {}, ""},
            {"probe-rate", k::real, "0.5", "a rate", 0, 1, {}, ""},
            {"probe-mode", k::text, "fast", "a mode", 0, 0, {"fast", "slow"}, ""}};
  }
  explicit probe(const protocol_options& o)
    : count(o.integer("probe-count")), rate(o.real("probe-rate")), mode(o.text("probe-mode")) {
    last = this;
  }
  void on_push(coordinator_api& c, worker_id w) override { c.release(w); }
  long long count;
  double rate;
  std::string mode;
  static inline probe* last = nullptr;
};
SYNCPOINT_REGISTER_PROTOCOL("test-probe-options", "test protocol", probe);
}  // namespace

TEST_CASE("registry: a protocol's declared options get their defaults, checked values and a listing") {
  auto p = make_protocol("test-probe-options", {});
  REQUIRE(probe::last != nullptr);
  CHECK(probe::last->count == 4);
  CHECK(probe::last->rate == 0.5);
  CHECK(probe::last->mode == "fast");
  protocol_options o;
  o.set("probe-count", 7).set("probe-rate", 0.25).set("probe-mode", "slow");
  p = make_protocol("test-probe-options", o);
  CHECK(probe::last->count == 7);
  CHECK(probe::last->rate == 0.25);
  CHECK(probe::last->mode == "slow");
  auto refused = [](protocol_options bad) -> std::string {
    try {
      make_protocol("test-probe-options", bad);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  CHECK(refused(protocol_options{}.set("probe-count", 11)) == "invalid value in '--probe-count=11' (must be in 1..10)");
  CHECK(refused(protocol_options{}.set("probe-count", "two")) == "invalid value in '--probe-count=two' (expected an integer)");
  CHECK(refused(protocol_options{}.set("probe-rate", "nan")) == "invalid value in '--probe-rate=nan' (expected a number)");
  CHECK(refused(protocol_options{}.set("probe-mode", "medium")) == "invalid value in '--probe-mode=medium' (valid: fast, slow)");
  CHECK(refused(protocol_options{}.set("no-such-option", 1)).find("unknown protocol option 'no-such-option'") == 0);
  auto specs = protocol_option_specs("test-probe-options");
  REQUIRE(specs.size() == 3);
  CHECK(specs[2].choices == std::vector<std::string>{"fast", "slow"});
  auto staleness_users = all_protocol_options().at("staleness").second;  // ssp, and any protocol that reuses it
  CHECK(std::find(staleness_users.begin(), staleness_users.end(), "ssp") != staleness_users.end());
  CHECK(all_protocol_options().at("staleness").first.type == option_spec::kind::integer);
  CHECK(protocol_label("ssp", {}) == "ssp(s=3)");
  CHECK(protocol_label("test-probe-options", protocol_options{}.set("probe-mode", "slow")) == "test-probe-options(probe-mode=slow)");
  // Another type under a taken name is refused at registration.
  CHECK_FALSE(register_protocol("clash", "", [](const protocol_options& o) { return std::make_unique<probe>(o); },
                                {{"staleness", option_spec::kind::text, "x", ""}}));
  CHECK_FALSE(has_protocol("clash"));
}
