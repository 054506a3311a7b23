// The parameter server as an actor: exact updates, rejected pushes, versioned pulls.
#include "actors/coordinator.hpp"
#include "actors/parameter_server.hpp"
#include "tests/ps_fixture.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

using namespace syncpoint;
using namespace std::chrono_literals;
using syncpoint::testing::check_close;
using syncpoint::testing::fixture;

TEST_CASE("ps: immediate pushes apply w -= lr * v with weight 1/n, momentum and decay") {
  fixture f;  // lr 0.1, momentum 0.5, weight decay 0.1, 2 workers (weight 1/2)
  REQUIRE(!f.push(0, {1, 1, 1}));
  // v = 0.5*g + 0.5*0.1*w = (0.55, 0.60, 0.65); w = w - 0.1 v
  std::vector<double> w{1 - 0.055, 2 - 0.060, 3 - 0.065};
  std::vector<double> v{0.55, 0.60, 0.65};
  auto got = f.pull();
  CHECK(got.version == 1);
  check_close(got.values.vec(), w);
  REQUIRE(!f.push(1, {2, 0, -2}));
  std::vector<double> g{2, 0, -2};
  for (int i = 0; i < 3; ++i) {
    v[i] = 0.5 * v[i] + 0.5 * g[i] + 0.5 * 0.1 * w[i];
    w[i] -= 0.1 * v[i];
  }
  got = f.pull();
  CHECK(got.version == 2);
  check_close(got.values.vec(), w);
}

TEST_CASE("ps: buffered pushes are applied as one mean step on commit") {
  fixture f(2, 0.0, 0.0);
  (*f.self)->send(f.ps, mode_atom::value, static_cast<uint8_t>(ps_mode::buffered));
  REQUIRE(!f.push(0, {1, 2, 3}));
  REQUIRE(!f.push(1, {3, 2, 1}));
  CHECK(f.pull().version == 0);  // nothing visible before the commit
  (*f.self)->send(f.ps, commit_atom::value);
  auto got = f.pull(1);
  CHECK(got.version == 1);
  check_close(got.values.vec(), {1 - 0.2, 2 - 0.2, 3 - 0.2});  // mean gradient (2,2,2)
}

TEST_CASE("ps: wrong-size, non-finite and unknown-worker pushes are rejected, state unchanged") {
  fixture f;
  auto before = f.pull();
  auto e1 = f.push(0, {1, 1});
  CHECK(e1.category() == caf::atom("syncpoint"));
  CHECK(e1.code() == static_cast<uint8_t>(sp_error::wrong_size));
  CHECK(f.sys->render(e1).find("has 2 values, the model has 3") != std::string::npos);
  auto e2 = f.push(1, {1, std::nanf(""), 1});
  CHECK(e2.code() == static_cast<uint8_t>(sp_error::non_finite));
  CHECK(f.sys->render(e2).find("NaN") != std::string::npos);
  auto e3 = f.push(0, {1, std::numeric_limits<float>::infinity(), 1});
  CHECK(e3.code() == static_cast<uint8_t>(sp_error::non_finite));
  auto e4 = f.push(7, {1, 1, 1});
  CHECK(e4.code() == static_cast<uint8_t>(sp_error::unknown_worker));
  auto after = f.pull();
  CHECK(after.version == before.version);
  CHECK(after.values == before.values);
  // A good push still works afterwards and momentum was not polluted.
  REQUIRE(!f.push(0, {1, 1, 1}));
  check_close(f.pull().values.vec(), {1 - 0.055, 2 - 0.060, 3 - 0.065});
}

TEST_CASE("ps: a pull for a version not reached yet is answered when it exists") {
  fixture f;
  // The pull is sent before the push; a PS that answered at once would reply
  // with version 0.
  auto pending = (*f.self)->request(f.ps, 5s, pull_atom::value, uint64_t{2});
  REQUIRE(!f.push(0, {1, 1, 1}));
  REQUIRE(!f.push(1, {1, 1, 1}));
  weights got;
  pending.receive([&](weights& w) { got = std::move(w); },
                  [&](caf::error& e) { FAIL("pull failed: " << f.sys->render(e)); });
  CHECK(got.version == 2);
  CHECK(got.values == f.pull().values);
}

