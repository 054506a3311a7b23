// The parameter server's sparse tables (actors/ps_rows.cpp): a shard keeps
// the rows of the keys row_shard gives it, takes a push's row gradients in
// with its dense slice (on arrival, or summed into the round and stepped at
// the commit with the same weights as the dense values), and answers a pull's
// keys with the rows of the version the pull gets. Not part of the API.
#pragma once

#include "actors/ps_state.hpp"

#include <vector>

namespace syncpoint {

/// The bytes `rows` take on the wire: 8 a key, 4 a value.
inline uint64_t row_bytes(const std::vector<row_block>& rows) {
  uint64_t n = 0;
  for (auto& b : rows)
    n += b.keys.size() * sizeof(uint64_t) + b.values.size() * sizeof(float);
  return n;
}

/// The shard's tables, from cfg.tables (throws std::invalid_argument for an impossible spec).
void make_tables(ps_state& st);

/// Whether g's row gradients fit this shard's tables: known tables, width
/// floats a key, keys this shard keeps, finite values. The error says which.
caf::error check_rows(const ps_state& st, const gradient_push& g);

/// Immediate, gated and delayed modes: g's rows stepped now, each gradient
/// times `scale` (the dense slice's weight) at the update's rate.
void apply_rows(ps_state& st, const gradient_push& g, float scale);

/// Buffered mode: g's rows join the round as its dense slice does. `before`:
/// 0, g is the round's first push (its rows become the buffer); 1, no push
/// is held yet; 2, one is: its rows first fold into the buffer with the
/// dense buffer's `scale` and `held_weight` as they were before g came (as
/// the dense held push folds, also after a resume that saved it folded).
void add_rows_to_round(ps_state& st, const gradient_push& g, size_t before, float scale, float held_weight);

/// Buffered mode, at the commit: each row of the round stepped by `factor`
/// times its sum (with `held`, a round of two pushes or more: round_sum of
/// buffer and held with `scale` and `held_weight`; else the buffer's), at
/// the update's rate.
void step_round_rows(ps_state& st, bool held, float scale, float held_weight, float factor);

/// Keeps the rows of the versions still to be served (held releases, gated
/// mode's published one) readable through later changes: called when one is
/// held or published, and before each update that changes rows.
void keep_served(ps_state& st);

/// The rows of `asked` as they were at `version` (the current one, or one a
/// held release or gated mode kept readable).
std::vector<row_block> read_rows(ps_state& st, const std::vector<row_block>& asked, uint64_t version);

/// An error when the shard's rows hold more than --ps-memory (cfg.memory_limit) allows.
caf::error over_memory(const ps_state& st);

/// For a checkpoint: the shard's tables beside their rows (the round's row
/// sums folded as save() folds the dense buffer), and table t's chunk of
/// rows from position `from` (row_store::save_rows).
std::vector<saved_table> save_tables(const ps_state& st);
saved_rows save_rows_chunk(ps_state& st, uint32_t t, uint64_t from);

/// At a resume: the tables of every saved shard, of which this shard takes
/// the keys row_shard gives it now (the counters: its own, or with another
/// shard count all of them on shard 0); then each chunk of saved rows.
/// Throws std::invalid_argument for a table the model lacks or a chunk that does not fit.
void restore_tables(ps_state& st, const std::vector<saved_table>& saved);
void load_rows_chunk(ps_state& st, const saved_rows& chunk);

/// Each table's figures on this shard (rows, bytes, evictions, hits, misses).
std::vector<table_counts> table_figures(const ps_state& st);

/// The rows of cfg.eval_keys now, for a snapshot.
std::vector<row_block> eval_rows(ps_state& st);

}  // namespace syncpoint
