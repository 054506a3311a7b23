// --compress on the worker (docs/compression.md): error feedback around a
// registered compressor (compress_with_feedback). The residual e holds what
// compression left out; the next gradient g goes as C(g + e), and e becomes
// (g + e) - C(g + e). Each
// shard's slice is compressed alone (as BytePS compresses each partition), so
// a slice's bytes are its own; the model's buffers (BatchNorm statistics, at
// its end) are no gradient and go as they are.
#include "actors/worker_state.hpp"

#include <algorithm>
#include <cmath>

namespace syncpoint {

namespace {

// The parameters of shard k's slice: [begin, end) of it that holds no buffers.
std::pair<size_t, size_t> parameters_of(const worker_state& st, size_t k) {
  auto parameters = st.m->size() - st.m->buffers();
  return {std::min(st.cfg.ps.begin(k), parameters), std::min(st.cfg.ps.end(k), parameters)};
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
    auto [b, end] = parameters_of(st, k);
    compress_with_feedback(*st.cfg.compress, st.grad.data() + b, st.residual.data() + b, end - b, slice_seed(st, k));
  }
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
  auto values = st.cfg.compress ? st.cfg.compress->bytes(params) : params * sizeof(float);
  return values + buffers * sizeof(float);
}

}  // namespace syncpoint
