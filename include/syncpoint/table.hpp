/// \file
/// A sparse table of the parameter server (issue 61, docs/plans/issue-61.md):
/// rows of `width` floats by 64-bit key, made at a key's first touch from a
/// generator seeded by the key, moved by a row optimizer with lazy updates,
/// and kept within a capacity policy.
///
/// ```cpp
/// syncpoint::table_spec t;
/// t.name = "ids";
/// t.width = 16;
/// t.optimizer = syncpoint::row_optimizer::adagrad;
/// t.capacity = syncpoint::row_capacity::lru;
/// t.max_rows = 1000000;
/// // A batch's rows, as a sparse model reads them (model::load_rows):
/// syncpoint::row_block rows{0, {42, 7}, std::vector<float>(2 * t.width)};
/// uint32_t shard = syncpoint::row_shard(42, 3);  // which of 3 PS shards keeps key 42
/// ```
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace syncpoint {

/// How a row's values start: normal(0, scale), uniform(-scale, scale), or zeros.
enum class row_init : uint8_t { normal, uniform, zeros };
/// How a pushed row gradient moves a row (lazily: a row's state moves only when it is touched).
enum class row_optimizer : uint8_t { sgd, adagrad, adam };
/// Which rows a table keeps: all it made, or at most max_rows (the least recently, or least
/// often, touched row goes first), or the rows touched within the last ttl_steps steps.
enum class row_capacity : uint8_t { unbounded, lru, lfu, ttl };

/// One table: its rows, how they start, move and are kept.
struct table_spec {
  std::string name;                          ///< how jobs, pushes and reports name it
  uint32_t width = 8;                        ///< floats a row
  row_init init = row_init::normal;          ///< a row's first values, drawn from its key's own generator
  double init_scale = 0.01;                  ///< normal: the standard deviation; uniform: the bound
  row_optimizer optimizer = row_optimizer::sgd;  ///< how pushed gradients move its rows
  double beta1 = 0.9;                        ///< adam: the first moment's decay
  double beta2 = 0.999;                      ///< adam: the second moment's decay
  double eps = 1e-8;                         ///< adagrad, adam: added to the denominator
  row_capacity capacity = row_capacity::unbounded;  ///< which rows it keeps
  uint64_t max_rows = 0;                     ///< lru, lfu: the most rows each PS shard keeps
  uint64_t ttl_steps = 0;                    ///< ttl: rows untouched for longer go
  uint32_t admit_after = 1;                  ///< a key's row is made at its Nth sighting (1: the first)
  /// How many distinct keys it may see (0: unknown). An unbounded table
  /// whose rows would pass a shard's memory limit (--ps-memory) is refused
  /// before a job starts; one that passes it as it runs ends the job.
  uint64_t expected_keys = 0;
};

/// Rows of one table by key: what a sparse model reads and what its gradient
/// writes (model::load_rows, model::row_gradients), and what a pull brings and
/// a push carries.
struct row_block {
  uint32_t table = 0;          ///< the table's place in model::tables()
  std::vector<uint64_t> keys;  ///< distinct keys
  std::vector<float> values;   ///< keys.size() * the table's width floats, row after row
};

/// A row's first values: drawn from a generator seeded by the job's `seed`,
/// the table's name and the key alone, so that a row starts the same
/// whichever worker touches it first, and a model that holds the table
/// densely can start from the same rows.
std::vector<float> initial_row(const table_spec& t, uint64_t seed, uint64_t key);

/// The PS shard among `shards` that keeps `key`'s row: jump consistent hash
/// (Lamping and Veach, 2014), so rows spread evenly and a key's shard depends
/// on the key and the shard count alone.
uint32_t row_shard(uint64_t key, uint32_t shards);

}  // namespace syncpoint
