// The parameter server's arithmetic on its state (actors/ps_update.hpp):
// one pass over the model per update, in place when nobody reads the weights.
#include "actors/ps_update.hpp"

#include "core/float_buffers.hpp"

#include <Eigen/Core>

#include <algorithm>

namespace syncpoint {

namespace {

using cvec = Eigen::Map<const Eigen::VectorXf>;

// Where the next weights go: in place if no reader holds the current ones,
// else a spare nobody holds any more, else a new buffer.
float* writable_weights(ps_state& st) {
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
void adopt(ps_state& st, float* out) {
  if (out == st.w->data())
    return;
  auto it = std::find_if(st.spares.begin(), st.spares.end(),
                         [&](const auto& s) { return s->data() == out; });
  std::swap(*it, st.w);  // the old weights become a spare once their readers let go
}

// The pass every update makes over the model: the new weights, next(i, w[i]),
// go where writable_weights says and then become the current ones. `next` may
// update the velocity or the round's step at i in the same pass.
template <class Next>
void rewrite_weights(ps_state& st, Next next) {
  const auto n = st.w->size();
  const float* w = st.w->data();
  float* out = writable_weights(st);
  for (size_t i = 0; i < n; ++i)
    out[i] = next(i, w[i]);
  adopt(st, out);
}

// The momentum of the next step (a ramp after a protocol switch rises to it).
float momentum(ps_state& st) {
  auto mu = static_cast<float>(st.cfg.momentum);
  if (st.ramp_done < st.ramp_steps)
    mu *= static_cast<float>(++st.ramp_done) / static_cast<float>(st.ramp_steps);
  return mu;
}

// One fused pass (the model is large and memory bandwidth is the limit):
//   v <- mu * v + scale * g + share * wd * w,   w <- w - lr * v
// where `share` is the part of a full step this update stands for (1/n for
// one ASP push, 1 for a BSP round), so weight decay per round is protocol-independent.
// `g(i)` is the gradient's element i, read or computed in the same pass.
template <class Gradient>
void sgd_pass(ps_state& st, Gradient g, float scale, float share, float mu) {
  float* v = st.velocity.data();
  const auto lr = static_cast<float>(st.cfg.lr);
  const auto decay = static_cast<float>(st.cfg.weight_decay) * share;
  rewrite_weights(st, [&](size_t i, float w) {
    v[i] = mu * v[i] + scale * g(i) + decay * w;
    return w - lr * v[i];
  });
}

void sgd_step(ps_state& st, const float* g, float scale, float share, float mu) {
  sgd_pass(st, [g](size_t i) { return g[i]; }, scale, share, mu);
}

// A third (or later) push of a round: the held one joins the buffer.
void fold_held(ps_state& st) {
  if (st.held.empty())
    return;
  float* b = st.buffer.data();
  const float* h = st.held.data();
  const float scale = st.buffer_scale, weight = st.held_weight;
  for (size_t i = 0; i < st.buffer.size(); ++i)
    b[i] = round_sum(b[i], scale, h[i], weight);
  st.buffer_scale = 1;
  float_buffers::give(std::move(st.held));
  st.held = {};
}

// Gated mode, adjusted rule: a push moves the weights at once (a round's
// pushes sum, as in BSP's round) but is not a momentum step; it joins the
// round's step, which becomes one at the next publish (close_round).
void round_part(ps_state& st, const float* g, float scale, float share) {
  const auto n = st.w->size();
  if (st.round_step.size() != n)
    st.round_step.assign(n, 0.0f);  // close_round leaves it zeroed
  st.round_open = true;
  float* r = st.round_step.data();
  const auto lr = static_cast<float>(st.cfg.lr);
  const auto decay = static_cast<float>(st.cfg.weight_decay) * share;
  rewrite_weights(st, [&](size_t i, float w) {
    float d = scale * g[i] + decay * w;
    r[i] += d;
    return w - lr * d;
  });
}

}  // namespace

void add_to_round(ps_state& st, gradient_push& g) {
  // Weighted by batch size, normalized at commit: independent of how
  // many workers are live when each push arrives.
  auto weight = static_cast<float>(g.samples);
  if (st.buffered.empty()) {  // the round's first gradient becomes the buffer, no copy
    float_buffers::give(std::move(st.buffer));  // the last round's
    st.buffer = std::move(g.grad);
    st.buffer_scale = weight;
  } else {  // later ones are held, and summed when the next arrives or the round commits
    fold_held(st);
    st.held = std::move(g.grad);
    st.held_weight = weight;
  }
  st.buffer_weight += weight;
  st.buffered.push_back({g.worker, g.iter, g.base_version});
}

// The held push is added in the step's own pass: the round's last gradient
// costs the barrier one pass over the model, not two.
void step_round(ps_state& st) {
  const auto weight = static_cast<float>(st.buffer_weight);
  if (st.held.empty()) {
    sgd_step(st, st.buffer.data(), st.buffer_scale / weight, 1.0f, momentum(st));
  } else {
    const float* b = st.buffer.data();
    const float* h = st.held.data();
    const float scale = st.buffer_scale, held_weight = st.held_weight;
    sgd_pass(st, [=](size_t i) { return round_sum(b[i], scale, h[i], held_weight); }, 1.0f / weight, 1.0f,
             momentum(st));
    st.buffer_scale = 1;
    float_buffers::give(std::move(st.held));
    st.held = {};
  }
}

// A push applied on arrival (immediate and gated modes), `tau` updates stale.
// The adjusted rule (docs/momentum.md): the push weighs 1/(1 + tau/n) of its
// share (staleness-aware SGD), and momentum is a step the workers can see:
// once per round when pulls are gated, else once per push, reduced by the
// mean staleness, because delayed gradients already act as momentum.
void apply_now(ps_state& st, const gradient_push& g, double tau) {
  auto share = st.worker_weight[static_cast<size_t>(g.worker)];
  if (st.cfg.rule == momentum_rule::plain) {
    sgd_step(st, g.grad.data(), share, share, momentum(st));
    return;
  }
  const auto n = static_cast<double>(st.worker_weight.size());
  st.mean_staleness = st.mean_staleness < 0 ? tau : 0.99 * st.mean_staleness + 0.01 * tau;
  auto scale = static_cast<float>(share / (1 + tau / n));
  if (st.mode == ps_mode::gated) {
    round_part(st, g.grad.data(), scale, share);
    return;
  }
  auto mu = momentum(st);
  auto reduced = 1 - (1 - static_cast<double>(mu)) * (1 + st.mean_staleness / n);
  sgd_step(st, g.grad.data(), scale, share, static_cast<float>(std::max(0.0, reduced)));
}

// The round's momentum step: w <- w - lr * mu * v, v <- mu * v + round.
// Together with the parts already applied this equals sgd_step on the round's sum.
void close_round(ps_state& st) {
  if (!st.round_open)
    return;
  const auto mu = momentum(st);
  const auto lr = static_cast<float>(st.cfg.lr);
  float* v = st.velocity.data();
  float* r = st.round_step.data();
  rewrite_weights(st, [&](size_t i, float w) {
    float next = w - lr * mu * v[i];
    v[i] = mu * v[i] + r[i];
    r[i] = 0;
    return next;
  });
  st.round_open = false;
}

// Under the adjusted rule the velocity is per round in buffered and gated
// mode (v ~ the round's mean gradient) and per push in immediate mode (v ~ one
// push's share of it). A switch between the two (Sync-Switch) converts it, so
// the momentum carried over moves the weights as far per round as before
// instead of n times as far (or 1/n) until it decays.
void rescale_velocity(ps_state& st, ps_mode from, ps_mode to) {
  bool per_round_before = from != ps_mode::immediate, per_round_after = to != ps_mode::immediate;
  if (st.cfg.rule != momentum_rule::adjusted || per_round_before == per_round_after || st.worker_weight.empty())
    return;
  auto n = static_cast<float>(st.worker_weight.size());
  float factor = per_round_after ? n : 1 / n;
  for (auto& v : st.velocity)
    v *= factor;
}

// A vectorized read of `g`: NaN * 0 and Inf * 0 are NaN, so the sum is 0 iff all are finite.
bool all_finite(const std::vector<float>& g) {
  return (cvec(g.data(), g.size()).array() * 0.0f).sum() == 0.0f;
}

}  // namespace syncpoint
