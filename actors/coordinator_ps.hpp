// The PS as the coordinator tracks it (actors/coordinator_state.hpp): its
// mode, the version it is at and the one pulls see, and for a sharded PS
// the sequence of ops every shard takes in one order, the pushes some shards
// have reported, and the syncs that hold releases back (docs/architecture.md,
// "Shards"). The coordinator sends; this says what. Not part of the API.
//
//   ps_sequence ps(/*sequenced=*/true);
//   ps.applied(w, iter);           // every shard holds the push: an apply op, a version
//   auto ops = ps.take_ops();      // ... sent to every shard at the handler's end
#pragma once

#include "actors/coordinator_workers.hpp"
#include "core/interfaces.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace syncpoint {

class ps_sequence {
 public:
  explicit ps_sequence(bool sequenced = false) : sequenced_(sequenced) {}

  bool sequenced() const { return sequenced_; }
  ps_mode mode() const { return mode_; }
  uint64_t version() const { return version_; }
  uint64_t published() const { return published_; }
  uint64_t buffered() const { return buffered_; }
  /// The version a released worker pulls now: what the shards serve at this point of the sequence.
  uint64_t pullable_version() const { return mode_ == ps_mode::gated ? published_ : version_; }

  // -- what the protocol has the PS do
  void committed() {
    ++version_;
    buffered_ = 0;
  }
  void published_now() { published_ = version_; }
  /// A mode change: the PS never strands a round's pushes.
  void mode_set(ps_mode mode) {
    if (mode != ps_mode::buffered)
      round_flushed();
    mode_ = mode;
    published_ = version_;
  }
  /// A push reported with the version the PS made of it (one PS).
  void reported_version(uint64_t v) { version_ = std::max(version_, v); }

  // -- the shards' sequence
  void queue(uint8_t kind, worker_id w, uint64_t n) {
    if (sequenced_)
      ops_.push_back({kind, w, n});
  }
  /// A push every shard holds goes into the model: a new version, or the round's.
  void applied(worker_id w, uint64_t iter) {
    queue(shard_op::apply, w, iter);
    if (mode_ == ps_mode::buffered)
      ++buffered_;
    else
      ++version_;
  }
  /// The PS applies what its round holds (flush, a mode change): a version if anything was.
  void round_flushed() {
    if (sequenced_ && buffered_ > 0)
      ++version_;
    buffered_ = 0;
  }
  /// The ops queued so far, to go to every shard in this order.
  std::vector<shard_op> take_ops() {
    auto ops = std::move(ops_);
    ops_.clear();
    return ops;
  }
  bool ops_queued() const { return !ops_.empty(); }

  // -- syncs with shards of other processes: releases wait while any is out
  void sync_sent(const caf::actor_addr& to) { syncs_out_.insert(to); }
  /// One came back; true when that was the last one out.
  bool sync_answered(const caf::actor_addr& from) {
    auto it = syncs_out_.find(from);
    if (it == syncs_out_.end())
      return false;  // (its copy was lost first)
    syncs_out_.erase(it);
    return syncs_out_.empty();
  }
  /// A copy was lost: a request to a process that died is never answered
  /// (CAF 0.17), so its syncs are done. True when they were the last out.
  bool sync_lost(const caf::actor_addr& copy) { return syncs_out_.erase(copy) > 0 && syncs_out_.empty(); }
  bool syncing() const { return !syncs_out_.empty(); }

  // A push some shards have reported and others not yet: acted on once all
  // have, or at once when one refused its slice (info.refused).
  struct partial_push {
    uint32_t reports = 0;
    std::vector<bool> in;                        // with replicas: by copy (shard * (R + 1) + copy), who has
    push_info info;
    bool lead_in = false;                        // the lead has reported: reply is the worker's
    push_reply reply;  // ... which waits for it
  };
  std::map<std::pair<worker_id, uint64_t>, partial_push> partial;

  /// A checkpoint's figures.
  void restore(ps_mode mode, uint64_t version, uint64_t published, uint64_t buffered) {
    mode_ = mode;
    version_ = version;
    published_ = published;
    buffered_ = buffered;
  }

 private:
  bool sequenced_ = false;
  ps_mode mode_ = ps_mode::immediate;
  uint64_t version_ = 0;
  uint64_t published_ = 0;  // gated mode: what pulls can get
  uint64_t buffered_ = 0;   // a sharded PS: pushes applied into the round since its last commit
  std::vector<shard_op> ops_;
  std::multiset<caf::actor_addr> syncs_out_;  // by the copy each went to
};

}  // namespace syncpoint
