// The parameter server's arithmetic on its state (actors/ps_update.hpp):
// one pass over the model per update, in place when nobody reads the weights.
#include "actors/ps_update.hpp"

#include "actors/ps_passes.hpp"
#include "actors/ps_rows.hpp"
#include "core/float_buffers.hpp"
#include "core/index_ranges.hpp"
#include "core/parallel_chunks.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <atomic>
#include <cmath>

namespace syncpoint {

namespace {

using cvec = Eigen::Map<const Eigen::VectorXf>;

using namespace passes;

// The momentum of the next step (a ramp after a protocol switch rises to it).
float momentum(ps_state& st) {
  auto mu = static_cast<float>(st.cfg.momentum);
  if (st.ramp_done < st.ramp_steps)
    mu *= static_cast<float>(++st.ramp_done) / static_cast<float>(st.ramp_steps);
  return mu;
}

// The rate of an update that brings `samples` more into the model: the
// schedule's at the samples taken in after it (docs/optimizers.md).
float rate_after(ps_state& st, uint64_t samples) {
  st.samples_applied += samples;
  st.lr = st.scheduled_lr();
  return static_cast<float>(st.lr);
}

// A push applied on arrival: its buffers move the PS's `scale` of the way.
void sgd_step(ps_state& st, const float* g, float scale, float share, float mu, float lr) {
  sgd_pass(st, [g](size_t i) { return g[i]; }, scale, share, mu, lr, buffers_toward(g, scale));
}

// A third (or later) push of a round: the held one joins the buffer.
void fold_held(ps_state& st) {
  if (st.held.empty())
    return;
  float* b = st.buffer.data();
  const float* h = st.held.data();
  const float scale = st.buffer_scale, weight = st.held_weight;
  parallel_chunks(st.buffer.size(), [b, h, scale, weight](size_t begin, size_t end) {
    float* out = b;  // locals, which the stores cannot reach: the loop vectorizes (ps_passes.hpp)
    const float *held = h, s = scale, hw = weight;
#if defined(__clang__)
#pragma clang loop vectorize(assume_safety)
#else
#pragma GCC ivdep
#endif
    for (size_t i = begin; i < end; ++i)
      out[i] = round_sum(out[i], s, held[i], hw);
  });
  st.buffer_scale = 1;
  st.held.give_back();
}

// Gated mode, adjusted rule: a push moves the weights at once (a round's
// pushes sum, as in BSP's round) but is not a momentum step; it joins the
// round's step, which becomes one at the next publish (close_round).
void round_part(ps_state& st, const float* g, float scale, float share, float lr) {
  const auto n = st.w->size();
  if (st.round_step.size() != n)
    st.round_step.assign(n, 0.0f);  // close_round leaves it zeroed
  st.round_open = true;
  float* r = st.round_step.data();
  const auto decay = static_cast<float>(st.cfg.weight_decay) * share;
  rewrite_weights(st, [=](size_t i, float w) {
    float d = scale * g[i] + decay * w;
    r[i] += d;
    return w - lr * d;
  }, buffers_toward(g, scale));
}

// Momentum lowered by a staleness of `rounds` (docs/momentum.md): stale
// gradients already act as momentum.
float stale_momentum(float mu, double rounds) {
  return static_cast<float>(std::max(0.0, 1 - (1 - static_cast<double>(mu)) * (1 + rounds)));
}

// Buffered mode: how many rounds of samples old a push is (samples taken in
// since the version it was computed on, over a round's: every live worker's
// batch). 0 in BSP, whose pushes are all of the version just committed.
double rounds_stale(const ps_state& st, const gradient_push& g) {
  auto& known = st.samples_at_version;
  if (g.base_version >= st.version || known.empty())
    return 0;
  // Its version's entry (every version has one, the last few rounds' are kept; an older one: the oldest).
  auto at = std::lower_bound(known.begin(), known.end(), std::make_pair(g.base_version, uint64_t{0}));
  if (at == known.end())
    return 0;
  auto share = st.worker_weight[static_cast<size_t>(g.worker)];
  if (share <= 0)
    return 0;
  auto round = static_cast<double>(g.samples) / static_cast<double>(share);  // every live worker's batch
  return static_cast<double>(st.samples_applied - std::min(st.samples_applied, at->second)) / round;
}

}  // namespace

void add_to_round(ps_state& st, gradient_push& g) {
  // Weighted by batch size, normalized at commit: independent of how
  // many workers are live when each push arrives. Under the adjusted rule a
  // push some rounds stale weighs less (a commit that released only some
  // workers leaves the others' next pushes stale), as in immediate mode.
  auto weight = static_cast<float>(g.samples);
  if (st.cfg.rule == momentum_rule::adjusted && !st.cfg.optimizer.adaptive()) {
    auto tau = rounds_stale(st, g);
    st.round_staleness = 0.99 * st.round_staleness + 0.01 * tau;
    if (tau > 0)
      weight = static_cast<float>(g.samples / (1 + tau));
  }
  if (st.cfg.rows_async)  // --sparse-sync async: the rows now, as an asp push's (docs/sparse.md)
    apply_rows(st, g, push_weight(st, g, static_cast<double>(st.version - std::min(st.version, g.base_version))));
  else
    add_rows_to_round(st, g, st.buffered.empty() ? 0 : st.held.empty() ? 1 : 2, st.buffer_scale, st.held_weight);
  if (st.buffered.empty()) {  // the round's first gradient becomes the buffer, no copy
    float_buffers::give(std::move(st.buffer));  // the last round's
    st.buffer = g.grad.take();  // a view (a slice of a sharded push): copied now
    st.buffer_scale = weight;
  } else {  // later ones are held, and summed when the next arrives or the round commits
    fold_held(st);
    st.held = std::move(g.grad);  // read only: a view stays one
    st.held_weight = weight;
  }
  st.buffer_weight += g.samples;
  st.buffer_taken += weight;
  st.buffer_share += st.worker_weight[static_cast<size_t>(g.worker)];
  st.buffered.push_back({g.worker, g.iter, g.base_version});
  // In the model's positions, so that a checkpoint merges shards' alike.
  add_ranges(st.round_ranges, g.ranges.empty() ? std::vector<uint64_t>{st.cfg.offset, st.cfg.offset + st.w->size()}
                                                : shift_ranges(g.ranges, st.cfg.offset));
}

// The held push is added in the step's own pass: the round's last gradient
// costs the barrier one pass over the model, not two.
void step_round(ps_state& st) {
  // The weight rule (PROTOCOLS.md): each push weighs its share of a round, so
  // a commit of some workers' pushes is that share of a step, and a whole
  // round (BSP) is one step of their mean. The shares as the pushes came, or
  // as they are now, whichever is more: a round a worker joined during is
  // whole by the first, one a worker left before pushing by the second.
  double share = 0;
  for (auto& p : st.buffered)
    share += st.worker_weight[static_cast<size_t>(p.worker)];
  share = std::max(share, st.buffer_share);
  const bool adjusted = st.cfg.rule == momentum_rule::adjusted && !st.cfg.optimizer.adaptive();
  const bool part = adjusted && share < 1 - 0.5 / static_cast<double>(st.worker_weight.size());
  const auto weight = static_cast<float>(part ? st.buffer_weight / share : st.buffer_weight);  // the step's divisor
  const auto lr = rate_after(st, static_cast<uint64_t>(std::llround(st.buffer_weight)));
  const float* b = st.buffer.data();
  const float* h = st.held.data();
  const float scale = st.buffer_scale, held_weight = st.held_weight;
  auto held_sum = [=](size_t i) { return round_sum(b[i], scale, h[i], held_weight); };
  const float mean = 1.0f / static_cast<float>(st.buffer_taken);  // the buffers: the pushes' weighted mean
  auto plain_mean = [=](size_t i) { return mean * scale * b[i]; };
  auto held_mean = [=](size_t i) { return mean * held_sum(i); };
  if (st.cfg.optimizer.adaptive()) {  // one step of the round's mean, as torch.optim's
    st.steps += 1;
    const auto b1 = st.cfg.optimizer.beta1, b2 = st.cfg.optimizer.beta2;
    if (st.held.empty())
      adam_pass(st, plain_mean, st.steps, b1, b2, st.lr, 1.0, buffers_to(plain_mean));
    else
      adam_pass(st, held_mean, st.steps, b1, b2, st.lr, 1.0, buffers_to(held_mean));
  } else {
    // Momentum as in immediate mode: stale pushes already act as momentum.
    auto mu = momentum(st);
    if (adjusted && st.round_staleness > 0)
      mu = stale_momentum(mu, st.round_staleness);
    if (st.held.empty())
      sgd_pass(st, [b](size_t i) { return b[i]; }, scale / weight, 1.0f, mu, lr, buffers_to(plain_mean));
    else
      sgd_pass(st, held_sum, 1.0f / weight, 1.0f, mu, lr, buffers_to(held_mean));
  }
  if (!st.tables.empty())  // the rows by the same factor and sum as the values
    step_round_rows(st, !st.held.empty(), scale, held_weight, st.held.empty() ? scale / weight : 1.0f / weight);
  if (!st.held.empty()) {
    st.buffer_scale = 1;
    st.held.give_back();
  }
}

// A push applied on arrival (immediate and gated modes), `tau` updates stale.
// The adjusted rule (docs/momentum.md, docs/optimizers.md): the push weighs
// 1/(1 + tau/n) of its share (staleness-aware SGD), and momentum is a step the
// workers can see: once per round when pulls are gated, else once per push,
// reduced by the mean staleness, because delayed gradients already act as
// momentum. Adam's moments take each push as `share` of a step: they decay by
// beta^share, so a round of n pushes decays them as one BSP step does.
float push_weight(const ps_state& st, const gradient_push& g, double tau) {
  auto share = st.worker_weight[static_cast<size_t>(g.worker)];
  const auto n = static_cast<double>(st.worker_weight.size());
  return static_cast<float>(st.cfg.rule == momentum_rule::plain ? static_cast<double>(share) : share / (1 + tau / n));
}

void apply_now(ps_state& st, const gradient_push& g, double tau) {
  auto share = st.worker_weight[static_cast<size_t>(g.worker)];
  const auto lr = rate_after(st, g.samples);
  const float* grad = g.grad.data();
  const auto n = static_cast<double>(st.worker_weight.size());
  const bool plain = st.cfg.rule == momentum_rule::plain;
  if (!plain)
    st.mean_staleness = st.mean_staleness < 0 ? tau : 0.99 * st.mean_staleness + 0.01 * tau;
  auto weigh = plain ? static_cast<double>(share) : share / (1 + tau / n);
  if (st.cfg.optimizer.adaptive()) {
    const auto& o = st.cfg.optimizer;
    double part = plain ? 1.0 : static_cast<double>(share);  // of a step, for the moments
    st.steps += part;
    adam_pass(st, [grad](size_t i) { return grad[i]; }, st.steps, std::pow(o.beta1, part), std::pow(o.beta2, part),
              st.lr * weigh, share, buffers_toward(grad, static_cast<float>(weigh)));
    return;
  }
  auto scale = static_cast<float>(weigh);
  if (st.mode == ps_mode::delayed) {  // no momentum now: the commit adds it (close_round)
    round_part(st, grad, scale, share, lr);
    return;
  }
  if (plain) {
    sgd_step(st, grad, share, share, momentum(st), lr);
    return;
  }
  if (st.mode == ps_mode::gated) {
    round_part(st, grad, scale, share, lr);
    return;
  }
  sgd_step(st, grad, scale, share, stale_momentum(momentum(st), st.mean_staleness / n), lr);
}

// The round's momentum step: w <- w - lr * mu * v, v <- mu * v + round
// (Nesterov: v <- mu * v + round, w <- w - lr * mu * v). Together with the
// parts already applied this equals sgd_step on the round's sum.
void close_round(ps_state& st) {
  if (!st.round_open)
    return;
  const auto mu = momentum(st);
  const auto lr = rate_after(st, 0);
  float* v = st.velocity.data();
  float* r = st.round_step.data();
  if (st.cfg.optimizer.kind == optimizer_kind::nesterov) {
    rewrite_weights(st, [=](size_t i, float w) {
      v[i] = mu * v[i] + r[i];
      r[i] = 0;
      return w - lr * mu * v[i];
    });
  } else {
    rewrite_weights(st, [=](size_t i, float w) {
      float next = w - lr * mu * v[i];
      v[i] = mu * v[i] + r[i];
      r[i] = 0;
      return next;
    });
  }
  st.round_open = false;
}

// Under the adjusted rule the velocity is per round in buffered and gated
// mode (v ~ the round's mean gradient) and per push in immediate mode (v ~ one
// push's share of it). A switch between the two (Sync-Switch) converts it, so
// the momentum carried over moves the weights as far per round as before
// instead of n times as far (or 1/n) until it decays. Adam's moments are
// averages whose decay is counted in steps either way: nothing to convert.
void rescale_velocity(ps_state& st, ps_mode from, ps_mode to) {
  bool per_round_before = from != ps_mode::immediate, per_round_after = to != ps_mode::immediate;
  if (st.cfg.rule != momentum_rule::adjusted || per_round_before == per_round_after || st.worker_weight.empty() ||
      st.cfg.optimizer.adaptive())
    return;
  auto n = static_cast<float>(st.worker_weight.size());
  float factor = per_round_after ? n : 1 / n;
  for (auto& v : st.velocity)
    v *= factor;
}

// A vectorized read of `g`: NaN * 0 and Inf * 0 are NaN, so a chunk's sum is
// 0 iff all its values are finite. Chunks on several cores for a large model.
bool all_finite(const float* g, size_t n) {
  std::atomic<bool> finite{true};
  parallel_chunks(n, [&](size_t begin, size_t end) {
    if ((cvec(g + begin, static_cast<Eigen::Index>(end - begin)).array() * 0.0f).sum() != 0.0f)
      finite.store(false, std::memory_order_relaxed);
  });
  return finite.load();
}

}  // namespace syncpoint
