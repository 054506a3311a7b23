// The coordinator's timers (actors/coordinator_state.hpp): a protocol's
// set_timer and release_at, by id, until they fire. A release_at is current
// while its worker's slot names its id (worker_slot::pending_release); a
// later release or loss of the worker makes it void. Not part of the API.
//
//   timer_table t;
//   auto id = t.add({true, 2, true, 0, due});   // release worker 2 at `due`
//   if (auto e = t.take(id)) ...                // fired: what it was for
#pragma once

#include <syncpoint/messages.hpp>

#include <cstdint>
#include <map>
#include <optional>

namespace syncpoint {

struct timer_entry {
  bool is_release = false;  // a release_at (else a protocol timer, `tag`)
  worker_id worker = -1;
  bool pull = true;
  uint64_t tag = 0;
  nanos due = 0;            // on the run clock
};

class timer_table {
 public:
  /// A new timer; its id (ids only grow, so a checkpoint keeps their order).
  uint64_t add(const timer_entry& e) {
    auto id = ++next_;
    entries_.emplace(id, e);
    return id;
  }
  /// The timer `id` fired: what it was for, and it is gone (none: unknown or taken).
  std::optional<timer_entry> take(uint64_t id) {
    auto it = entries_.find(id);
    if (it == entries_.end())
      return std::nullopt;
    auto e = it->second;
    entries_.erase(it);
    return e;
  }
  const std::map<uint64_t, timer_entry>& pending() const { return entries_; }
  uint64_t last_id() const { return next_; }
  /// A checkpoint's timers: the pending ones and the last id given.
  void restore(std::map<uint64_t, timer_entry> entries, uint64_t last_id) {
    entries_ = std::move(entries);
    next_ = last_id;
  }

 private:
  std::map<uint64_t, timer_entry> entries_;
  uint64_t next_ = 0;
};

}  // namespace syncpoint
