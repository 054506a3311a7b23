// A replicated shard's primary lost while a snapshot asked of it is unanswered:
// the replica that serves in its place answers it, so evaluations go on
// whole and the run's final one comes (without it the run never ends); lost
// while the run's final model is asked of it, the replica gives its part. And
// the evaluator takes each snapshot's part once, however often it comes.
#include "actors/coordinator.hpp"
#include "actors/evaluator.hpp"
#include "actors/parameter_server.hpp"
#include "actors/tracer.hpp"
#include "core/messages.hpp"
#include <syncpoint/model.hpp>
#include <syncpoint/worker_loop.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

using namespace syncpoint;
using namespace std::chrono_literals;

namespace {

// A shard's copy that takes everything and answers nothing (a host gone
// silent before its connection drops): its mailbox keeps what it was sent.
caf::actor mute_copy(caf::actor_system& sys) {
  return sys.spawn([](caf::event_based_actor* me, int) -> caf::behavior {
    me->set_default_handler(caf::skip);
    return {[](int) {}};
  }, 0);
}

// A shard's copy whose host dies with the run's final model asked of it: it
// takes the request and is gone without an answer, as a process killed with
// the request on its way (CAF 0.17 then answers nothing, ever).
caf::actor dies_when_asked_final(caf::actor_system& sys) {
  return sys.spawn([](caf::event_based_actor* me, int) -> caf::behavior {
    me->set_default_handler(caf::skip);
    return {[=](final_atom) {
      me->make_response_promise();  // taken, never kept
      me->quit(caf::exit_reason::remote_link_unreachable);
    }};
  }, 0);
}

// A shard's copy that hands the run's final model's request to `holder`,
// which reads nothing, and tells `test` it did: when `holder` ends, CAF
// bounces the request unread (request_receiver_down), as it does for a copy
// of this process, or of a node still connected, that ends.
caf::actor hands_final_to(caf::actor_system& sys, caf::actor holder, caf::actor test) {
  return sys.spawn([=](caf::event_based_actor* me, int) -> caf::behavior {
    me->set_default_handler(caf::skip);
    return {[=](final_atom) {
      me->send(test, std::string("held"));
      me->delegate(holder, final_atom::value);
    }};
  }, 0);
}

// An actor system with the project's messages, and the test's own actor in it.
struct actor_world {
  caf::actor_system_config cfg = [] {
    caf::actor_system_config c;
    register_messages(c);
    return c;
  }();
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
};

// Killed at the end of the test, whatever happened: the actor system waits
// for every actor at its end, so a run that hung would hang the test too.
struct ends_with_the_test {
  caf::scoped_actor& self;
  std::vector<caf::actor> actors;
  ~ends_with_the_test() {
    for (auto& a : actors)
      self->send_exit(a, caf::exit_reason::kill);
  }
};

ps_actor real_copy(caf::actor_system& sys, uint32_t shard, uint32_t copy, std::vector<float> initial) {
  ps_config c{std::move(initial), 0.1, 0.0, 0.0, 1, tracer_actor{}, sys.clock().now(), 0, 0, momentum_rule::plain};
  c.shard = shard;
  c.shards = 2;
  c.offset = 2 * shard;
  c.model_size = 4;
  c.copy = copy;
  c.replicas = 1;
  return spawn_parameter_server(sys, std::move(c));
}

// An asp run of one worker over two shards of two copies each, shard 1's
// primary `odd` (a stand-in for a copy that goes wrong): its worker goes at
// its start, so the run is at once finishing, and the test is its evaluator.
struct finishing_run {
  ps_group ps;
  std::shared_ptr<coordinator_config> cc = std::make_shared<coordinator_config>();
  coordinator_actor coordinator;
  caf::actor worker;

