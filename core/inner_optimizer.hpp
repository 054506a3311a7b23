// A worker's inner optimizer (<syncpoint/local_work.hpp>): the steps it takes
// on its own copy of the model between exchanges, with the PS's formulas
// (core/update_rules.hpp), and the state that persists across exchanges.
//
//   inner_state moments;
//   inner_step(spec, moments, w.data(), g.data(), n, /*lr=*/4e-4);   // AdamW, say: its moments kept
#pragma once

#include <syncpoint/float_block.hpp>
#include <syncpoint/local_work.hpp>

#include <caf/meta/type_name.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace syncpoint {

/// What persists of an inner optimizer: the momentum or first moment, the
/// second moment, and the steps as AdamW's bias correction counts them.
struct inner_state {
  std::vector<float> first;
  std::vector<float> second;
  uint64_t steps = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, inner_state& x) {
  return f(caf::meta::type_name("inner_state"), float_block{x.first}, float_block{x.second}, x.steps);
}

/// One step of `spec` at rate `lr` on w[0, n) with the gradient g[0, n)
/// (the parameters only: a model's buffers are values, not trained), its state in `s`.
void inner_step(const inner_optimizer_spec& spec, inner_state& s, float* w, const float* g, size_t n, double lr);

/// The inner rate of `spec` (base rate `lr`) when the run has taken in
/// `samples` of a budget of `budget` samples (0: no budget, the constant rate).
double inner_rate(const inner_optimizer_spec& spec, double lr, double samples, double budget);

/// Whether `spec` is plain SGD, which a model's own local_step takes.
inline bool plain_sgd(const inner_optimizer_spec& spec) {
  return spec.type == inner_kind::sgd && spec.momentum == 0 && spec.weight_decay == 0;
}

}  // namespace syncpoint
