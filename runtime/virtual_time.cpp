#include "runtime/virtual_time.hpp"

#include <caf/detail/test_actor_clock.hpp>

#include <algorithm>
#include <limits>
#include <vector>

namespace syncpoint {

namespace {

using clock_base = caf::detail::simple_actor_clock;

// CAF keeps the schedule protected and offers it read-only; ordering entries
// of one instant needs it writable. A pointer to the member, taken in a
// derived class, reaches it without a cast of the clock itself.
struct schedule_access : caf::detail::test_actor_clock {
  static clock_base::schedule_map& of(caf::detail::test_actor_clock& clock) {
    return clock.*(&schedule_access::schedule_);
  }
};

caf::actor_id receiver_of(const clock_base::delayed_event& e) {
  const caf::strong_actor_ptr* who = nullptr;
  switch (e.subtype) {
    case clock_base::ordinary_timeout_type:
      who = &static_cast<const clock_base::ordinary_timeout&>(e).self;
      break;
    case clock_base::multi_timeout_type:
      who = &static_cast<const clock_base::multi_timeout&>(e).self;
      break;
    case clock_base::request_timeout_type:
      who = &static_cast<const clock_base::request_timeout&>(e).self;
      break;
    case clock_base::actor_msg_type:
      who = &static_cast<const clock_base::actor_msg&>(e).receiver;
      break;
    default:
      break;
  }
  return who && *who ? (*who)->id() : std::numeric_limits<caf::actor_id>::max();
}

}  // namespace

virtual_timeline::virtual_timeline(caf::scheduler::test_coordinator& sched) : sched_(sched) {
  for (auto& [due, e] : sched_.clock().schedule())
    ordered_.emplace(e.get(), receiver_of(*e));
}

void virtual_timeline::run() {
  sched_.run();
  order_new_timers();
}

bool virtual_timeline::fire_next() {
  order_new_timers();
  auto& schedule = sched_.clock().schedule();
  if (schedule.empty())
    return false;
  ordered_.erase(schedule.begin()->second.get());
  return sched_.clock().trigger_timeout();
}

void virtual_timeline::order_new_timers() {
  auto& schedule = schedule_access::of(sched_.clock());
  auto none = sched_.clock().actor_lookup().end();
  std::unordered_map<const event*, caf::actor_id> now_ordered;
  now_ordered.reserve(schedule.size());
  auto i = schedule.begin();
  while (i != schedule.end()) {
    // One instant's timers: those set before, then (CAF appends equal keys)
    // those set since the last call, which go by receiver, stably.
    auto end = schedule.upper_bound(i->first);
    std::vector<clock_base::schedule_map::iterator> fresh;
    for (auto j = i; j != end; ++j) {
      auto id = receiver_of(*j->second);
      auto known = ordered_.find(j->second.get());
      if (known == ordered_.end() || known->second != id)
        fresh.push_back(j);
      now_ordered.emplace(j->second.get(), id);
    }
    if (fresh.size() > 1) {
      std::vector<std::unique_ptr<event>> events;
      for (auto j : fresh)
        events.push_back(std::move(j->second));
      std::stable_sort(events.begin(), events.end(),
                       [](auto& a, auto& b) { return receiver_of(*a) < receiver_of(*b); });
      for (size_t k = 0; k < fresh.size(); ++k) {
        fresh[k]->second = std::move(events[k]);
        // CAF cancels a timeout through its lookup entry: point it at the new place.
        if (fresh[k]->second->backlink != none)
          fresh[k]->second->backlink->second = fresh[k];
      }
    }
    i = end;
  }
  ordered_ = std::move(now_ordered);
}

}  // namespace syncpoint
