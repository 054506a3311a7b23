// The virtual clock's order at one instant (runtime/job/virtual_time.hpp): timers
// set together fire by receiver id, whatever order they were set in; timers
// set earlier fire first; a checkpoint's restored timers keep their order; and
// a timeout moved into that order can still be cancelled.
#include "runtime/job/virtual_time.hpp"

#include <caf/all.hpp>
#include <caf/detail/test_actor_clock.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <vector>

namespace {

using namespace std::chrono_literals;
using tick_atom = caf::atom_constant<caf::atom("vt_tick")>;
using log_ptr = std::shared_ptr<std::vector<int>>;

// Records its name when its tick arrives.
caf::behavior recorder(caf::event_based_actor*, log_ptr log, int name) {
  return {[=](tick_atom) { log->push_back(name); }};
}

struct system_under_test {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  caf::detail::test_actor_clock* clock = nullptr;
  log_ptr log = std::make_shared<std::vector<int>>();
  std::vector<caf::actor> actors;  // named 0, 1, ... in the order of their ids
  caf::actor_clock::time_point t0;

  explicit system_under_test(int n) {
    syncpoint::use_virtual_clock(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    clock = &sched->clock();
    t0 = clock->now();
    for (int name = 0; name < n; ++name)
      actors.push_back(sys->spawn(recorder, log, name));
  }
  // Ends the actors even when a check failed midway, so that the actor
  // system's destructor does not wait for them.
  ~system_under_test() {
    clock->cancel_all();
    for (auto& a : actors)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sched->run();
  }
  void tick(caf::actor_clock::duration_type at, int name) {
    auto to = caf::actor_cast<caf::strong_actor_ptr>(actors.at(static_cast<size_t>(name)));
    clock->schedule_message(t0 + at, to, caf::make_mailbox_element(to, caf::make_message_id(), {},
                                                                     caf::make_message(tick_atom::value)));
  }
};

void drain(syncpoint::virtual_timeline& timeline) {
  do
    timeline.run();
  while (timeline.fire_next());
}

}  // namespace

TEST_CASE("virtual time: timers set together and due together fire by receiver id, not in the order they were set") {
  system_under_test s(4);
  syncpoint::virtual_timeline timeline{*s.sys};
  s.tick(5ms, 3);
  s.tick(5ms, 1);
  s.tick(1ms, 2);
  s.tick(5ms, 2);
  s.tick(5ms, 0);
  s.tick(9ms, 0);
  drain(timeline);
  CHECK(*s.log == std::vector<int>{2, 0, 1, 2, 3, 0});
  CHECK(s.clock->now() == s.t0 + 9ms);
}

TEST_CASE("virtual time: of two timers due together, the one set at an earlier step fires first") {
  system_under_test s(2);
  syncpoint::virtual_timeline timeline{*s.sys};
  s.tick(5ms, 1);
  timeline.run();  // the end of one step: what it set is in order
  s.tick(5ms, 0);
  drain(timeline);
  CHECK(*s.log == std::vector<int>{1, 0});
}

TEST_CASE("virtual time: timers pending when the timeline starts (a checkpoint's) keep their order") {
  system_under_test s(2);
  s.tick(5ms, 1);
  s.tick(5ms, 0);
  syncpoint::virtual_timeline timeline{*s.sys};
  drain(timeline);
  CHECK(*s.log == std::vector<int>{1, 0});
}

TEST_CASE("virtual time: a timeout moved within its instant is still the one its actor cancels") {
  system_under_test s(2);
  syncpoint::virtual_timeline timeline{*s.sys};
  // Set in this order at one instant: a tick to 1, a cancellable timeout of 1,
  // a tick to 0. Ordering puts 0's tick first and moves the other two one
  // place back, the timeout among them.
  s.tick(5ms, 1);
  auto* one = caf::actor_cast<caf::abstract_actor*>(s.actors[1]);
  s.clock->set_ordinary_timeout(s.t0 + 5ms, one, caf::atom("vt_to"), 1);
  s.tick(5ms, 0);
  timeline.run();
  REQUIRE(s.clock->schedule().size() == 3);
  s.clock->cancel_ordinary_timeout(one, caf::atom("vt_to"));
  REQUIRE(s.clock->schedule().size() == 2);  // the timeout went, not a tick beside it
  for (auto& [due, e] : s.clock->schedule())
    CHECK(e->subtype == caf::detail::simple_actor_clock::actor_msg_type);
  CHECK(s.clock->actor_lookup().empty());
  drain(timeline);
  CHECK(*s.log == std::vector<int>{0, 1});
}

TEST_CASE("virtual time: a step's timers are put in order among many pending ones, which keep theirs") {
  system_under_test s(6);
  // Pending from earlier steps: many timers at other instants, and two at
  // the step's instant, set by receiver 5 then 4 (they keep that order).
  for (int i = 0; i < 1000; ++i)
    s.tick(std::chrono::microseconds(10 + i), i % 2);
  s.tick(5ms, 5);
  s.tick(5ms, 4);
  syncpoint::virtual_timeline timeline{*s.sys};
  timeline.run();
  s.tick(5ms, 3);  // one step sets three at that instant, out of order
  s.tick(5ms, 1);
  s.tick(5ms, 2);
  s.tick(7ms, 2);  // ... and one alone at another
  drain(timeline);
  REQUIRE(s.log->size() == 1006);
  CHECK(std::vector<int>(s.log->end() - 6, s.log->end()) == std::vector<int>{5, 4, 1, 2, 3, 2});
}
