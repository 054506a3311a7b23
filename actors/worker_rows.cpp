// A worker's rows of a sparse model (actors/worker_state.hpp): the next
// step's keys go with the pull, each shard asked for those it keeps; the
// rows that come back are the pulled version's, and the model takes them
// with the weights; the step's row gradients go with the push, each shard
// its keys' (docs/sparse.md).
#include "actors/worker_state.hpp"
#include "core/row_blocks.hpp"

#include <algorithm>
#include <utility>

namespace syncpoint {

void ask_rows(worker_state& st) {
  auto shards = static_cast<uint32_t>(st.cfg.ps.size());
  auto keys = st.loop->keys(*st.m, st.batch);
  if (keys.size() != st.widths.size())
    throw std::invalid_argument("the loop gave keys of " + std::to_string(keys.size()) + " tables, the model has " +
                                std::to_string(st.widths.size()));
  st.rows_asked.assign(shards, {});
  for (auto& asked : st.rows_asked)
    for (uint32_t t = 0; t < st.widths.size(); ++t)
      asked.push_back({t, {}, {}});
  for (uint32_t t = 0; t < keys.size(); ++t) {
    auto& k = keys[t];
    make_distinct(k);
    for (auto key : k)
      st.rows_asked[shards == 1 ? 0 : row_shard(key, shards)][t].keys.push_back(key);
  }
  st.rows_in.clear();
  for (uint32_t t = 0; t < st.widths.size(); ++t)
    st.rows_in.push_back({t, {}, {}});
  st.rows_loaded = false;
}

void rows_came(worker_state& st, std::vector<row_block>& rows) {
  for (auto& b : rows) {
    if (b.table >= st.rows_in.size() || b.values.size() != b.keys.size() * st.widths[b.table])
      throw std::invalid_argument("a pull brought rows of table " + std::to_string(b.table) + " that do not fit it");
    append_rows(st.rows_in, b);
  }
}

void load_pulled_rows(worker_state& st) {
  st.rows_held = std::move(st.rows_in);
  st.m->load_rows(st.rows_held);
  st.rows_in.clear();
  st.rows_loaded = true;
}

bool keep_row_gradients(worker_state& st, std::string& why, std::optional<std::vector<row_block>> given) {
  if (!st.rows_loaded) {
    why = "the step had no rows of its own batch: a sparse model computes each step after a pull of its keys, and "
          "this protocol computed without one (local steps or an overlapped push)";
    return false;
  }
  st.rows_loaded = false;
  st.row_grads = given ? std::move(*given) : st.m->row_gradients();
  std::vector<bool> seen(st.widths.size(), false);
  for (auto& g : st.row_grads) {
    if (g.table < seen.size() && seen[g.table]) {
      why = std::string(given ? "the loop's" : "the model's") + " row gradients name table " + std::to_string(g.table) +
            " twice (a block a table)";
      return false;
    }
    if (g.table < seen.size())
      seen[g.table] = true;
    if (g.table >= st.widths.size() || g.values.size() != g.keys.size() * st.widths[g.table]) {
      why = std::string(given ? "the loop's" : "the model's") + " row gradients of table " + std::to_string(g.table) + " hold " +
            std::to_string(g.values.size()) + " values for " + std::to_string(g.keys.size()) + " keys" +
            (g.table < st.widths.size() ? " of width " + std::to_string(st.widths[g.table]) : ", a table it does not have");
      return false;
    }
  }
  return true;
}

std::vector<row_block> row_gradients_for(const worker_state& st, size_t k) {
  auto shards = static_cast<uint32_t>(st.cfg.ps.size());
  if (shards == 1)
    return st.row_grads;
  std::vector<row_block> out;
  for (auto& g : st.row_grads) {
    row_block part{g.table, {}, {}};
    auto width = st.widths[g.table];
    for (size_t i = 0; i < g.keys.size(); ++i)
      if (row_shard(g.keys[i], shards) == k) {
        part.keys.push_back(g.keys[i]);
        part.values.insert(part.values.end(), g.values.begin() + static_cast<std::ptrdiff_t>(i * width),
                           g.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * width));
      }
    out.push_back(std::move(part));
  }
  return out;
}

void save_rows(const worker_state& st, saved_worker& s) {
  s.rows_asked = st.rows_asked;
  s.rows_in = st.rows_in;
  s.rows_loaded = st.rows_loaded;
  if (st.rows_loaded)
    s.rows_held = st.rows_held;
  s.row_grads = st.row_grads;
}

void restore_rows(worker_state& st, const saved_worker& s) {
  auto fits = [&](const std::vector<row_block>& blocks) {
    return std::all_of(blocks.begin(), blocks.end(), [&](const row_block& b) {
      return b.table < st.widths.size() && b.values.size() == b.keys.size() * st.widths[b.table];
    });
  };
  bool asked_fit = std::all_of(s.rows_asked.begin(), s.rows_asked.end(), [&](const std::vector<row_block>& a) {
    return std::all_of(a.begin(), a.end(), [&](const row_block& b) { return b.table < st.widths.size(); });
  });
  if (!asked_fit || !fits(s.rows_in) || !fits(s.rows_held) || !fits(s.row_grads))
    throw std::invalid_argument("worker " + std::to_string(s.id) + ": the checkpoint's rows do not fit the model's tables");
  st.rows_asked = s.rows_asked;
  auto shards = static_cast<uint32_t>(st.cfg.ps.size());
  if (!s.rows_asked.empty() && s.rows_asked.size() != shards) {  // another shard count: each key to its shard now
    st.rows_asked.assign(shards, {});
    for (auto& asked : st.rows_asked)
      for (uint32_t t = 0; t < st.widths.size(); ++t)
        asked.push_back({t, {}, {}});
    for (auto& asked : s.rows_asked)
      for (auto& b : asked)
        for (auto key : b.keys)
          st.rows_asked[row_shard(key, shards)][b.table].keys.push_back(key);
    for (auto& asked : st.rows_asked)
      for (auto& b : asked)
        std::sort(b.keys.begin(), b.keys.end());
  }
  st.rows_in = s.rows_in;
  st.row_grads = s.row_grads;
  st.rows_loaded = s.rows_loaded;
  st.rows_held = s.rows_held;
  if (st.rows_loaded)
    st.m->load_rows(st.rows_held);
}

}  // namespace syncpoint
