#include "runtime/job/virtual_time.hpp"

#include <algorithm>
#include <iterator>
#include <limits>

namespace syncpoint {

namespace {

using clock_base = caf::detail::simple_actor_clock;

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

// -- recording_clock ------------------------------------------------------------

// CAF inserts an entry behind those of its instant (a multimap appends equal keys).
void recording_clock::note(time_point t) {
  auto i = schedule_.upper_bound(t);
  if (i != schedule_.begin() && std::prev(i)->first == t)
    set_.push_back({t, std::prev(i)->second.get()});
}

void recording_clock::set_ordinary_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                                           uint64_t id) {
  test_actor_clock::set_ordinary_timeout(t, self, type, id);
  note(t);
}

void recording_clock::set_multi_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                                        uint64_t id) {
  test_actor_clock::set_multi_timeout(t, self, type, id);
  note(t);
}

void recording_clock::set_request_timeout(time_point t, caf::abstract_actor* self, caf::message_id id) {
  test_actor_clock::set_request_timeout(t, self, id);
  note(t);
}

void recording_clock::schedule_message(time_point t, caf::strong_actor_ptr receiver,
                                       caf::mailbox_element_ptr content) {
  test_actor_clock::schedule_message(t, std::move(receiver), std::move(content));
  note(t);
}

void recording_clock::schedule_message(time_point t, caf::group target, caf::strong_actor_ptr sender,
                                       caf::message content) {
  test_actor_clock::schedule_message(t, std::move(target), std::move(sender), std::move(content));
  note(t);
}

std::vector<recording_clock::set_timer> recording_clock::take_set() {
  std::vector<set_timer> out;
  out.swap(set_);
  return out;
}

// -- the scheduler --------------------------------------------------------------

void use_virtual_clock(caf::actor_system_config& cfg) {
  cfg.load<virtual_scheduler>();
}

bool on_virtual_clock(caf::actor_system& sys) {
  return dynamic_cast<virtual_scheduler*>(&sys.scheduler()) != nullptr;
}

// -- virtual_timeline -----------------------------------------------------------

virtual_timeline::virtual_timeline(caf::actor_system& sys)
    : sched_(dynamic_cast<virtual_scheduler&>(sys.scheduler())) {
  sched_.clock().take_set();  // already pending: they keep their order
}

void virtual_timeline::run() {
  sched_.run();
  order_new_timers();
}

bool virtual_timeline::fire_next() {
  order_new_timers();
  auto t0 = std::chrono::steady_clock::now();
  bool fired = sched_.clock().trigger_timeout();
  cost_ += std::chrono::steady_clock::now() - t0;
  return fired;
}

// Each instant's timers set since the last call sit behind those set before
// (CAF appends equal keys): those of an instant that got two or more are put
// in order by receiver, stably, in their places.
void virtual_timeline::order_new_timers() {
  auto t0 = std::chrono::steady_clock::now();
  auto& clock = sched_.clock();
  auto set = clock.take_set();
  if (set.size() > 1) {
    std::stable_sort(set.begin(), set.end(), [](auto& a, auto& b) { return a.due < b.due; });
    auto& schedule = clock.writable_schedule();
    auto none = clock.actor_lookup().end();
    std::vector<clock_base::schedule_map::iterator> fresh;
    std::vector<std::unique_ptr<recording_clock::event>> events;
    std::vector<const recording_clock::event*> news;
    for (size_t a = 0; a < set.size();) {
      size_t b = a;
      while (b < set.size() && set[b].due == set[a].due)
        ++b;
      if (b - a > 1) {
        // The instant's newest entries, back to the first one set before: those
        // still pending of set[a, b) (one may have fired or been cancelled since).
        news.clear();
        for (size_t k = a; k < b; ++k)
          news.push_back(set[k].what);
        std::sort(news.begin(), news.end());
        auto is_new = [&](const recording_clock::event* e) { return std::binary_search(news.begin(), news.end(), e); };
        auto range = schedule.equal_range(set[a].due);
        fresh.clear();
        for (auto i = range.second; i != range.first && is_new(std::prev(i)->second.get());)
          fresh.push_back(--i);
        std::reverse(fresh.begin(), fresh.end());
        if (fresh.size() > 1) {
          events.clear();
          for (auto j : fresh)
            events.push_back(std::move(j->second));
          std::stable_sort(events.begin(), events.end(),
                           [](auto& x, auto& y) { return receiver_of(*x) < receiver_of(*y); });
          for (size_t k = 0; k < fresh.size(); ++k) {
            fresh[k]->second = std::move(events[k]);
            // CAF cancels a timeout through its lookup entry: point it at the new place.
            if (fresh[k]->second->backlink != none)
              fresh[k]->second->backlink->second = fresh[k];
          }
        }
      }
      a = b;
    }
  }
  cost_ += std::chrono::steady_clock::now() - t0;
}

}  // namespace syncpoint
