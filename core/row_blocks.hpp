// Small steps on a sparse model's keys and row blocks (<syncpoint/table.hpp>)
// that the worker, the evaluator and the job's set-up share. Not part of the API.
//
//   syncpoint::make_distinct(keys);            // sorted, each key once
//   syncpoint::append_rows(whole, shard_part);  // one shard's rows after the others'
#pragma once

#include <syncpoint/table.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace syncpoint {

/// `keys` sorted, each once: what a pull asks for.
inline void make_distinct(std::vector<uint64_t>& keys) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
}

/// Appends `part`'s keys and rows to the block of its table in `by_table`
/// (grown to hold it): the rows of one pull or snapshot gathered shard by shard.
inline void append_rows(std::vector<row_block>& by_table, const row_block& part) {
  if (by_table.size() <= part.table)
    by_table.resize(part.table + 1);
  auto& into = by_table[part.table];
  into.table = part.table;
  into.keys.insert(into.keys.end(), part.keys.begin(), part.keys.end());
  into.values.insert(into.values.end(), part.values.begin(), part.values.end());
}

}  // namespace syncpoint
