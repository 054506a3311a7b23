// Sync-Switch on scripted sequences: where switches happen, what a switch
// does to held workers and the PS mode, and the online straggler policy.
#include <syncpoint/train.hpp>
#include "tests/protocol_recorder.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>

using namespace syncpoint;
using syncpoint::testing::recorder;
using ids = std::vector<worker_id>;

namespace {

std::unique_ptr<protocol> make(const std::string& schedule, const std::string& momentum = "scale") {
  protocol_options o;
  o.set("schedule", schedule).set("switch-momentum", momentum);
  return make_protocol("sync-switch", o);
}

std::vector<std::string> phase_notes(const recorder& c) {
  std::vector<std::string> out;
  for (auto& [k, n] : c.marks)
    if (k == "phase")
      out.push_back(n);
  return out;
}

}  // namespace

TEST_CASE("sync-switch: the switch follows the push that reaches the configured share of samples") {
  recorder c(4);  // batch 64 per push
  c.budget = 1000;
  auto p = make("bsp:0.25,asp:0.75");
  c.start(*p);
  CHECK(c.mode == ps_mode::buffered);  // bsp
  c.take();
  for (worker_id w : {0, 1, 2})
    c.push(*p, w);  // 192 samples: still bsp, all three held
  CHECK(c.take().empty());
  CHECK(phase_notes(c) == std::vector<std::string>{"->bsp start"});
  c.push(*p, 3);  // 256 >= 250: bsp's last push, its barrier opens, then asp
  CHECK(c.commits == 1);
  CHECK(phase_notes(c) == std::vector<std::string>{"->bsp start", "bsp>asp share"});
  CHECK(c.mode == ps_mode::immediate);
  CHECK(c.take() == ids{0, 1, 2, 3});
  CHECK(c.evaluations == 1);  // the accuracy at the end of the bsp phase
  c.push(*p, 2);  // asp: released at once
  CHECK(c.take() == ids{2});
}

TEST_CASE("sync-switch: a switch in the middle of a bsp round releases the held workers exactly once") {
  recorder c(4);
  c.budget = 1000;
  auto p = make("bsp:0.4,asp:0.6");  // 400 samples: the 7th push, 3 pushes into round 2
  c.start(*p);
  c.take();
  for (worker_id w : {0, 1, 2, 3})
    c.push(*p, w);
  CHECK(c.take() == ids{0, 1, 2, 3});
  CHECK(c.commits == 1);
  c.push(*p, 0);
  c.push(*p, 1);
  CHECK(c.take().empty());  // held at the barrier
  c.push(*p, 2);            // 448 >= 400: switch with 0, 1, 2 held and 3 computing
  CHECK(c.commits == 1);    // no commit of a partial round: the mode change applies it
  CHECK(c.mode == ps_mode::immediate);
  CHECK(c.take() == ids{0, 1, 2});
  c.push(*p, 3);  // the in-flight push lands in asp, applied on arrival
  CHECK(c.take() == ids{3});
  CHECK(c.commits == 1);
}

TEST_CASE("sync-switch: three phases, and the momentum rule at each switch") {
  recorder c(2);
  c.budget = 640;  // 10 pushes of 64
  auto p = make("bsp:0.2,asp:0.6,bsp:0.2", "ramp");
  c.start(*p);
  c.take();
  for (int k = 0; k < 10; ++k) {  // the two workers push in turn (a held one skips its turn)
    worker_id w = k % 2;
    if (!c.waiting(w))
      c.push(*p, w);
  }
  auto notes = phase_notes(c);
  REQUIRE(notes.size() == 3);
  CHECK(notes[1] == "bsp>asp share");
  CHECK(notes[2] == "asp>bsp share");
  REQUIRE(c.momentum.size() == 2);
  CHECK(std::get<0>(c.momentum[0]) == 0.9);
  CHECK(std::get<1>(c.momentum[0]));        // ramp clears the velocity
  CHECK(std::get<2>(c.momentum[0]) == 50);  // ... and rises over --ramp-steps

  recorder s(4);
  s.budget = 512;
  auto scaled = make("bsp:0.5,asp:0.5", "scale");
  s.start(*scaled);
  s.take();
  for (worker_id w : {0, 1, 2, 3})
    s.push(*scaled, w);
  for (worker_id w : {0, 1, 2, 3})
    s.push(*scaled, w);
  REQUIRE(s.momentum.size() == 1);
  CHECK(std::get<0>(s.momentum[0]) == doctest::Approx(0.9 / 4));  // asp: mu/n
}

