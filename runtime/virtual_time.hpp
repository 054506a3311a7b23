// The virtual clock's order of events at one instant.
//
// CAF's test clock fires timers due at the same instant in the order they
// were set. Timers set at different moments keep that order (first set,
// first fired), but the order of those set while one timer's messages run
// follows how the messages happened to be relayed: with K PS shards a
// worker sets its compute timer when its last slice arrives, which is not
// when one PS would have answered. The timeline therefore orders the timers
// each such cascade sets by their receivers' actor ids (the order the job
// spawned them: shards, coordinator, evaluator, then the workers by id), so
// a run is the same whatever the relays in between. Timers already pending
// when the timeline starts (a checkpoint's, restored) keep their order.
//
//   virtual_timeline timeline{dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())};
//   do timeline.run(); while (timeline.fire_next());
#pragma once

#include <caf/detail/simple_actor_clock.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <unordered_map>

namespace syncpoint {

class virtual_timeline {
 public:
  explicit virtual_timeline(caf::scheduler::test_coordinator& sched);

  /// Runs every message, then puts the timers they set in order.
  void run();

  /// Fires the earliest pending timer (after ordering any set since run()).
  /// Returns false when none is pending.
  bool fire_next();

 private:
  using event = caf::detail::simple_actor_clock::delayed_event;
  void order_new_timers();

  caf::scheduler::test_coordinator& sched_;
  // The timers already in order, by address, with their receiver (an address
  // CAF reuses for another timer is then not taken for the old one).
  std::unordered_map<const event*, caf::actor_id> ordered_;
};

}  // namespace syncpoint