  finishing_run(actor_world& world, const caf::actor& odd, bool check_copies = false) {
    auto& sys = world.sys;
    ps.bounds = {0, 2, 4};
    ps.copies = {{real_copy(sys, 0, 0, {1, 2}), real_copy(sys, 0, 1, {1, 2})},
                 {caf::actor_cast<ps_actor>(odd), real_copy(sys, 1, 1, {3, 4})}};
    ps.shards = {ps.copies[0][0], ps.copies[1][0]};
    cc->protocol_name = "asp";
    cc->proto = make_protocol("asp", {});
    cc->workers = 1;
    cc->sample_budget = 1000000;
    cc->ps = ps;
    cc->check_copies = check_copies;
    cc->origin = sys.clock().now();
    cc->tracer = spawn_tracer(sys);
    cc->driver = caf::actor_cast<driver_actor>(world.self.ptr());
    coordinator = spawn_coordinator(sys, cc);
    worker = sys.spawn([](caf::event_based_actor* me, int) -> caf::behavior {
      return {[=](const proceed&) { me->quit(); }};
    }, 0);
    world.self->send(coordinator, start_atom::value, std::vector<worker_actor>{caf::actor_cast<worker_actor>(worker)},
                     caf::actor_cast<evaluator_actor>(world.self.ptr()));
  }

  // What the test kills at its end, whatever happened.
  std::vector<caf::actor> actors() const {
    std::vector<caf::actor> all{caf::actor_cast<caf::actor>(coordinator), caf::actor_cast<caf::actor>(cc->tracer),
                                worker};
    for (auto& shard : ps.copies)
      for (auto& copy : shard)
        all.push_back(caf::actor_cast<caf::actor>(copy));
    return all;
  }
};

}  // namespace

TEST_CASE("replicas: a primary lost with the final snapshot asked of it: its replica answers it, the run's final "
          "evaluation comes and the run ends") {
  actor_world world;
  auto& sys = world.sys;
  auto& self = world.self;
  auto mute = mute_copy(sys);
  finishing_run run(world, mute);
  auto coordinator = run.coordinator;
  // The worker goes, and the final snapshot is asked of each shard's primary:
  // shard 0's answers, shard 1's (mute) does not.
  snapshot part0;
  self->receive([&](snapshot& s) { part0 = std::move(s); },
                caf::after(120s) >> [] { FAIL("no snapshot from shard 0's primary"); });
  CHECK(part0.part == 0);
  CHECK(part0.final);
  CHECK(part0.id > 0);
  // The mute primary is lost: its replica serves, and is asked again.
  self->send_exit(mute, caf::exit_reason::kill);
  snapshot part1;
  self->receive([&](snapshot& s) { part1 = std::move(s); },
                caf::after(120s) >> [] { FAIL("the promoted replica was not asked the snapshot again"); });
  CHECK(part1.part == 1);
  CHECK(part1.final);
  CHECK(part1.id == part0.id);  // the same request
  REQUIRE(part1.values.size() == 2);
  CHECK(part1.values.data()[0] == 3.0f);
  // The final evaluation goes back, and the run ends with the whole model.
  self->send(coordinator, eval_atom::value, eval_result{part0.version, part0.taken, part0.samples, true, 0.5, {}});
  run_outcome outcome;
  self->receive([&](done_atom, run_outcome& o) { outcome = std::move(o); },
                caf::after(120s) >> [] { FAIL("the run did not end"); });
  CHECK(outcome.final_model.values.size() == 4);
  self->send_exit(coordinator, caf::exit_reason::user_shutdown);
}

TEST_CASE("replicas: the evaluator takes a snapshot's part once: one asked again of a promoted replica, after its "
          "lost primary had sent it, is not taken twice") {
  actor_world world;
  auto& sys = world.sys;
  auto& self = world.self;
  // A model of 4 values (softmax of 1 feature, 2 classes), and a loop that
  // measures nothing: the evaluator only assembles and answers.
  register_loop("snapshot-parts", [](const loop_context&) -> std::unique_ptr<worker_loop> { return nullptr; });
  evaluator_config ec;
  ec.model = "softmax";
  ec.loop = "snapshot-parts";
  ec.input.shape = {1};
  ec.input.classes = 2;
  REQUIRE(make_model(ec.model, ec.input)->size() == 4);
  ec.coordinator = caf::actor_cast<coordinator_actor>(self.ptr());
  auto eval = spawn_evaluator(sys, ec);
  auto part = [](uint32_t k, uint64_t id, uint64_t version) {
    return snapshot{version, 0, id * 100, false, shared_floats(std::vector<float>(2, 1.0f)), 2 * k, 4, k, 2, id};
  };
  // Request 1: shard 0's part, shard 1's from its primary and again from its replica.
  self->send(eval, part(0, 1, 7));
  self->send(eval, part(1, 1, 7));
  self->send(eval, part(1, 1, 8));  // the replica's answer to the same request
  // Requests 2 and 3: both parts, shard 1's from its replica now.
  self->send(eval, part(0, 2, 9));
  self->send(eval, part(1, 2, 9));
  self->send(eval, part(0, 3, 10));
  self->send(eval, part(1, 3, 10));
  std::vector<eval_result> got;
  for (int i = 0; i < 3; ++i)
    self->receive([&](eval_atom, const eval_result& r) { got.push_back(r); },
                  caf::after(120s) >> [] { FAIL("an evaluation did not come"); });
  REQUIRE(got.size() == 3);
  // Taken twice, request 1's second part would pair with request 2's, and so on.
  CHECK(got[0].samples == 100);
  CHECK(got[0].version == 7);
  CHECK(got[1].samples == 200);
  CHECK(got[1].version == 9);
  CHECK(got[2].samples == 300);
  CHECK(got[2].version == 10);
  self->send_exit(eval, caf::exit_reason::user_shutdown);
}