TEST_CASE("sync-switch: bad schedules are refused naming the item") {
  auto refused = [](const std::string& schedule) -> std::string {
    try {
      make(schedule);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  CHECK(refused("bsp:0.5,asp:0.4").find("sum to 0.9") != std::string::npos);
  CHECK(refused("bsp:0.5,nope:0.5").find("unknown protocol 'nope' in schedule item 'nope:0.5'") != std::string::npos);
  CHECK(refused("bsp0.5").find("malformed schedule item 'bsp0.5'") != std::string::npos);
  CHECK(refused("bsp:-1,asp:2").find("must be in (0, 1]") != std::string::npos);
  CHECK(refused("sync-switch:1").find("cannot contain sync-switch") != std::string::npos);
}

namespace {

// Workers released at r push at r + cycle(w, t); drives the protocol in time order.
struct timeline {
  recorder c;
  std::unique_ptr<protocol> p;
  std::function<double(worker_id, double)> cycle;
  std::vector<double> push_at;
  size_t seen = 0;
  timeline(int n, std::unique_ptr<protocol> proto, std::function<double(worker_id, double)> f)
    : c(n), p(std::move(proto)), cycle(std::move(f)),
      push_at(static_cast<size_t>(n), std::numeric_limits<double>::infinity()) {
    c.budget = 1u << 30;
    c.start(*p);
    absorb();
  }
  void absorb() {
    for (; seen < c.release_log.size(); ++seen) {
      auto [w, r] = c.release_log[seen];
      push_at[static_cast<size_t>(w)] = r + cycle(w, r);
    }
  }
  void run_until(double end) {
    for (;;) {
      auto w = static_cast<worker_id>(std::min_element(push_at.begin(), push_at.end()) - push_at.begin());
      double t = push_at[static_cast<size_t>(w)];
      if (t > end)
        break;
      push_at[static_cast<size_t>(w)] = std::numeric_limits<double>::infinity();
      c.push_at(*p, w, t);
      absorb();
    }
  }
};

std::unique_ptr<protocol> online() {
  protocol_options o;
  o.set("online", "on").set("straggler-factor", 2.0).set("straggler-window", 3);
  return make_protocol("sync-switch", o);
}

}  // namespace

TEST_CASE("sync-switch online: one slow iteration switches nothing") {
  int slow_once = 0;
  timeline tl(4, online(), [&](worker_id w, double t) {
    return w == 3 && t > 5 && slow_once++ == 0 ? 3.0 : 1.0;
  });
  tl.run_until(40);
  CHECK(phase_notes(tl.c) == std::vector<std::string>{"->bsp start"});
}

TEST_CASE("sync-switch online: to asp after m slow iterations, back to bsp after m normal ones") {
  // Worker 3 is 3x slower between t = 10 and t = 40.
  timeline tl(4, online(), [](worker_id w, double t) { return w == 3 && t >= 10 && t < 40 ? 3.0 : 1.0; });
  tl.run_until(10);
  CHECK(phase_notes(tl.c).size() == 1);
  tl.run_until(16.5);  // slow cycles end at about 13, 16 (bsp rounds of 3 s): not yet 3
  CHECK(phase_notes(tl.c).size() == 1);
  tl.run_until(20);    // the third slow cycle, at 19
  auto notes = phase_notes(tl.c);
  REQUIRE(notes.size() == 2);
  CHECK(notes[1] == "bsp>asp straggler");
  CHECK(tl.c.mode == ps_mode::immediate);
  tl.run_until(60);
  notes = phase_notes(tl.c);
  REQUIRE(notes.size() == 3);
  CHECK(notes[2] == "asp>bsp recovered");
  CHECK(tl.c.mode == ps_mode::buffered);
}

TEST_CASE("sync-switch: a three-phase schedule runs end to end on both clocks, no gradient lost or doubled" * doctest::test_suite("real-clock")) {
  for (auto clock : {clock_kind::virtual_time, clock_kind::real}) {
    auto cfg = syncpoint::testing::small_job("sync-switch");
    cfg.protocol_opts.set("schedule", "bsp:0.2,asp:0.6,bsp:0.2");
    cfg.clock = clock;
    cfg.straggler = "3:x2";
    auto r = train(cfg);
    int phases = 0;
    for (auto& ev : r.trace)
      phases += ev.kind == "phase";
    CHECK(phases == 3);
    uint64_t applied = 0;
    for (auto& w : r.summary.per_worker)
      applied += w.iterations;
    CHECK(applied * 64 == r.summary.samples);  // every pushed gradient applied exactly once
    CHECK(r.summary.final_accuracy > 0.85);
    REQUIRE(r.summary.phases.size() == 3);
    CHECK(r.summary.phases[0].protocol == "bsp");
    CHECK(r.summary.phases[1].protocol == "asp");
    CHECK(r.summary.phases[2].protocol == "bsp");
    CHECK(r.summary.phases[1].reason == "share");
    uint64_t total = 0;
    for (auto& ph : r.summary.phases) {
      total += ph.samples;
      CHECK(ph.accuracy_at_end > 0);
      CHECK(ph.time_s > 0);
    }
    CHECK(total == r.summary.samples);
    // The shares: 20% of the 8000-sample budget, then 60%, within one batch.
    CHECK(r.summary.phases[0].samples >= 1600);
    CHECK(r.summary.phases[0].samples < 1600 + 64 * 4);
  }
}

#include "runtime/studies/tune_switch.hpp"

TEST_CASE("tune-switch: the binary search finds the smallest accepted share, as an exhaustive sweep does") {
  // A stand-in accuracy curve first: monotone in the share, known answer.
  auto curve = [](double f) { return std::make_pair(0.80 + 0.1 * std::min(f, 0.6), 1.0); };
  auto r = tune_switch(0.005, 5, curve);
  REQUIRE(r.runs.size() == 6);
  CHECK(r.runs[0].share == 1.0);
  CHECK(r.policy.bsp_share == doctest::Approx(0.5625));  // the grid point just above 0.6 - 0.05
  CHECK(r.policy.schedule == "bsp:0.5625,asp:0.4375");

  // A real tiny job, virtual clock: the search's answer against every share of its grid.
  auto cfg = syncpoint::testing::small_job("sync-switch");
  cfg.train_limit = 2000;
  cfg.epochs = 1;
  cfg.iter_cost_ms = 5;
  cfg.straggler = "3:x3";
  cfg.momentum = 0;  // so that asp is competitive and the answer lies inside (0, 1)
  const int budget = 3;
  auto found = tune_switch(cfg, 0.005, budget);
  auto accuracy = [&](double f) {
    auto c = cfg;
    c.protocol_opts.set("schedule", switch_schedule(f));
    return train(c).summary.final_accuracy;
  };
  double reference = accuracy(1.0);
  CHECK(found.policy.reference_accuracy == reference);  // deterministic: the same run
  double smallest = 1.0;
  // The search's candidates are j / 2^budget for j = 1 .. 2^budget (0 is pure asp: no schedule).
  for (int j = (1 << budget) - 1; j >= 1; --j) {  // downwards: the smallest share accepted all the way
    double f = static_cast<double>(j) / (1 << budget);
    if (accuracy(f) >= reference - 0.005)
      smallest = f;
    else
      break;
  }
  MESSAGE("smallest accepted share " << smallest << ", found " << found.policy.bsp_share);
  CHECK(found.policy.bsp_share == smallest);
  CHECK(smallest < 1.0);
  CHECK(found.policy.model == "softmax");
  CHECK(found.runs.size() == budget + 1);
}

TEST_CASE("tune-switch: a policy file round-trips, and a broken one is refused by name") {
  switch_policy p;
  p.model = "mlp";
  p.dataset = "fashion-mnist";
  p.workers = 8;
  p.bsp_share = 0.25;
  p.schedule = "bsp:0.25,asp:0.75";
  auto path = std::string("/tmp/syncpoint-policy-test.json");
  save_switch_policy(path, p);
  auto q = load_switch_policy(path);
  CHECK(q.schedule == p.schedule);
  CHECK(q.workers == 8);
  protocol_options o;
  o.set("switch-policy", path).set("job.model", "cnn");
  CHECK_THROWS_WITH_AS(make_protocol("sync-switch", o),
                       "sync-switch: policy file '/tmp/syncpoint-policy-test.json' was tuned for model 'mlp', this job trains 'cnn'",
                       std::invalid_argument);
  std::ofstream(path) << "{ not json";
  try {
    load_switch_policy(path);
    FAIL("a policy file of '{ not json' was taken");
  } catch (const std::invalid_argument& e) {  // the rest is the JSON parser's words
    CHECK(std::string(e.what()).rfind("switch policy file '" + path + "' is malformed: ", 0) == 0);
  }
  std::remove(path.c_str());
  CHECK_THROWS_WITH_AS(load_switch_policy(path), "cannot open switch policy file '/tmp/syncpoint-policy-test.json'",
                       std::invalid_argument);
}
