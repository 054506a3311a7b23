// --compress on the worker (docs/compression.md): error feedback around a
// registered compressor (compress_with_feedback). The residual e holds what
// compression left out; the next gradient g goes as C(g + e), and e becomes
// (g + e) - C(g + e). Each
// shard's slice is compressed alone (as BytePS compresses each partition), so
// a slice's bytes are its own; the model's buffers (BatchNorm statistics, at
// its end) are no gradient and go as they are. A sparse model's row
// gradients are compressed too, without feedback (compress_rows).
#include "actors/worker_state.hpp"
#include "core/index_ranges.hpp"

#include <algorithm>
#include <cmath>

namespace syncpoint {

namespace {

// The parameters of shard k's slice: [begin, end) of it that holds no buffers.
std::pair<size_t, size_t> parameters_of(const worker_state& st, size_t k) {
  auto parameters = st.m->size() - st.m->buffers();
  return {std::min(st.cfg.ps.begin(k), parameters), std::min(st.cfg.ps.end(k), parameters)};
}

// ... and of those, the ones the push carries: all, or its fragment's
// (<syncpoint/local_work.hpp>), as [begin, end) ranges of the model.
std::vector<std::pair<size_t, size_t>> pushed_parameters(const worker_state& st, size_t k,
                                                         const local_work& work) {
  auto [b, e] = parameters_of(st, k);
  auto fragment = fragment_ranges(*st.m, work);
  if (fragment.empty())
    return {{b, e}};
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t r = 0; r + 1 < fragment.size(); r += 2) {
    auto lo = std::max<size_t>(b, fragment[r]), hi = std::min<size_t>(e, fragment[r + 1]);
    if (lo < hi)
      out.emplace_back(lo, hi);
  }
  return out;
}

// splitmix64's finalizer.
uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A seed per (run, worker, iteration, slice), each mixed in turn: the same when the run is repeated.
uint64_t slice_seed(const worker_state& st, size_t k) {
  return mix(mix(mix(mix(st.cfg.seed) ^ static_cast<uint64_t>(st.cfg.id)) ^ st.iter) ^ k);
}

}  // namespace

void compress_gradient(worker_state& st) {
  auto parameters = st.m->size() - st.m->buffers();
  if (st.residual.size() != parameters)
    st.residual.assign(parameters, 0.0f);
  for (size_t k = 0; k < st.cfg.ps.size(); ++k) {
    auto ranges = pushed_parameters(st, k, st.local.built_work);
    if (ranges.size() == 1) {  // one run of values: compressed in place
      auto [b, end] = ranges.front();
      compress_with_feedback(*st.cfg.compress, st.grad.data() + b, st.residual.data() + b, end - b,
                             slice_seed(st, k));
      continue;
    }
    // A fragment's runs: compressed as one block (a top-k over all of them), then put back.
    std::vector<float> values, residual;
    for (auto [b, e] : ranges) {
      values.insert(values.end(), st.grad.begin() + static_cast<std::ptrdiff_t>(b),
                    st.grad.begin() + static_cast<std::ptrdiff_t>(e));
      residual.insert(residual.end(), st.residual.begin() + static_cast<std::ptrdiff_t>(b),
                      st.residual.begin() + static_cast<std::ptrdiff_t>(e));
    }
    compress_with_feedback(*st.cfg.compress, values.data(), residual.data(), values.size(), slice_seed(st, k));
    size_t at = 0;
    for (auto [b, e] : ranges) {
      std::copy(values.begin() + static_cast<std::ptrdiff_t>(at), values.begin() + static_cast<std::ptrdiff_t>(at + e - b),
                st.grad.begin() + static_cast<std::ptrdiff_t>(b));
      std::copy(residual.begin() + static_cast<std::ptrdiff_t>(at),
                residual.begin() + static_cast<std::ptrdiff_t>(at + e - b), st.residual.begin() + static_cast<std::ptrdiff_t>(b));
      at += e - b;
    }
  }
}

// A sparse model's row gradients: each table's block compressed as one slice (its keys go as
// they are), with no error feedback. A residual a key would be a table on the worker of every key
// it ever touched, as large as the PS's own; Persia and Monolith likewise send embeddings'
// gradients plain or quantized, without feedback.
void compress_rows(worker_state& st) {
  for (auto& b : st.row_grads)
    if (!b.values.empty())
      st.cfg.compress->compress(b.values.data(), b.values.size(), mix(slice_seed(st, st.cfg.ps.size()) ^ b.table));
}

uint64_t row_wire_bytes(const worker_state& st, const std::vector<row_block>& rows) {
  uint64_t n = 0;
  for (auto& b : rows) {
    n += b.keys.size() * sizeof(uint64_t);
    if (!b.values.empty())
      n += st.cfg.compress ? st.cfg.compress->bytes(b.values.size()) : b.values.size() * sizeof(float);
  }
  return n;
}

std::vector<uint64_t> slice_ranges(const worker_state& st, size_t k, const local_work& work) {
  if (work.fragments <= 1)
    return {};
  auto begin = st.cfg.ps.begin(k), end = st.cfg.ps.end(k);
  std::vector<uint64_t> out;
  for (auto [b, e] : pushed_parameters(st, k, work))
    out.insert(out.end(), {b - begin, e - begin});
  auto buffers_from = std::max<size_t>(st.m->size() - st.m->buffers(), begin);
  if (buffers_from < end)  // the buffers in this slice go with every fragment
    out.insert(out.end(), {buffers_from - begin, end - begin});
  if (out.empty())
    out = {0, 0};  // nothing of this slice: one empty range (an empty list would be all of it)
  return out;
}

uint64_t pulled_bytes(const worker_state& st, size_t k) {
  double scale = st.cfg.wire_bytes > 0 ? st.cfg.wire_bytes / (sizeof(float) * static_cast<double>(st.m->size())) : 1.0;
  auto ranges = slice_ranges(st, k, st.local.pushed_work);
  uint64_t values = ranges.empty() ? st.cfg.ps.end(k) - st.cfg.ps.begin(k) : ranges_size(ranges);
  return static_cast<uint64_t>(std::llround(static_cast<double>(values) * scale)) * sizeof(float);
}

uint64_t slice_bytes(const worker_state& st, size_t k) {
  // As the link charges: --wire-bytes (simulate's timing-only model holds one value for a whole
  // named model) counts each value held as that many.
  double scale = st.cfg.wire_bytes > 0 ? st.cfg.wire_bytes / (sizeof(float) * static_cast<double>(st.m->size())) : 1.0;
  auto charged = [&](uint64_t values) { return static_cast<size_t>(std::llround(static_cast<double>(values) * scale)); };
  auto [b, end] = parameters_of(st, k);
  auto whole = charged(st.cfg.ps.end(k) - st.cfg.ps.begin(k));
  auto params = std::min(charged(end - b), whole);
  auto buffers = whole - params;  // (BatchNorm statistics go as they are)
  if (st.local.built_work.fragments > 1) {  // a fragment's values only
    size_t pushed = 0;
    for (auto [lo, hi] : pushed_parameters(st, k, st.local.built_work))
      pushed += hi - lo;
    params = charged(pushed);
  }
  auto values = st.cfg.compress ? st.cfg.compress->bytes(params) : params * sizeof(float);
  return values + buffers * sizeof(float);
}

}  // namespace syncpoint
