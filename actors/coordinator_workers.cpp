// The coordinator's table of workers (actors/coordinator_workers.hpp).
#include "actors/coordinator_workers.hpp"

#include <stdexcept>

namespace syncpoint {

const char* to_string(slot_state s) {
  switch (s) {
    case slot_state::vacant: return "vacant";
    case slot_state::unstarted: return "unstarted";
    case slot_state::running: return "running";
    case slot_state::held: return "held";
    case slot_state::away: return "away";
    case slot_state::reply_deferred: return "reply_deferred";
    case slot_state::away_released: return "away_released";
    case slot_state::start_deferred: return "start_deferred";
  }
  return "?";
}

worker_table::worker_table(size_t n, uint32_t batch) {
  worker_slot fresh;  // live, waiting for its start
  fresh.batch = batch;
  slots_.assign(n, fresh);
  live_count_ = waiting_count_ = static_cast<int>(n);
  if (n > 0)
    live_clocks_[0] = static_cast<uint32_t>(n);
}

std::vector<worker_id> worker_table::live_workers() const {
  std::vector<worker_id> out;
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].live())
      out.push_back(static_cast<worker_id>(i));
  return out;
}

std::vector<worker_actor> worker_table::handles() const {
  std::vector<worker_actor> out;
  for (auto& s : slots_)
    out.push_back(s.handle);
  return out;
}

std::vector<uint64_t> worker_table::samples() const {
  std::vector<uint64_t> out;
  for (auto& s : slots_)
    out.push_back(s.samples);
  return out;
}

// Every state change goes through here: the counts follow it.
void worker_table::set(size_t i, slot_state to) {
  auto& s = slots_[i];
  bool was_live = s.live(), was_waiting = s.live() && s.waiting();
  s.state = to;
  bool is_live = s.live(), is_waiting = s.live() && s.waiting();
  live_count_ += static_cast<int>(is_live) - static_cast<int>(was_live);
  waiting_count_ += static_cast<int>(is_waiting) - static_cast<int>(was_waiting);
  if (was_live && !is_live)
    drop_clock(s.clock);
  else if (!was_live && is_live)
    ++live_clocks_[s.clock];
}

void worker_table::move(size_t i, slot_state from, slot_state to) {
  if (slots_[i].state != from)
    throw std::logic_error("coordinator: worker " + std::to_string(i) + " cannot move from " +
                           to_string(slots_[i].state) + " to " + to_string(to) + " (expected " + to_string(from) +
                           ")");
  set(i, to);
}

void worker_table::drop_clock(uint64_t c) {
  auto it = live_clocks_.find(c);
  if (--it->second == 0)
    live_clocks_.erase(it);
}

void worker_table::joined(size_t i, worker_actor handle, uint64_t clock, uint64_t event, uint32_t batch) {
  auto& s = slots_[i];
  s.handle = std::move(handle);
  s.clock = clock;
  s.promise = {};
  s.waiting_since = event;
  s.batch = batch;
  s.pending_release = 0;
  move(i, slot_state::vacant, slot_state::unstarted);
}

push_reply worker_table::release_now(size_t i) {
  auto& s = slots_[i];
  if (s.state != slot_state::unstarted)
    move(i, slot_state::held, slot_state::running);
  else
    set(i, slot_state::running);
  s.pending_release = 0;
  return std::move(s.promise);
}

void worker_table::hold_release(size_t i, const proceed& p) {
  auto& s = slots_[i];
  switch (s.state) {
    case slot_state::unstarted: set(i, slot_state::start_deferred); break;
    case slot_state::held: set(i, slot_state::reply_deferred); break;
    default: move(i, slot_state::away, slot_state::away_released); break;
  }
  s.pending_release = 0;
  s.held_back = p;
}

push_reply worker_table::delivered(size_t i) {
  auto& s = slots_[i];
  if (s.state == slot_state::start_deferred)
    set(i, slot_state::running);
  else
    move(i, slot_state::reply_deferred, slot_state::running);
  return std::move(s.promise);
}

void worker_table::pushed(size_t i, push_reply rp, uint64_t event, nanos accepted, uint64_t iter) {
  auto& s = slots_[i];
  move(i, slot_state::running, slot_state::held);
  s.promise = std::move(rp);
  s.push_iter = iter;
  s.waiting_since = event;
  s.accepted = accepted;
}

void worker_table::asked_again(size_t i, push_reply rp) {
  auto& s = slots_[i];
  if (s.state == slot_state::away_released) {
    set(i, slot_state::running);
    return;
  }
  move(i, slot_state::away, slot_state::held);
  s.promise = std::move(rp);
}

void worker_table::also_answer(size_t i, push_reply rp) {
  auto& s = slots_[i];
  if (s.state != slot_state::held && s.state != slot_state::reply_deferred)
    throw std::logic_error(std::string("worker_table: no held push to answer again in state ") + to_string(s.state));
  s.promise.add(std::move(rp));
}

void worker_table::lost(size_t i) {
  auto& s = slots_[i];
  set(i, slot_state::vacant);
  s.promise = {};
  s.pending_release = 0;
}

void worker_table::tick(size_t i) {
  auto& s = slots_[i];
  if (s.live()) {
    drop_clock(s.clock);
    ++live_clocks_[s.clock + 1];
  }
  ++s.clock;
}

worker_table::saved_flags worker_table::flags(size_t i) const {
  auto& s = slots_[i];
  bool deferred_reply = s.state == slot_state::reply_deferred || s.state == slot_state::away_released;
  return {s.live(), !s.live(), s.live() && s.waiting(), s.holds_push(), deferred_reply};
}

void worker_table::restore(size_t i, const saved_flags& f, const proceed& deferred, uint64_t clock) {
  auto& s = slots_[i];
  set(i, slot_state::vacant);  // the counts forget it, then count it as it was
  s.clock = clock;
  s.held_back = deferred;
  s.promise = {};
  if (f.gone || !f.live)
    return;
  if (f.waiting && !f.has_deferred)
    set(i, f.held ? slot_state::away : slot_state::unstarted);
  else if (!f.waiting && f.held && f.has_deferred)
    set(i, slot_state::away_released);
  else if (!f.waiting && !f.held && !f.has_deferred)
    set(i, slot_state::running);
  else
    throw std::invalid_argument("worker " + std::to_string(i) +
                                ": the checkpoint's coordinator state is not one a worker can be in");
}

}  // namespace syncpoint