namespace {

// The run's outcome: the final snapshot is asked (the worker went at its
// start), its evaluation goes back (the test is the evaluator), the model is
// asked of the copies, and `meanwhile` has what it waits for come first.
// The run's failure, or no end within the deadline, fails the test.
run_outcome outcome_of(actor_world& world, finishing_run& run, const std::function<void()>& meanwhile = [] {}) {
  auto& self = world.self;
  self->monitor(run.coordinator);
  snapshot part0;
  self->receive([&](snapshot& s) { part0 = std::move(s); },
                caf::after(120s) >> [] { FAIL("no snapshot from shard 0's primary"); });
  REQUIRE(part0.final);
  self->send(run.coordinator, eval_atom::value, eval_result{part0.version, part0.taken, part0.samples, true, 0.5, {}});
  meanwhile();
  run_outcome outcome;
  bool ended = false;
  // (a deadline for a hang: without another copy asked in its place, the run waited --request-timeout)
  self->receive_while([&] { return !ended; })(
    [&](done_atom, run_outcome& o) {
      outcome = std::move(o);
      ended = true;
    },
    [&](snapshot&) {},  // the final snapshot's part, asked again of a promoted replica
    [&](caf::down_msg& dm) { FAIL("the run failed: " << world.sys.render(dm.reason)); },
    caf::after(120s) >> [&] { FAIL("the run did not end: the model was asked of a copy that is gone"); });
  return outcome;
}

std::vector<float> values(const run_outcome& outcome) {
  auto& v = outcome.final_model.values;
  return std::vector<float>(v.data(), v.data() + v.size());
}

}  // namespace

TEST_CASE("replicas: a primary lost with the run's final model asked of it: its replica gives the part, and the run "
          "ends with the whole model") {
  for (bool check_copies : {false, true}) {  // asked of every copy first, or of the serving ones only
    CAPTURE(check_copies);
    actor_world world;
    finishing_run run(world, dies_when_asked_final(world.sys), check_copies);
    // A run that hangs must not hang the test's end too (the actor system waits for every actor).
    ends_with_the_test ending{world.self, run.actors()};
    CHECK(values(outcome_of(world, run)) == std::vector<float>{1, 2, 3, 4});
  }
}

TEST_CASE("replicas: a primary that ends with the run's final model's request unread (bounced): its replica gives "
          "the part, and the run ends with the whole model") {
  actor_world world;
  auto holder = mute_copy(world.sys);
  finishing_run run(world, hands_final_to(world.sys, holder, caf::actor_cast<caf::actor>(world.self.ptr())));
  ends_with_the_test ending{world.self, run.actors()};
  ending.actors.push_back(holder);
  auto outcome = outcome_of(world, run, [&] {
    world.self->receive([](const std::string& held) { REQUIRE(held == "held"); },
                        caf::after(120s) >> [] { FAIL("the final model was not asked of shard 1's primary"); });
    world.self->send_exit(holder, caf::exit_reason::kill);  // the request bounces
  });
  CHECK(values(outcome) == std::vector<float>{1, 2, 3, 4});
}
