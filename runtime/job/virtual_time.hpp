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
// The clock of the virtual scheduler notes each timer as it is set, so the
// timeline orders only a cascade's own timers, not the whole schedule
// (which holds one timer per worker and more).
//
//   caf::actor_system_config cfg;
//   use_virtual_clock(cfg);
//   caf::actor_system sys{cfg};
//   virtual_timeline timeline{sys};
//   do timeline.run(); while (timeline.fire_next());
#pragma once

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/detail/test_actor_clock.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <chrono>
#include <vector>

namespace syncpoint {

/// CAF's test clock, which also keeps the timers set since it was last asked.
class recording_clock : public caf::detail::test_actor_clock {
 public:
  using event = caf::detail::simple_actor_clock::delayed_event;
  struct set_timer {
    time_point due;
    const event* what;
  };

  void set_ordinary_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type, uint64_t id) override;
  void set_multi_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type, uint64_t id) override;
  void set_request_timeout(time_point t, caf::abstract_actor* self, caf::message_id id) override;
  void schedule_message(time_point t, caf::strong_actor_ptr receiver, caf::mailbox_element_ptr content) override;
  void schedule_message(time_point t, caf::group target, caf::strong_actor_ptr sender, caf::message content) override;

  /// The timers set since the last call (some may have fired or gone since), and forgets them.
  std::vector<set_timer> take_set();

  /// The schedule, to reorder entries of one instant (CAF offers it read-only).
  schedule_map& writable_schedule() { return schedule_; }

 private:
  void note(time_point t);
  std::vector<set_timer> set_;
};

/// CAF's test coordinator (messages run one at a time, in order, when asked)
/// over a recording_clock.
class virtual_scheduler : public caf::scheduler::test_coordinator {
 public:
  explicit virtual_scheduler(caf::actor_system& sys) : test_coordinator(sys) {}
  recording_clock& clock() noexcept override { return clock_; }
  static caf::actor_system::module* make(caf::actor_system& sys, caf::detail::type_list<>) {
    return new virtual_scheduler(sys);
  }

 private:
  recording_clock clock_;
};

/// Makes the actor system of `cfg` run on the virtual clock.
void use_virtual_clock(caf::actor_system_config& cfg);

/// Whether `sys` runs on the virtual clock.
bool on_virtual_clock(caf::actor_system& sys);

class virtual_timeline {
 public:
  /// `sys` runs on the virtual clock (use_virtual_clock).
  explicit virtual_timeline(caf::actor_system& sys);

  /// Runs every message, then puts the timers they set in order.
  void run();

  /// Fires the earliest pending timer (after ordering any set since run()).
  /// Returns false when none is pending.
  bool fire_next();

  /// Wall time spent ordering and firing timers (the clock's own cost).
  std::chrono::steady_clock::duration cost() const { return cost_; }

 private:
  void order_new_timers();

  virtual_scheduler& sched_;
  std::chrono::steady_clock::duration cost_{};
};

}  // namespace syncpoint
