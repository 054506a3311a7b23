/// \file
/// What a worker does between two exchanges with the parameter server: a
/// protocol sets it per worker through coordinator_api::set_local_work, and
/// it holds from the worker's next release (docs/protocols.md, "Local updates").
/// The default is what every protocol before the local-update family did: one
/// gradient an exchange, pushed as it is, the pulled model replacing the worker's.
///
/// ```cpp
/// syncpoint::local_work diloco;                    // DiLoCo (Douillard et al. 2023)
/// diloco.steps = 50;                               // H inner steps an exchange
/// diloco.inner.type = syncpoint::inner_kind::adamw;
/// diloco.inner.lr = 4e-4;
/// diloco.push = syncpoint::push_kind::outer;       // Δ = θ_pulled − θ_local
/// c.set_local_work(w, diloco);                     // in a protocol's on_start
/// ```
#pragma once

#include <syncpoint/float_block.hpp>

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>

namespace syncpoint {

/// How a local step moves the worker's own copy of the model.
enum class inner_kind : uint8_t {
  none,      ///< it does not: every gradient goes to the PS (one step an exchange)
  sgd,       ///< w <- w - lr (g + momentum), heavy ball (momentum 0: the model's own local step)
  nesterov,  ///< as torch.optim.SGD(nesterov=True)
  adamw,     ///< as torch.optim.AdamW
};

/// "none", "sgd", "nesterov", "adamw"; throws std::invalid_argument naming the choices.
inner_kind parse_inner_kind(const std::string& name);
std::string to_string(inner_kind k);  ///< the name parse_inner_kind reads

/// A worker's inner optimizer: its rule, rate and schedule. Its state (the
/// momentum, AdamW's moments) persists across exchanges and is checkpointed.
struct inner_optimizer_spec {
  inner_kind type = inner_kind::none;  ///< its rule
  double lr = 0;             ///< 0: the PS's scheduled rate at the release (WBSP's local step)
  double momentum = 0;       ///< sgd, nesterov
  double weight_decay = 0;   ///< sgd, nesterov: L2; adamw: decoupled
  double beta1 = 0.9;        ///< adamw
  double beta2 = 0.999;      ///< adamw
  double eps = 1e-8;         ///< adamw
  /// The rate over the run: "constant" or "cosine" (from lr down to 0 over
  /// the run's sample budget), after a linear warmup over the share `warmup`
  /// of the run (0: none). A worker places itself in the run by the samples
  /// of its last release plus its own since, times the live workers.
  std::string schedule = "constant";
  double warmup = 0;  ///< the share of the run the warmup takes (0: none)
};

/// What a worker pushes at the end of its local steps.
enum class push_kind : uint8_t {
  gradient,  ///< the mean of its gradients since the last exchange (one: the gradient itself)
  outer,     ///< the outer gradient Δ = θ_pulled − θ_local (DiLoCo)
};

/// How the model's parameters are split into fragments, on tensor boundaries.
enum class fragment_layout : uint8_t {
  strided,     ///< in order, each tensor to the fragment holding least so far: round-robin for tensors of a size (Streaming DiLoCo)
  contiguous,  ///< consecutive tensors, F runs of about equal size
};

/// One worker's local work between exchanges.
struct local_work {
  uint32_t steps = 1;                 ///< H_w: local steps (gradients) before each push
  inner_optimizer_spec inner;         ///< how each local step moves the worker's copy
  push_kind push = push_kind::gradient;  ///< what it pushes
  /// On a pull: θ_local <- alpha θ_local + (1 - alpha) θ_pulled (Streaming
  /// DiLoCo's merge), over the fragment exchanged; 0 replaces.
  double alpha = 0;
  uint32_t fragments = 1;             ///< F: the model in this many fragments (1: the whole model)
  uint32_t fragment = 0;              ///< the one this exchange carries, 0 .. F-1
  fragment_layout layout = fragment_layout::strided;  ///< how the fragments are cut
  /// τ: the most local steps the worker goes on with while its push waits for
  /// the reply; the pulled model is merged into where it has got to when it arrives.
  uint32_t overlap = 0;

  /// Whether the worker keeps a copy of its own (anything but the default).
  bool local() const { return inner.type != inner_kind::none || steps > 1 || push == push_kind::outer; }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, inner_optimizer_spec& x) {
  return f(caf::meta::type_name("inner_optimizer_spec"), x.type, exact(x.lr), exact(x.momentum),
           exact(x.weight_decay), exact(x.beta1), exact(x.beta2), exact(x.eps), x.schedule, exact(x.warmup));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, local_work& x) {
  return f(caf::meta::type_name("local_work"), x.steps, x.inner, x.push, exact(x.alpha), x.fragments,
           x.fragment,
           x.layout, x.overlap);
}

}  // namespace syncpoint