TEST_CASE("ps: a commit always makes a new version, even from an empty buffer") {
  fixture f(2, 0.0, 0.0);
  (*f.self)->send(f.ps, mode_atom::value, static_cast<uint8_t>(ps_mode::buffered));
  (*f.self)->send(f.ps, commit_atom::value);
  auto got = f.pull(1);  // would wait forever if the empty commit made no version
  CHECK(got.version == 1);
  check_close(got.values.vec(), {1, 2, 3});
  (*f.self)->send(f.ps, flush_atom::value);  // a flush of nothing is no new version
  (*f.self)->send(f.ps, commit_atom::value);
  CHECK(f.pull(2).version == 2);
}

TEST_CASE("ps: a round of three pushes is their batch-weighted mean, and a checkpoint mid-round holds that sum") {
  fixture f(3, 0.0, 0.0);
  (*f.self)->send(f.ps, mode_atom::value, static_cast<uint8_t>(ps_mode::buffered));
  REQUIRE(!f.push(0, {3, 0, 0}, 0, 8));
  REQUIRE(!f.push(1, {0, 3, 0}, 0, 16));  // held apart from the buffer until the next push or the commit
  saved_ps mid;
  (*f.self)->request(f.ps, 5s, save_atom::value).receive([&](saved_ps& s) { mid = std::move(s); },
                                                          [&](caf::error& e) { FAIL(f.sys->render(e)); });
  CHECK(mid.buffer == std::vector<float>{24, 48, 0});  // 8 x (3,0,0) + 16 x (0,3,0), folded
  CHECK(mid.buffer_scale == 1.0f);
  CHECK(mid.buffer_weight == 24.0);
  REQUIRE(!f.push(2, {0, 0, 3}, 0, 8));  // folds the held push in, and is held itself
  (*f.self)->send(f.ps, commit_atom::value);
  // mean (24, 48, 24) / 32 = (0.75, 1.5, 0.75), lr 0.1
  check_close(f.pull(1).values.vec(), {1 - 0.075, 2 - 0.15, 3 - 0.075});
}

TEST_CASE("ps: a buffered round stays the plain mean when the worker weights change mid-round") {
  fixture f(3, 0.0, 0.0);
  (*f.self)->send(f.ps, mode_atom::value, static_cast<uint8_t>(ps_mode::buffered));
  REQUIRE(!f.push(0, {3, 0, 0}));
  (*f.self)->send(f.ps, weights_atom::value, std::vector<float>{0.5f, 0.0f, 0.5f});  // worker 1 lost
  REQUIRE(!f.push(2, {0, 3, 0}));
  (*f.self)->send(f.ps, commit_atom::value);
  check_close(f.pull(1).values.vec(), {1 - 0.15, 2 - 0.15, 3});  // lr 0.1 x mean (1.5, 1.5, 0)
}

TEST_CASE("ps: stopping answers every parked pull with the current weights") {
  fixture f;
  auto pending = (*f.self)->request(f.ps, 5s, pull_atom::value, uint64_t{7});
  (*f.self)->send(f.ps, stop_atom::value);
  pending.receive([&](weights& w) { CHECK(w.version == 0); },
                  [&](caf::error& e) { FAIL("pull failed: " << f.sys->render(e)); });
}

TEST_CASE("ps: gated mode applies every push at 1/n but pulls see only the published weights") {
  fixture f(2, 0.0, 0.0);  // 2 workers: weight 1/2, lr 0.1
  (*f.self)->send(f.ps, mode_atom::value, static_cast<uint8_t>(ps_mode::gated));
  for (int k = 0; k < 3; ++k)  // a fast worker pushes 3 times in one round
    REQUIRE(!f.push(0, {2, 0, -2}));
  auto before = f.pull();
  CHECK(before.version == 0);  // nothing published yet
  check_close(before.values.vec(), {1, 2, 3});
  auto pending = (*f.self)->request(f.ps, 5s, pull_atom::value, uint64_t{3});
  (*f.self)->send(f.ps, publish_atom::value);
  weights after;
  pending.receive([&](weights& w) { after = std::move(w); },
                  [&](caf::error& e) { FAIL("pull failed: " << f.sys->render(e)); });
  CHECK(after.version == 3);  // three applications, each 0.1 * 1/2 * g
  check_close(after.values.vec(), {1 - 0.3, 2, 3 + 0.3});
}

