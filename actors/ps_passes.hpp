// The parameter server's passes over the model (actors/ps_update.cpp): each
// update is one fused loop over weights and optimizer state, in place when
// nobody reads the weights. Templates, so that the gradient's source (a push,
// or a round's buffered sum) is read inside the loop. Not part of the API.
#pragma once

#include "actors/ps_state.hpp"
#include "core/parallel_chunks.hpp"

#include <algorithm>
#include <cmath>

namespace syncpoint::passes {

// Where the next weights go: in place if no reader holds the current ones,
// else a spare nobody holds any more, else a new buffer.
inline float* writable_weights(ps_state& st) {
  if (sole_owner(st.w))
    return st.w->data();
  for (auto& s : st.spares)
    if (sole_owner(s))
      return s->data();
  if (st.spares.size() >= 8)  // readers hold them all: let one go to its readers
    st.spares.erase(st.spares.begin());
  st.spares.push_back(std::make_shared<std::vector<float>>(st.w->size()));
  return st.spares.back()->data();
}

// After writing new weights into `out`: they become the current ones.
inline void adopt(ps_state& st, float* out) {
  if (out == st.w->data())
    return;
  auto it = std::find_if(st.spares.begin(), st.spares.end(), [&](const auto& s) { return s->data() == out; });
  std::swap(*it, st.w);  // the old weights become a spare once their readers let go
}

// The pass every update makes over the model: the new weights, next(i, w[i])
// for the parameters and buffer(i, w[i]) for the model's buffers after them,
// go where writable_weights says and then become the current ones. `next`
// may update the optimizer's state or the round's step at i in the same pass,
// and nothing else: a model of millions of parameters is passed over on
// several cores at once (core/parallel_chunks.hpp), with the same result.
//
// The loop vectorizes: each chunk reads `next` from a copy of its own, which
// no store in the loop can reach, and `ivdep` says what the compiler cannot
// see, that out, w and the state `next` writes meet only at the same index.
// So `next` captures by value (pointers and constants), never by reference.
//
// An update of a fragment (st.only, <syncpoint/local_work.hpp>) passes over
// its ranges alone: the other values and their optimizer state stay as they are.
template <class Next, class Buffer>
void rewrite_weights(ps_state& st, Next next, Buffer buffer) {
  const auto n = st.w->size(), trained = st.trained;
  const float* w = st.w->data();
  float* out = writable_weights(st);
  auto pass = [&next, &buffer, w, out, trained](size_t lo, size_t hi) {
    parallel_chunks(std::min(hi, trained) - std::min(lo, trained), [&next, w, out, lo](size_t begin, size_t end) {
      const Next f = next;
#if defined(__clang__)
#pragma clang loop vectorize(assume_safety)
#else
#pragma GCC ivdep
#endif
      for (size_t i = lo + begin; i < lo + end; ++i)
        out[i] = f(i, w[i]);
    });
    for (size_t i = std::max(lo, trained); i < hi; ++i)
      out[i] = buffer(i, w[i]);
  };
  if (st.only.empty()) {
    pass(0, n);
  } else {
    if (out != w)
      std::copy(w, w + n, out);
    for (size_t r = 0; r + 1 < st.only.size(); r += 2)
      pass(static_cast<size_t>(st.only[r]), static_cast<size_t>(st.only[r + 1]));
  }
  adopt(st, out);
}

// An update that leaves the buffers as they are.
inline float keep_buffer(size_t, float w) {
  return w;
}

template <class Next>
void rewrite_weights(ps_state& st, Next next) {
  rewrite_weights(st, next, keep_buffer);
}

// The buffer rules (docs/buffers.md): a round takes the weighted mean of its
// pushes' buffers, as it takes their gradients; a push applied on arrival
// moves them its weight of the way to its own.
template <class Pushed>
auto buffers_to(Pushed value) {
  return [value](size_t i, float) { return value(i); };
}
inline auto buffers_toward(const float* pushed, float weight) {
  return [pushed, weight](size_t i, float w) { return w + weight * (pushed[i] - w); };
}

// Momentum SGD, heavy ball or Nesterov, in one pass:
//   d <- scale * g + share * wd * w,   v <- mu * v + d,
//   w <- w - lr * v              (heavy ball)
//   w <- w - lr * (d + mu * v)   (Nesterov, as torch.optim.SGD(nesterov=True))
// where `share` is the part of a full step this update stands for (1/n for one
// ASP push, 1 for a BSP round), so weight decay per round is protocol-independent.
template <class Gradient, class Buffer>
void sgd_pass(ps_state& st, Gradient g, float scale, float share, float mu, float lr, Buffer buffer) {
  float* v = st.velocity.data();
  const auto decay = static_cast<float>(st.cfg.weight_decay) * share;
  if (st.cfg.optimizer.kind == optimizer_kind::nesterov) {
    rewrite_weights(st, [=](size_t i, float w) {
      float d = scale * g(i) + decay * w;
      v[i] = mu * v[i] + d;
      return w - lr * (d + mu * v[i]);
    }, buffer);
    return;
  }
  rewrite_weights(st, [=](size_t i, float w) {
    v[i] = mu * v[i] + scale * g(i) + decay * w;
    return w - lr * v[i];
  }, buffer);
}

// Adam or AdamW (torch.optim's formulas), one pass. `steps` counts updates
// as the bias correction sees them, `b1` and `b2` are this update's decay of
// the moments, `lr` the rate of its step, `decayed` the share of a step's
// decoupled weight decay it makes (adamw):
//   g' <- g + wd * w (adam),   m <- b1 * m + (1 - b1) * g',   v <- b2 * v + (1 - b2) * g'^2,
//   w  <- w * (1 - rate * wd * decayed) (adamw),
//   w  <- w - lr / (1 - beta1^steps) * m / (sqrt(v) / sqrt(1 - beta2^steps) + eps)
// where `rate` is the schedule's rate, lr / weigh of the step.
template <class Gradient, class Buffer>
void adam_pass(ps_state& st, Gradient g, double steps, double b1, double b2, double lr, double decayed, Buffer buffer) {
  float* m = st.velocity.data();
  float* v = st.second.data();
  const auto& o = st.cfg.optimizer;
  const bool decoupled = o.kind == optimizer_kind::adamw;
  const auto wd = static_cast<float>(st.cfg.weight_decay);
  const auto l2 = decoupled ? 0.0f : wd;
  const auto shrink = decoupled ? static_cast<float>(1 - st.lr * st.cfg.weight_decay * decayed) : 1.0f;
  // Each constant rounded once from double, and each product in torch's
  // order (step * (m / denom)): the same floats as torch.optim's kernels.
  const auto step = static_cast<float>(lr / (1 - std::pow(o.beta1, steps)));
  const auto root2 = static_cast<float>(std::sqrt(1 - std::pow(o.beta2, steps)));
  const auto eps = static_cast<float>(o.eps);
  const auto d1 = static_cast<float>(b1), d2 = static_cast<float>(b2);
  const auto c1 = static_cast<float>(1 - b1), c2 = static_cast<float>(1 - b2);
  rewrite_weights(st, [=](size_t i, float w) {
    float gi = g(i) + l2 * w;
    m[i] = d1 * m[i] + c1 * gi;
    v[i] = d2 * v[i] + c2 * gi * gi;
    return w * shrink - step * (m[i] / (std::sqrt(v[i]) / root2 + eps));
  }, buffer);
}

}  // namespace syncpoint::passes
