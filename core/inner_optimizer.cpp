// A worker's inner optimizer (core/inner_optimizer.hpp).
#include "core/inner_optimizer.hpp"

#include "core/update_rules.hpp"

#include <cmath>
#include <stdexcept>

namespace syncpoint {

inner_kind parse_inner_kind(const std::string& name) {
  if (name == "none")
    return inner_kind::none;
  if (name == "sgd")
    return inner_kind::sgd;
  if (name == "nesterov")
    return inner_kind::nesterov;
  if (name == "adamw")
    return inner_kind::adamw;
  throw std::invalid_argument("unknown inner optimizer '" + name + "' (choose sgd, nesterov or adamw)");
}

std::string to_string(inner_kind k) {
  switch (k) {
    case inner_kind::none: return "none";
    case inner_kind::sgd: return "sgd";
    case inner_kind::nesterov: return "nesterov";
    case inner_kind::adamw: return "adamw";
  }
  return "?";
}

void inner_step(const inner_optimizer_spec& spec, inner_state& s, float* w, const float* g, size_t n, double lr) {
  if (spec.type == inner_kind::none)
    return;
  if (s.first.size() != n)
    s.first.assign(n, 0.0f);
  ++s.steps;
  if (spec.type == inner_kind::adamw) {
    if (s.second.size() != n)
      s.second.assign(n, 0.0f);
    auto c = adam_constants::at(static_cast<double>(s.steps), lr, spec.beta1, spec.beta2, spec.beta1, spec.beta2,
                                spec.eps, 0.0f, static_cast<float>(1 - lr * spec.weight_decay));
    float* m = s.first.data();
    float* v = s.second.data();
    for (size_t i = 0; i < n; ++i)
      w[i] = adam_step(g[i], w[i], m[i], v[i], c);
    return;
  }
  const auto mu = static_cast<float>(spec.momentum), rate = static_cast<float>(lr);
  const auto decay = static_cast<float>(spec.weight_decay);
  float* v = s.first.data();
  if (spec.type == inner_kind::nesterov) {
    for (size_t i = 0; i < n; ++i)
      w[i] = nesterov_step(g[i], w[i], v[i], mu, rate, decay);
  } else {
    for (size_t i = 0; i < n; ++i)
      w[i] = heavy_ball_step(g[i], w[i], v[i], mu, rate, decay);
  }
}

double inner_rate(const inner_optimizer_spec& spec, double lr, double samples, double budget) {
  if (budget <= 0)
    return lr;
  double at = std::min(1.0, samples / budget);
  if (spec.warmup > 0 && at < spec.warmup)
    return lr * at / spec.warmup;
  if (spec.schedule != "cosine")
    return lr;
  double after = spec.warmup >= 1 ? 1.0 : (at - spec.warmup) / (1 - spec.warmup);
  return lr * 0.5 * (1 + std::cos(M_PI * after));
}

}  // namespace syncpoint