TEST_CASE("ps: once attached, only the job's workers push and pull, only its coordinator controls") {
  fixture f(2, 0.0, 0.0);
  caf::scoped_actor member{*f.sys};
  caf::scoped_actor stranger{*f.sys};
  auto coordinator = caf::actor_cast<coordinator_actor>(f.self->ptr());
  std::vector<worker_actor> workers{caf::actor_cast<worker_actor>(member.ptr()),
                                    caf::actor_cast<worker_actor>(stranger.ptr())};
  workers[1] = caf::actor_cast<worker_actor>(f.self->ptr());  // worker 1 is someone else
  (*f.self)->send(f.ps, attach_atom::value, coordinator, workers);
  auto refused = [&](auto& who, gradient_push g) {
    caf::error result;
    who->request(f.ps, 5s, push_atom::value, std::move(g))
      .receive([](const proceed&) {}, [&](caf::error& e) { result = std::move(e); });
    return result;
  };
  // A stranger pushing as worker 0, and worker 0 (the member) pushing as worker 1.
  auto e1 = refused(stranger, gradient_push{0, 1, 0, 8, {1, 1, 1}});
  CHECK(e1.code() == static_cast<uint8_t>(sp_error::not_a_member));
  CHECK(f.sys->render(e1).find("not worker 0 of this job") != std::string::npos);
  auto e2 = refused(member, gradient_push{1, 1, 0, 8, {1, 1, 1}});
  CHECK(e2.code() == static_cast<uint8_t>(sp_error::not_a_member));
  stranger->request(f.ps, 5s, pull_atom::value, uint64_t{0})
    .receive([&](weights&) { FAIL("a stranger pulled the model"); },
             [&](caf::error& e) { CHECK(e.code() == static_cast<uint8_t>(sp_error::not_a_member)); });
  // Control messages from a stranger change nothing: the commit makes no version.
  stranger->send(f.ps, mode_atom::value, static_cast<uint8_t>(ps_mode::buffered));
  stranger->send(f.ps, commit_atom::value);
  stranger->request(f.ps, 5s, final_atom::value)
    .receive([&](weights&) { FAIL("a stranger read the final model"); },
             [&](caf::error& e) { CHECK(e.code() == static_cast<uint8_t>(sp_error::not_a_member)); });
  member->request(f.ps, 5s, pull_atom::value, uint64_t{0})
    .receive([&](weights& w) {
      CHECK(w.version == 0);
      check_close(w.values.vec(), {1, 2, 3});
    }, [&](caf::error& e) { FAIL("the member's pull failed: " << f.sys->render(e)); });
  // The real coordinator still controls it.
  (*f.self)->request(f.ps, 5s, final_atom::value)
    .receive([&](weights& w) { CHECK(w.version == 0); },
             [&](caf::error& e) { FAIL("the coordinator's read failed: " << f.sys->render(e)); });
}

TEST_CASE("coordinator: a push reported by anyone but the job's worker of that id is refused") {
  fixture f(1, 0.0, 0.0);
  auto cfg = std::make_shared<coordinator_config>();
  cfg->protocol_name = "asp";
  cfg->proto = make_protocol("asp", {});
  cfg->workers = 1;
  cfg->sample_budget = 1000;
  cfg->ps = ps_group::one(f.ps);
  cfg->origin = f.sys->clock().now();
  auto coordinator = spawn_coordinator(*f.sys, cfg);
  caf::scoped_actor stranger{*f.sys};
  auto refused = [&] {
    caf::error result;
    stranger->request(coordinator, 5s, pushed_atom::value, push_info{0, 1, 64, 1, 0})
      .receive([](const proceed&) {}, [&](caf::error& e) { result = std::move(e); });
    return result;
  };
  CHECK(refused().code() == static_cast<uint8_t>(sp_error::not_a_member));  // before the start
  caf::scoped_actor worker{*f.sys};
  (*f.self)->send(coordinator, start_atom::value,
                  std::vector<worker_actor>{caf::actor_cast<worker_actor>(worker.ptr())}, evaluator_actor{});
  worker->receive([](const proceed&) {},  // the start of the run reached the real worker
                  caf::after(std::chrono::seconds(120)) >> [] { FAIL("the worker got no start within 120 s"); });
  CHECK(refused().code() == static_cast<uint8_t>(sp_error::not_a_member));  // after it, too
  (*f.self)->send_exit(coordinator, caf::exit_reason::user_shutdown);
}

