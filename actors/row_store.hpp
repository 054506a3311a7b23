// One sparse table's rows on one PS shard (include/syncpoint/table.hpp): rows
// by key, made from the key's own generator at the sighting the admission
// filter asks for, moved by the table's row optimizer, kept within its
// capacity. A step is the PS's version (its updates so far); lru and ttl read it.
// A pull served at an older version than the rows have now (a held release,
// gated mode) reads them as they were: the version is pinned, and each row
// changed since keeps its value of then until the pin goes.
//
//   syncpoint::row_store rows(spec, /*seed=*/1);
//   auto values = rows.pull({42, 7});                   // 2 * spec.width floats, rows made if admitted
//   rows.push({42}, grad.data(), /*lr=*/0.1, /*step=*/1);  // grad: spec.width floats a key
#pragma once

#include "core/saved_state.hpp"
#include <syncpoint/table.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace syncpoint {

class row_store {
 public:
  /// Throws std::invalid_argument for a spec that cannot work (a width of 0, lru without max_rows, ...).
  row_store(table_spec spec, uint64_t seed);

  /// The rows of `keys`, in their order (width floats each; a key twice gives its row twice).
  /// A key sighted for the admit_after-th time gets its row; one not yet admitted reads its
  /// initial values without a row being made. Counts as a touch of each key at `step`.
  /// `at`: read the rows as they were at that pinned version (a version not pinned: as they are).
  std::vector<float> pull(const std::vector<uint64_t>& keys, uint64_t step = 0, uint64_t at = UINT64_MAX);

  /// Applies `grads` (width floats a key, in the keys' order; a key twice: the sum) times
  /// `scale` at `lr`: sgd moves a row by lr * (scale * g), in floats, as the PS's dense SGD
  /// moves a value. Throws std::invalid_argument, changing nothing, for a non-finite value.
  /// Gradients of keys without a row (not admitted, or evicted since their pull) are dropped.
  void push(const std::vector<uint64_t>& keys, const float* grads, double lr, uint64_t step, float scale = 1.0f);

  /// The rows of `keys` as pull reads them (a key without a row: its first
  /// values), changing nothing: no row made, touched or evicted, no sighting
  /// counted. What the evaluator reads.
  std::vector<float> peek(const std::vector<uint64_t>& keys) const;

  /// Before the rows change: keeps the rows of each of `versions` readable
  /// (pull's `at`) through the changes that follow, and no others. `now` is
  /// the version the rows are at: a version not pinned yet is pinned if it is
  /// `now` (nothing changed since), and an older one cannot be read any more.
  void keep_versions(const std::set<uint64_t>& versions, uint64_t now);

  /// Drops the rows untouched for more than ttl_steps at `step` (ttl tables; push calls it).
  void expire(uint64_t step);

  /// The initial values of `key`'s row: a function of the key, the table's name and the seed alone.
  std::vector<float> initial_row(uint64_t key) const;

  /// Its state for a checkpoint, `max` keys at a time in key order from
  /// position `from` (its rows, then the keys sighted but not admitted): the
  /// chunk says where the next one starts, or that it is the last. The order
  /// is fixed at position 0 and kept until the last chunk; the store must not
  /// change in between (a checkpoint's cut).
  saved_rows save_rows(uint64_t from, uint64_t max);
  /// Takes a chunk's rows and sightings whose keys `mine` keeps. Throws
  /// std::invalid_argument for a chunk that does not fit the table's width or optimizer.
  void load_rows(const saved_rows& chunk, const std::function<bool(uint64_t)>& mine);
  /// Its counters and pinned versions (the rows go by save_rows), and back;
  /// load_state takes the pins' keys `mine` keeps, and the counters when `counters`.
  saved_table save_state() const;
  void load_state(const saved_table& s, const std::function<bool(uint64_t)>& mine, bool counters);

  /// Whether `key` has a row now.
  bool has(uint64_t key) const { return rows_.count(key) > 0; }
  size_t rows() const { return rows_.size(); }
  uint64_t evictions() const { return evictions_; }
  uint64_t hits() const { return hits_; }      ///< keys pulled that had a row
  uint64_t misses() const { return misses_; }  ///< keys pulled that had none
  /// The bytes its rows take: values and optimizer state (not the index).
  uint64_t bytes() const { return rows_.size() * bytes_per_row(spec_); }
  /// ... a row of `spec`.
  static uint64_t bytes_per_row(const table_spec& spec);
  const table_spec& spec() const { return spec_; }

 private:
  struct row {
    std::vector<float> values;
    std::vector<float> m, v;  // adagrad: v (the sum of squares); adam: both
    uint64_t t = 0;           // adam: the row's own step count
    uint64_t last = 0;        // the step it was last touched
    uint64_t touches = 0;     // how often it was touched
  };
  void touch(uint64_t key, row& r, uint64_t step);
  row& make(uint64_t key, uint64_t step);
  void evict_one();
  void remember(uint64_t key, const row& r);  // before a row changes: its values for the pinned versions
  std::pair<uint64_t, uint64_t> rank_of(const row& r) const;  // what eviction orders by

  table_spec spec_;
  uint64_t seed_;
  std::unordered_map<uint64_t, row> rows_;
  std::set<std::pair<std::pair<uint64_t, uint64_t>, uint64_t>> order_;  // (rank, key): lru, lfu, ttl
  std::unordered_map<uint64_t, uint32_t> sightings_;                    // keys not yet admitted
  struct pinned {
    std::unordered_map<uint64_t, std::vector<float>> before;  // rows changed since, as they were
  };
  std::map<uint64_t, pinned> pins_;
  std::vector<uint64_t> saving_;  // save_rows: the keys in order (rows, then sightings) until the last chunk
  size_t saving_rows_ = 0;        // ... of which rows
  uint64_t evictions_ = 0, hits_ = 0, misses_ = 0;
};

}  // namespace syncpoint
