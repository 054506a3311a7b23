// One value's step under each optimizer (docs/optimizers.md): the formulas
// torch.optim uses, in its order of operations, shared by the parameter
// server's passes (actors/ps_passes.hpp) and a worker's inner optimizer
// (core/inner_optimizer.hpp), so that both step alike to the bit.
//
//   float v = 0;
//   w = heavy_ball_step(scale * g, w, v, mu, lr, decay);   // v <- mu v + d, w <- w - lr v
#pragma once

#include <cmath>

namespace syncpoint {

/// Momentum SGD: d = sg + decay * w (sg: the gradient as scaled), v <- mu * v + d, w <- w - lr * v.
inline float heavy_ball_step(float sg, float w, float& v, float mu, float lr, float decay) {
  v = mu * v + sg + decay * w;
  return w - lr * v;
}

/// Nesterov (torch.optim.SGD(nesterov=True)): v <- mu * v + d, w <- w - lr * (d + mu * v).
inline float nesterov_step(float sg, float w, float& v, float mu, float lr, float decay) {
  float d = sg + decay * w;
  v = mu * v + d;
  return w - lr * (d + mu * v);
}

/// Adam's and AdamW's constants for one step, each rounded once from double
/// as torch.optim's kernels round them.
struct adam_constants {
  float l2 = 0;       ///< adam: L2 added to the gradient (adamw: 0)
  float shrink = 1;   ///< adamw: 1 - rate * weight decay (adam: 1)
  float step = 0;     ///< lr / (1 - beta1^t)
  float root2 = 1;    ///< sqrt(1 - beta2^t)
  float eps = 0;
  float d1 = 0, d2 = 0;  ///< this step's decay of the moments
  float c1 = 0, c2 = 0;  ///< ... and 1 minus it

  /// A step `t` (as the bias correction counts it) of rate `lr`, decaying
  /// the moments by b1 and b2 (beta1 and beta2, or their powers for a part of a step).
  static adam_constants at(double t, double lr, double beta1, double beta2, double b1, double b2, double eps,
                           float l2, float shrink) {
    adam_constants c;
    c.l2 = l2;
    c.shrink = shrink;
    c.step = static_cast<float>(lr / (1 - std::pow(beta1, t)));
    c.root2 = static_cast<float>(std::sqrt(1 - std::pow(beta2, t)));
    c.eps = static_cast<float>(eps);
    c.d1 = static_cast<float>(b1);
    c.d2 = static_cast<float>(b2);
    c.c1 = static_cast<float>(1 - b1);
    c.c2 = static_cast<float>(1 - b2);
    return c;
  }
};

/// Adam or AdamW: m <- d1 m + c1 g', v <- d2 v + c2 g'^2 (g' = g + l2 w),
/// w <- w * shrink - step * m / (sqrt(v) / root2 + eps), each product in torch's order.
inline float adam_step(float g, float w, float& m, float& v, const adam_constants& c) {
  float gi = g + c.l2 * w;
  m = c.d1 * m + c.c1 * gi;
  v = c.d2 * v + c.c2 * gi * gi;
  return w * c.shrink - c.step * (m / (std::sqrt(v) / c.root2 + c.eps));
}

}  // namespace syncpoint