TEST_CASE("ps: a momentum change can clear the velocity and ramp the coefficient back up") {
  fixture f(1, 0.5, 0.0);  // lr 0.1, momentum 0.5, one worker (weight 1)
  REQUIRE(!f.push(0, {1, 0, 0}));  // v = 1, w0 = 1 - 0.1
  (*f.self)->send(f.ps, momentum_atom::value, 0.5, true, uint32_t{2});  // clear, ramp over 2 updates
  REQUIRE(!f.push(0, {1, 0, 0}));  // mu = 0.25: v = 0 * 0.25 + 1 = 1 (cleared), w0 = 0.9 - 0.1
  check_close(f.pull().values.vec(), {0.8, 2, 3});
  REQUIRE(!f.push(0, {1, 0, 0}));  // mu = 0.5: v = 0.5 + 1 = 1.5, w0 = 0.8 - 0.15
  check_close(f.pull().values.vec(), {0.65, 2, 3});
  (*f.self)->send(f.ps, momentum_atom::value, 2.0, false, uint32_t{0});  // not a momentum: ignored
  REQUIRE(!f.push(0, {1, 0, 0}));  // mu = 0.5: v = 0.75 + 1 = 1.75, w0 = 0.65 - 0.175
  check_close(f.pull().values.vec(), {0.475, 2, 3});
}

TEST_CASE("ps: adjusted rule, immediate mode: stale pushes weigh 1/(1+tau/n), momentum reduced by the mean staleness") {
  fixture f(2, 0.5, 0.0, momentum_rule::adjusted);  // lr 0.1, mu 0.5, 2 workers (share 1/2)
  std::vector<double> w{1, 2, 3}, v{0, 0, 0};
  double mean = -1;
  struct push_case { worker_id worker; std::vector<double> g; uint64_t base; };
  std::vector<push_case> pushes{{0, {1, 1, 1}, 0}, {1, {2, 0, -2}, 0}, {0, {-1, 3, 0}, 0}, {1, {0, 1, 4}, 2}};
  uint64_t version = 0;
  for (auto& p : pushes) {
    double tau = static_cast<double>(version - p.base);  // 0, 1, 2, 1
    mean = mean < 0 ? tau : 0.99 * mean + 0.01 * tau;
    double scale = 0.5 / (1 + tau / 2);
    double mu = std::max(0.0, 1 - (1 - 0.5) * (1 + mean / 2));
    for (int i = 0; i < 3; ++i) {
      v[i] = mu * v[i] + scale * p.g[i];
      w[i] -= 0.1 * v[i];
    }
    std::vector<float> g(p.g.begin(), p.g.end());
    REQUIRE(!f.push(p.worker, g, p.base));
    ++version;
    auto got = f.pull();
    CHECK(got.version == version);
    check_close(got.values.vec(), w);
  }
}

TEST_CASE("ps: adjusted rule, gated mode: a round's pushes sum and momentum is one step per publish") {
  fixture f(2, 0.5, 0.0, momentum_rule::adjusted);  // lr 0.1, mu 0.5, 2 workers (share 1/2)
  (*f.self)->send(f.ps, mode_atom::value, static_cast<uint8_t>(ps_mode::gated));
  for (int k = 0; k < 3; ++k)  // round 1: a fast worker pushes 3 times on version 0 (tau 0, 1, 2)
    REQUIRE(!f.push(0, {2, 0, -2}, 0));
  double r1 = 0.5 + 0.5 / 1.5 + 0.5 / 2;  // the round's weight on g
  (*f.self)->send(f.ps, publish_atom::value);
  // No velocity yet: the publish adds nothing; v becomes the round's step.
  auto got = f.pull(3);
  CHECK(got.version == 3);
  check_close(got.values.vec(), {1 - 0.1 * r1 * 2, 2, 3 + 0.1 * r1 * 2});
  REQUIRE(!f.push(1, {1, 1, 1}, 3));  // round 2: fresh (tau 0), weight 1/2
  (*f.self)->send(f.ps, publish_atom::value);
  // The momentum step of round 2: w -= lr * mu * v_round1, on top of the push itself.
  got = f.pull(4);
  CHECK(got.version == 4);
  check_close(got.values.vec(), {1 - 0.2 * r1 - 0.05 - 0.05 * 2 * r1, 2 - 0.05,
                                 3 + 0.2 * r1 - 0.05 + 0.05 * 2 * r1});
}

