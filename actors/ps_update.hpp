// The parameter server's arithmetic on its state (actors/ps_update.cpp): the
// momentum-SGD step in its modes, each one pass over the model. The PS's
// handlers (actors/parameter_server.cpp) decide when; these say how. Not part
// of the API.
#pragma once

#include "actors/ps_state.hpp"

#include <vector>

namespace syncpoint {

/// Buffered mode: `g` joins the round (its gradient is moved out), weighted
/// by its batch size.
void add_to_round(ps_state& st, gradient_push& g);

/// Buffered mode: one step of the round's mean gradient, weighted by batch
/// size (a round that lost a worker is still one step of the survivors' mean).
/// Needs a round with at least one push; the caller then starts a new round.
void step_round(ps_state& st);

/// Immediate and gated modes: the push `g`, `tau` updates stale, applied now.
void apply_now(ps_state& st, const gradient_push& g, double tau);

/// The weight apply_now gives `g`, `tau` updates stale (its share, less when
/// stale under the adjusted rule): what its row gradients are scaled by.
float push_weight(const ps_state& st, const gradient_push& g, double tau);

/// Gated mode, adjusted rule: the round's momentum step, at a publish.
void close_round(ps_state& st);

/// A mode switch between per-round and per-push steps converts the velocity.
void rescale_velocity(ps_state& st, ps_mode from, ps_mode to);

/// Whether every value of g[0, n) is finite (neither NaN nor Inf).
bool all_finite(const float* g, size_t n);

/// An element of a round's sum: the buffer's times its scale, plus the held
/// push's times its weight. Every path that folds (a later push, the commit, a
/// checkpoint) computes it this one way, so that a resumed run repeats the
/// uninterrupted one bit for bit. (Values, not the state: a store into a
/// float array could alias the state's float members and stop vectorization.)
inline float round_sum(float buffered, float scale, float held, float held_weight) {
  return scale * buffered + held_weight * held;
}

}  // namespace syncpoint
