// Which examples a worker trains on, in which order: its shard is the
// examples i with i mod workers == id, shuffled by the seed, and reshuffled at
// the end of every pass. A batch may straddle two passes, and the batch size
// may change between batches: within a pass every example of the shard comes
// exactly once.
//
//   shard_sampler s(60000, 4, 1, /*seed=*/1);
//   int64_t next = s.next();   // an example index of worker 1's shard
#pragma once

#include <syncpoint/worker_loop.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace syncpoint {

class shard_sampler {
 public:
  shard_sampler(int64_t examples, int workers, int id, uint64_t seed);

  /// The next example index.
  int64_t next();
  size_t shard_size() const { return shard_.size(); }

  /// Examples drawn so far, and the engine's state after them (as text): a
  /// sampler rebuilt with the same arguments and advanced by draws() next()
  /// calls is in the same place, which rng_state() confirms.
  uint64_t draws() const { return draws_; }
  /// The index next() would return `ahead` calls from now, without drawing:
  /// defined while the current pass has more than `ahead` examples left
  /// (can_peek), since a new pass reshuffles.
  bool can_peek(uint64_t count) const { return cursor_ + count <= shard_.size(); }
  int64_t peek(uint64_t ahead) const { return shard_[cursor_ + ahead]; }
  std::string rng_state() const;
  void advance(uint64_t n);

  /// As a loop's checkpoint: draws() and rng_state().
  loop_state saved() const { return {draws(), rng_state()}; }
  /// Back to `s` (replayed from a fresh sampler); throws std::invalid_argument
  /// naming `worker` when the engine does not match (another data set or seed).
  void restore(const loop_state& s, int worker);

 private:
  std::vector<int64_t> shard_;
  size_t cursor_ = 0;
  uint64_t draws_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace syncpoint
