// --compress on the worker (docs/compression.md): error feedback around a
// registered compressor (compress_with_feedback). The residual e holds what
// compression left out; the next gradient g goes as C(g + e), and e becomes
// (g + e) - C(g + e). Each
// shard's slice is compressed alone (as BytePS compresses each partition), so
// a slice's bytes are its own; the model's buffers (BatchNorm statistics, at
// its end) are no gradient and go as they are.
#include "actors/worker_state.hpp"

#include <algorithm>

namespace syncpoint {

namespace {

// The parameters of shard k's slice: [begin, end) of it that holds no buffers.
std::pair<size_t, size_t> parameters_of(const worker_state& st, size_t k) {
  auto parameters = st.m->size() - st.m->buffers();
  return {std::min(st.cfg.ps.begin(k), parameters), std::min(st.cfg.ps.end(k), parameters)};
}

// A seed per (run, worker, iteration, slice): the same when the run is repeated (splitmix64's mix).
uint64_t slice_seed(const worker_state& st, size_t k) {
  uint64_t z = st.cfg.seed * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(st.cfg.id) << 40) ^ (st.iter << 8) ^ k;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

void compress_gradient(worker_state& st) {
  auto parameters = st.m->size() - st.m->buffers();
  if (st.residual.size() != parameters)
    st.residual.assign(parameters, 0.0f);
  for (size_t k = 0; k < st.cfg.ps.size(); ++k) {
    auto [b, end] = parameters_of(st, k);
    compress_with_feedback(*st.cfg.compress, st.grad.data() + b, st.residual.data() + b, end - b, slice_seed(st, k));
  }
}

uint64_t slice_bytes(const worker_state& st, size_t k) {
  auto dense = static_cast<uint64_t>(st.cfg.ps.end(k) - st.cfg.ps.begin(k)) * sizeof(float);
  if (!st.cfg.compress)
    return dense;
  auto [b, end] = parameters_of(st, k);
  auto buffers = dense / sizeof(float) - (end - b);
  return st.cfg.compress->bytes(end - b) + buffers * sizeof(float);
}

}  // namespace syncpoint
