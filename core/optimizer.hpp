// The optimizer the parameter server runs and the learning rate it follows
// (docs/optimizers.md). Plain data that travels with a job to every PS shard.
//
//   optimizer_config opt;  opt.kind = optimizer_kind::adamw;  opt.beta2 = 0.99;
//   lr_schedule s = make_lr_schedule(0.1, "cosine", {}, 0.1, "0.05", 5 * 60000, 60000);
//   double lr = s.at(12800);   // the rate of the update that brings the run to 12,800 samples
#pragma once

#include <syncpoint/float_block.hpp>
#include <syncpoint/job_config.hpp>

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace syncpoint {

enum class optimizer_kind : uint8_t { sgd, nesterov, adam, adamw };

/// "sgd", "nesterov", "adam", "adamw"; throws std::invalid_argument naming the choices.
optimizer_kind parse_optimizer(const std::string& name);
std::string to_string(optimizer_kind k);

/// What an optimizer needs beyond the rate, momentum and weight decay (which
/// every one has; sgd and nesterov use the momentum, adam and adamw the betas).
struct optimizer_config {
  optimizer_kind kind = optimizer_kind::sgd;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  bool adaptive() const { return kind == optimizer_kind::adam || kind == optimizer_kind::adamw; }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, optimizer_config& x) {
  return f(caf::meta::type_name("optimizer_config"), x.kind, exact(x.beta1), exact(x.beta2), exact(x.eps));
}

enum class lr_shape : uint8_t { constant, step, cosine };

/// The learning rate as a function of the samples the model has taken in:
/// every protocol meets the same rate at the same progress.
///   warmup:  from start_factor * base rising linearly to base over `warmup` samples;
///   step:    times gamma at each milestone (samples);
///   cosine:  from base down to min_lr over [warmup, horizon], then min_lr.
struct lr_schedule {
  double base = 0.05;
  lr_shape shape = lr_shape::constant;
  std::vector<uint64_t> milestones;  // step: samples, ascending
  double gamma = 0.1;
  uint64_t warmup = 0;               // samples
  double start_factor = 0;           // the warmup's first rate, as a share of base
  uint64_t horizon = 0;              // cosine: samples at which it reaches min_lr
  double min_lr = 0;

  /// The rate of an update after which the model has taken `samples` samples.
  double at(uint64_t samples) const;
  /// Whether the rate ever changes.
  bool varies() const { return shape != lr_shape::constant || warmup > 0; }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lr_schedule& x) {
  return f(caf::meta::type_name("lr_schedule"), exact(x.base), x.shape, x.milestones, exact(x.gamma), x.warmup,
           exact(x.start_factor), x.horizon, exact(x.min_lr));
}

/// A run's schedule from its options (throws std::invalid_argument naming
/// the option that is wrong):
///   shape: "constant", "step" or "cosine";
///   milestones: epochs, ascending (step);
///   warmup: "" (none), a share of the run below 1 ("0.05"), or a number of
///           samples ("3000");
///   horizon_samples: the run's length (cosine and a warmup share need it);
///   start_factor: where a warmup starts, as a share of `lr`.
lr_schedule make_lr_schedule(double lr, const std::string& shape, const std::vector<double>& milestones,
                             double gamma, const std::string& warmup, uint64_t horizon_samples,
                             uint64_t epoch_samples, double start_factor = 0, double min_lr = 0);

/// "constant", "step", "cosine"
std::string to_string(lr_shape s);

/// The schedule in words, every number exact: "cosine 0.1 to 0 at 300000
/// samples, warmup 15000 from 0": what a run's settings record.
std::string describe(const lr_schedule& s);

/// The schedule as a job's options gave it, in epochs: "step x0.1 at 30,60
/// epochs, warmup 0.05": what a run's provenance shows.
std::string describe_options(const job_config& job);

}  // namespace syncpoint
