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
/// ```
#pragma once

#include <cstdint>
#include <string>

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
  uint64_t max_rows = 0;                     ///< lru, lfu: the most rows kept
  uint64_t ttl_steps = 0;                    ///< ttl: rows untouched for longer go
  uint32_t admit_after = 1;                  ///< a key's row is made at its Nth sighting (1: the first)
};

}  // namespace syncpoint