TEST_CASE("ps: adjusted rule: a switch between per-round and per-push modes converts the velocity") {
  fixture f(2, 0.5, 0.0, momentum_rule::adjusted);  // lr 0.1, mu 0.5, 2 workers (share 1/2)
  auto mode = [&](ps_mode m) { (*f.self)->send(f.ps, mode_atom::value, static_cast<uint8_t>(m)); };
  mode(ps_mode::buffered);
  REQUIRE(!f.push(0, {2, 2, 2}, 0));
  REQUIRE(!f.push(1, {2, 2, 2}, 0));
  (*f.self)->send(f.ps, commit_atom::value);
  check_close(f.pull(1).values.vec(), {0.8, 1.8, 2.8});  // v = the round's mean, 2
  // BSP -> ASP: v becomes one push's share of a round, 2 / 2 = 1. A fresh
  // zero push is then one momentum step: v = 0.5 * 1, w -= 0.1 * 0.5.
  mode(ps_mode::immediate);
  REQUIRE(!f.push(0, {0, 0, 0}, 1));
  check_close(f.pull().values.vec(), {0.75, 1.75, 2.75});  // (0.70 if v were carried over as is)
  // ASP -> BSP: back to a round's units, 0.5 * 2 = 1; a round of fresh zeros
  // (computed on version 2): v = 0.5, w -= 0.05.
  mode(ps_mode::buffered);
  REQUIRE(!f.push(0, {0, 0, 0}, 2));
  REQUIRE(!f.push(1, {0, 0, 0}, 2));
  (*f.self)->send(f.ps, commit_atom::value);
  auto got = f.pull();
  check_close(got.values.vec(), {0.70, 1.70, 2.70});  // (0.725 without the conversion)
}

TEST_CASE("ps: adjusted rule, buffered mode: a commit of some workers is their share of a step, and stale pushes "
          "weigh less and lower the momentum") {
  fixture f(4, 0.5, 0.0, momentum_rule::adjusted);  // lr 0.1, mu 0.5, 4 workers (share 1/4 each)
  (*f.self)->send(f.ps, mode_atom::value, static_cast<uint8_t>(ps_mode::buffered));
  // Workers 0 and 1, fresh: half a round. Their mean, 4, is half a step: v = 2, w -= 0.2.
  REQUIRE(!f.push(0, {4, 4, 4}, 0));
  REQUIRE(!f.push(1, {4, 4, 4}, 0));
  (*f.self)->send(f.ps, commit_atom::value);
  check_close(f.pull(1).values.vec(), {0.8, 1.8, 2.8});
  // Workers 2 and 3 computed on version 0 too: half a round of samples old
  // (tau = 0.5). Each weighs 1 / 1.5 of its batch: the step is 4 * (1/1.5) / 2
  // = 4/3. The mean staleness after two pushes is 0.01 * 0.5 * (1 + 0.99) =
  // 0.00995, so mu' = 1 - 0.5 * 1.00995 = 0.495025: v = 0.495025 * 2 + 4/3.
  REQUIRE(!f.push(2, {4, 4, 4}, 0));
  REQUIRE(!f.push(3, {4, 4, 4}, 0));
  (*f.self)->send(f.ps, commit_atom::value);
  double v = 0.495025 * 2 + 4.0 / 3;
  check_close(f.pull(2).values.vec(), {0.8 - 0.1 * v, 1.8 - 0.1 * v, 2.8 - 0.1 * v});
}

TEST_CASE("ps: adjusted rule, buffered mode: a round a worker joined during, or one left before pushing, is a whole "
          "step") {
  fixture f(3, 0.0, 0.0, momentum_rule::adjusted);  // lr 0.1, no momentum, 3 ids
  auto weights = [&](std::vector<float> w) { (*f.self)->send(f.ps, weights_atom::value, std::move(w)); };
  (*f.self)->send(f.ps, mode_atom::value, static_cast<uint8_t>(ps_mode::buffered));
  // Worker 2 joins after 0 and 1 pushed: the weights become thirds before the commit.
  weights({0.5f, 0.5f, 0.0f});
  REQUIRE(!f.push(0, {2, 2, 2}, 0));
  REQUIRE(!f.push(1, {2, 2, 2}, 0));
  weights({1.0f / 3, 1.0f / 3, 1.0f / 3});
  (*f.self)->send(f.ps, commit_atom::value);
  check_close(f.pull(1).values.vec(), {0.8, 1.8, 2.8});  // the whole mean, 2: not 2/3 of it
  // Worker 2 is lost before pushing: the survivors' halves make the round whole.
  REQUIRE(!f.push(0, {2, 2, 2}, 1));
  weights({0.5f, 0.5f, 0.0f});
  REQUIRE(!f.push(1, {2, 2, 2}, 1));
  (*f.self)->send(f.ps, commit_atom::value);
  check_close(f.pull(2).values.vec(), {0.6, 1.6, 2.6});
}
