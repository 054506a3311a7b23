// The parameter server's sparse tables (actors/ps_rows.hpp).
#include "actors/ps_rows.hpp"

#include "actors/ps_update.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_set>

namespace syncpoint {

// The versions a held release or gated mode still serves stay readable
// through the changes that follow (none with async rows, read as they are).
void keep_served(ps_state& st) {
  if (st.cfg.rows_async || st.tables.empty())
    return;
  std::set<uint64_t> served;
  for (auto& [w, out] : st.to_serve)
    served.insert(out.version);
  if (st.mode == ps_mode::gated)
    served.insert(st.visible_version);
  for (auto& t : st.tables)
    t.keep_versions(served, st.version);
}

namespace {

std::string table_name(const ps_state& st, uint32_t t) {
  return "table '" + st.tables[t].spec().name + "'";
}

}  // namespace

void make_tables(ps_state& st) {
  st.tables.clear();
  for (auto& spec : st.cfg.tables)
    st.tables.emplace_back(spec, st.cfg.seed);
  st.row_rounds.assign(st.tables.size(), {});
}

caf::error check_rows(const ps_state& st, const gradient_push& g) {
  auto from = " from worker " + std::to_string(g.worker) + " (iteration " + std::to_string(g.iter) + ")";
  std::vector<bool> seen(st.tables.size(), false);
  for (auto& b : g.rows) {
    if (b.table >= st.tables.size())
      return make_error(sp_error::bad_input, "row gradients of table " + std::to_string(b.table) + from + ": the model has " +
                                               std::to_string(st.tables.size()) + " tables");
    if (seen[b.table])
      return make_error(sp_error::bad_input, "row gradients of " + table_name(st, b.table) + from + " in two blocks");
    seen[b.table] = true;
    std::unordered_set<uint64_t> keys(b.keys.begin(), b.keys.end());
    if (keys.size() != b.keys.size())
      return make_error(sp_error::bad_input, "row gradients of " + table_name(st, b.table) + from +
                                               " name a key twice (a push sums a batch's gradients of a key into one row)");
    auto width = st.tables[b.table].spec().width;
    if (b.values.size() != b.keys.size() * width)
      return make_error(sp_error::wrong_size, "row gradients of " + table_name(st, b.table) + from + ": " +
                                                std::to_string(b.values.size()) + " values for " +
                                                std::to_string(b.keys.size()) + " keys of width " + std::to_string(width));
    for (auto key : b.keys)
      if (row_shard(key, st.cfg.shards) != st.cfg.shard)
        return make_error(sp_error::bad_input, "row gradients of " + table_name(st, b.table) + from + ": key " +
                                                 std::to_string(key) + " belongs to shard " +
                                                 std::to_string(row_shard(key, st.cfg.shards)) + ", not " +
                                                 std::to_string(st.cfg.shard));
    if (!all_finite(b.values.data(), b.values.size()))
      return make_error(sp_error::non_finite, "row gradients of " + table_name(st, b.table) + from +
                                                " contain NaN or Inf");
  }
  return caf::none;
}

void apply_rows(ps_state& st, const gradient_push& g, float scale) {
  if (g.rows.empty())
    return;
  keep_served(st);
  for (auto& b : g.rows)
    st.tables[b.table].push(b.keys, b.values.data(), st.lr, st.version, scale);
}

void add_rows_to_round(ps_state& st, const gradient_push& g, size_t before, float scale, float held_weight) {
  const bool first = before == 0;
  for (size_t t = 0; t < st.row_rounds.size(); ++t) {
    auto& r = st.row_rounds[t];
    auto width = st.tables[t].spec().width;
    if (first) {
      r.buffer.clear();
      r.held.clear();
    } else if (before >= 2) {
      // The held push folds in as the dense one does: every value of the
      // buffer becomes scale * buffered + held_weight * held.
      for (auto& [key, h] : r.held)
        r.buffer.try_emplace(key, width, 0.0f);
      for (auto& [key, b] : r.buffer) {
        auto h = r.held.find(key);
        for (uint32_t j = 0; j < width; ++j)
          b[j] = round_sum(b[j], scale, h == r.held.end() ? 0.0f : h->second[j], held_weight);
      }
      r.held.clear();
    }
    auto& into = first ? r.buffer : r.held;
    for (auto& b : g.rows)
      if (b.table == t)
        for (size_t k = 0; k < b.keys.size(); ++k)
          into[b.keys[k]].assign(b.values.begin() + static_cast<std::ptrdiff_t>(k * width),
                                 b.values.begin() + static_cast<std::ptrdiff_t>((k + 1) * width));
  }
}

namespace {

// A round's row sums as the dense buffer's are summed: each key the round's
// pushes carried, in key order, with its buffered row, or with `held` the
// held push's folded in (round_sum with `scale` and `held_weight`).
row_block round_sums(const ps_state::row_round& r, uint32_t table, uint32_t width, bool held, float scale,
                     float held_weight) {
  row_block out{table, {}, {}};
  for (auto& [key, b] : r.buffer)
    out.keys.push_back(key);
  for (auto& [key, h] : r.held)
    if (!r.buffer.count(key))
      out.keys.push_back(key);
  std::sort(out.keys.begin(), out.keys.end());
  out.values.reserve(out.keys.size() * width);
  for (auto key : out.keys) {
    auto b = r.buffer.find(key);
    auto h = r.held.find(key);
    for (uint32_t j = 0; j < width; ++j) {
      float bj = b == r.buffer.end() ? 0.0f : b->second[j];
      out.values.push_back(!held ? bj : round_sum(bj, scale, h == r.held.end() ? 0.0f : h->second[j], held_weight));
    }
  }
  return out;
}

}  // namespace

void step_round_rows(ps_state& st, bool held, float scale, float held_weight, float factor) {
  keep_served(st);
  for (size_t t = 0; t < st.row_rounds.size(); ++t) {
    auto& r = st.row_rounds[t];
    auto sums = round_sums(r, static_cast<uint32_t>(t), st.tables[t].spec().width, held, scale, held_weight);
    st.tables[t].push(sums.keys, sums.values.data(), st.lr, st.version, factor);
    r.buffer.clear();
    r.held.clear();
  }
}

std::vector<row_block> read_rows(ps_state& st, const std::vector<row_block>& asked, uint64_t version) {
  std::vector<row_block> out;
  out.reserve(asked.size());
  for (auto& a : asked) {
    row_block b{a.table, a.keys, {}};
    if (a.table < st.tables.size())  // async rows: as they are now
      b.values = st.tables[a.table].pull(a.keys, st.version, st.cfg.rows_async ? UINT64_MAX : version);
    out.push_back(std::move(b));
  }
  return out;
}

caf::error over_memory(const ps_state& st) {
  if (st.cfg.memory_limit <= 0)
    return caf::none;
  uint64_t bytes = 0;
  for (auto& t : st.tables)
    bytes += t.bytes();
  if (static_cast<double>(bytes) <= st.cfg.memory_limit)
    return caf::none;
  std::string which;
  for (auto& t : st.tables)
    which += (which.empty() ? "'" : ", '") + t.spec().name + "' " + std::to_string(t.rows()) + " rows";
  return make_error(sp_error::bad_input, "PS shard " + std::to_string(st.cfg.shard) + " holds " + std::to_string(bytes) +
                                           " bytes of rows (" + which + "), over --ps-memory " +
                                           std::to_string(static_cast<uint64_t>(st.cfg.memory_limit)) +
                                           ": give the tables a capacity (lru, lfu, ttl), more shards, or more memory");
}

std::vector<table_counts> table_figures(const ps_state& st) {
  std::vector<table_counts> out;
  for (auto& t : st.tables)
    out.push_back({t.spec().name, t.rows(), t.bytes(), t.evictions(), t.hits(), t.misses()});
  return out;
}

std::vector<row_block> eval_rows(ps_state& st) {
  std::vector<row_block> out;
  for (size_t t = 0; t < st.cfg.eval_keys.size() && t < st.tables.size(); ++t)
    out.push_back({static_cast<uint32_t>(t), st.cfg.eval_keys[t], st.tables[t].peek(st.cfg.eval_keys[t])});
  return out;
}

namespace {

// A chunk of about 8 MB of values and optimizer state.
constexpr uint64_t chunk_bytes = uint64_t{8} << 20;

bool mine(const ps_state& st, uint64_t key) {
  return st.cfg.shards == 1 || row_shard(key, st.cfg.shards) == st.cfg.shard;
}

std::string table_at(const ps_state& st, uint32_t t) {
  if (t >= st.tables.size())
    throw std::invalid_argument("the checkpoint holds table " + std::to_string(t) + ", the model has " +
                                std::to_string(st.tables.size()));
  return st.tables[t].spec().name;
}

}  // namespace

std::vector<saved_table> save_tables(const ps_state& st) {
  std::vector<saved_table> out;
  for (uint32_t t = 0; t < st.tables.size(); ++t) {
    auto s = st.tables[t].save_state();
    s.table = t;
    s.shard = st.cfg.shard;
    s.shards = st.cfg.shards;
    s.round = round_sums(st.row_rounds[t], t, st.tables[t].spec().width, !st.held.empty(), st.buffer_scale,
                         st.held_weight);
    out.push_back(std::move(s));
  }
  return out;
}

saved_rows save_rows_chunk(ps_state& st, uint32_t t, uint64_t from) {
  saved_rows c;
  if (t < st.tables.size()) {
    auto& table = st.tables[t];
    c = table.save_rows(from, std::max<uint64_t>(1, chunk_bytes / row_store::bytes_per_row(table.spec())));
  }
  c.table = t;
  c.tables = static_cast<uint32_t>(st.tables.size());
  return c;
}

void restore_tables(ps_state& st, const std::vector<saved_table>& saved) {
  for (auto& r : st.row_rounds)
    r = {};
  for (auto& s : saved) {
    auto name = table_at(st, s.table);
    bool counters = s.shards == st.cfg.shards ? s.shard == st.cfg.shard : st.cfg.shard == 0;
    st.tables[s.table].load_state(s, [&](uint64_t key) { return mine(st, key); }, counters);
    auto width = st.tables[s.table].spec().width;
    if (s.round.values.size() != s.round.keys.size() * width)
      throw std::invalid_argument("the checkpoint's round of table '" + name + "' does not fit rows of width " +
                                  std::to_string(width));
    auto& buffer = st.row_rounds[s.table].buffer;
    for (size_t i = 0; i < s.round.keys.size(); ++i)
      if (mine(st, s.round.keys[i]))
        buffer[s.round.keys[i]].assign(s.round.values.begin() + static_cast<std::ptrdiff_t>(i * width),
                                       s.round.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * width));
  }
}

void load_rows_chunk(ps_state& st, const saved_rows& chunk) {
  table_at(st, chunk.table);
  st.tables[chunk.table].load_rows(chunk, [&](uint64_t key) { return mine(st, key); });
}

}  // namespace syncpoint
