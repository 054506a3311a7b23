// The coordinator's table of workers (actors/coordinator_state.hpp): what it
// knows of each worker id, one state per slot, moved only by the transitions
// below; the live and waiting counts and the live clocks follow every move,
// so that a protocol's per-push questions are O(1). Not part of the API.
//
//   worker_table t(4, 64);              // four slots, unstarted, batch 64
//   t.release_now(0);                   // unstarted -> running (its start goes as a message)
//   t.pushed(0, promise, event, when);  // running -> held: its reply waits
//   t.hold_release(0, go);              // held -> reply_deferred (a checkpoint holds it back)
//   auto rp = t.delivered(0);           // reply_deferred -> running: answer rp with t[0].held_back
#pragma once

#include "core/interfaces.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace syncpoint {

/// One worker id's state. A slot is live in every state but vacant, and
/// waiting (for a release) in unstarted, held and away. The moves:
///   vacant -> unstarted                          joined (an elastic job, a worker back)
///   unstarted -> running | start_deferred        released (its start message, or held back by a shard sync)
///   running -> held                              it pushed: the reply waits for a release
///   held -> running | reply_deferred             released (the reply goes, or is held back)
///   held -> away (restore only)                  resumed: it asks again for its reply
///   away -> held | away_released                 it asked again; or released before it did
///   away_released -> running                     it asked again: the held-back reply goes
///   reply_deferred, start_deferred -> running    delivered, once nothing holds releases back
///   any -> vacant                                lost, finished, or vacant at the start
enum class slot_state : uint8_t {
  vacant,
  unstarted,
  running,
  held,
  away,
  reply_deferred,
  away_released,
  start_deferred,
};

const char* to_string(slot_state s);

/// The reply to a worker's push: the promise its request made, or with
/// replicated shards one per copy of the lead shard that handed the request
/// on (any of them may be lost meanwhile). Each gets the same answer; the
/// worker takes the first.
class push_reply {
 public:
  push_reply() = default;
  push_reply(caf::typed_response_promise<proceed> rp) { add(std::move(rp)); }  // NOLINT: one promise is a reply
  void add(caf::typed_response_promise<proceed> rp) {
    if (rp.pending())
      promises_.push_back(std::move(rp));
  }
  void add(push_reply&& other) {
    for (auto& rp : other.promises_)
      promises_.push_back(std::move(rp));
    other.promises_.clear();
  }
  bool pending() const { return !promises_.empty(); }
  template <class T>
  void deliver(T&& answer) {
    for (auto& rp : promises_)
      rp.deliver(answer);
    promises_.clear();
  }

 private:
  std::vector<caf::typed_response_promise<proceed>> promises_;
};

/// What the coordinator knows of one worker.
struct worker_slot {
  worker_actor handle;       // invalid until the start (and for a vacant place)
  slot_state state = slot_state::unstarted;
  uint64_t clock = 0;        // pushes so far
  push_reply promise;  // held, reply_deferred: the reply to its push
  proceed held_back;         // reply_deferred, away_released, start_deferred: the release to deliver
  uint64_t waiting_since = 0;  // event number of the push being answered
  uint64_t push_iter = 0;    // held, reply_deferred: the worker's number for that push
  // The last push answered and its answer, said again if the worker asks
  // again: the copies that relayed the answer may have been lost with it.
  uint64_t answered_iter = 0;
  proceed answered;
  nanos accepted = 0;
  uint32_t batch = 0;        // sent with each release
  uint64_t pending_release = 0;  // the release_at timer that is current (0: none)
  uint64_t samples = 0;      // since this coordinator started
  local_work work;           // what it does until its next push, from its next release on
  bool live() const { return state != slot_state::vacant; }
  bool waiting() const {
    return state == slot_state::unstarted || state == slot_state::held || state == slot_state::away;
  }
  /// Released, and its release held back until it can go.
  bool deferred() const {
    return state == slot_state::reply_deferred || state == slot_state::away_released ||
           state == slot_state::start_deferred;
  }
  /// A push of it awaits its reply here (or will be asked for again).
  bool holds_push() const {
    return state == slot_state::held || state == slot_state::reply_deferred || state == slot_state::away ||
           state == slot_state::away_released;
  }
};

class worker_table {
 public:
  worker_table() = default;
  worker_table(size_t n, uint32_t batch);

  size_t size() const { return slots_.size(); }
  bool valid(worker_id w) const { return w >= 0 && static_cast<size_t>(w) < slots_.size(); }
  const worker_slot& operator[](size_t i) const { return slots_[i]; }
  worker_slot& operator[](size_t i) { return slots_[i]; }  // its data; its state only through the moves
  const std::vector<worker_slot>& slots() const { return slots_; }

  int live_count() const { return live_count_; }
  int waiting_count() const { return waiting_count_; }  // live and waiting
  uint64_t min_clock() const { return live_clocks_.empty() ? 0 : live_clocks_.begin()->first; }
  bool everyone_gone() const { return live_count_ == 0; }
  /// Every live worker waits for the reply to its push (held, or its reply
  /// held back), or with `unstarted_too` has not started yet: no push is
  /// partly in and no pull out (a checkpoint's, or a new shard copy's, rest).
  bool at_rest(bool unstarted_too) const {
    for (auto& s : slots_)
      if (s.live() && s.state != slot_state::held && s.state != slot_state::reply_deferred &&
          !(unstarted_too && (s.state == slot_state::unstarted || s.state == slot_state::start_deferred)))
        return false;
    return true;
  }
  std::vector<worker_id> live_workers() const;
  std::vector<worker_actor> handles() const;
  std::vector<uint64_t> samples() const;

  // -- the moves (each checks the state it leaves; a move the table does not have is a bug)
  void joined(size_t i, worker_actor handle, uint64_t clock, uint64_t event, uint32_t batch);
  /// Released, and the release goes now: unstarted or held -> running. Returns
  /// the push's promise to answer (none for an unstarted slot, whose start is a message).
  push_reply release_now(size_t i);
  /// Released, and `p` held back until delivered (or, away, until it asks again).
  void hold_release(size_t i, const proceed& p);
  /// A release held back goes: reply_deferred or start_deferred -> running.
  /// Returns the promise to answer (none for a start).
  push_reply delivered(size_t i);
  void pushed(size_t i, push_reply rp, uint64_t event, nanos accepted, uint64_t iter);
  /// A resumed worker asks again for its reply: away -> held with `rp`, or
  /// away_released -> running (the caller answers `rp` with held_back).
  void asked_again(size_t i, push_reply rp);
  /// A worker whose push is held (or its reply held back) asks again: `rp`
  /// gets the same answer (the copies that took its first ask were lost).
  void also_answer(size_t i, push_reply rp);
  void lost(size_t i);  // -> vacant
  void tick(size_t i);  // one more push on its clock

  // -- a checkpoint's slots (actors/coordinator_checkpoint.cpp)
  struct saved_flags {
    bool live, gone, waiting, held, has_deferred;
  };
  saved_flags flags(size_t i) const;
  /// Puts slot i in the state `f` stands for (the clock and data set beside);
  /// throws std::invalid_argument on flags no coordinator saves.
  void restore(size_t i, const saved_flags& f, const proceed& deferred, uint64_t clock);

 private:
  void move(size_t i, slot_state from, slot_state to);
  void set(size_t i, slot_state to);
  void drop_clock(uint64_t c);
  std::vector<worker_slot> slots_;
  int live_count_ = 0;
  int waiting_count_ = 0;
  std::map<uint64_t, uint32_t> live_clocks_;  // clock -> live workers at it
};

}  // namespace syncpoint
