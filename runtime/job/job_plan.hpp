// What a job's options become once, checked and resolved: the job plan. Every
// runner takes it (the one-process job, the cluster's head and nodes), and so
// do checkpointing and the configs of the PS's shards, the coordinator and
// the workers; none of them reads the options again.
//
//   job_config cfg;               // from the CLI, a file or a program
//   validate(cfg);                // the options alone (<syncpoint/train.hpp>)
//   auto data = load_job_data(cfg);
//   job_plan plan = make_plan(cfg, {data.train.size, model_size});
//   plan.shards();                // --ps-shards 0 resolved: one per host
//   plan.lr_at(samples);          // the rate after `samples` samples
#pragma once

#include "core/optimizer.hpp"
#include "runtime/job/devices.hpp"
#include <syncpoint/job_config.hpp>
#include <syncpoint/model.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace syncpoint {

/// What the plan is made for, beside the options.
struct plan_context {
  int64_t train_size = 0;   ///< examples in the training set: what an epoch counts
  uint64_t model_size = 0;  ///< the model's values, weights and buffers
  uint64_t buffers = 0;     ///< of which the last `buffers` are buffers (BatchNorm's statistics)
  int32_t hosts = 1;        ///< the hosts the shards are spread over: 1 in one process and with
                            ///< --ps-placement head, the workers' nodes with --ps-placement nodes
  model_input input;        ///< what the model is made for: the data set's example shape and classes
  device_offer offer;       ///< the devices workers may take (one process: this_machine())
  std::vector<std::string> placed;  ///< each worker's device as placement chose it (a cluster's GPU
                                    ///< slots); empty: --device resolved against `offer`
  uint64_t tensors = 0;             ///< the model's parameter tensors (0: unknown): what a protocol
                                    ///< that exchanges fragments may cut it into ("job.tensors")
};

struct job_plan {
  job_config cfg;           ///< the options, the implicit limits made explicit
  int64_t train_size = 0;
  uint64_t model_size = 0;
  uint64_t buffers = 0;
  uint64_t sample_budget = 0;       ///< samples the run takes (0: no budget, a time limit ends it)
  uint64_t eval_every_samples = 0;  ///< 0: evaluate at the end only
  double lr = 0;                    ///< --lr with --lr-scaling applied
  lr_schedule schedule;             ///< built over the run's length (or --lr-epochs)
  std::vector<uint64_t> bounds;     ///< shard k holds values [bounds[k], bounds[k + 1])
  std::vector<int32_t> shard_hosts; ///< per shard: the host (of plan_context::hosts) that runs it
  model_input input;                ///< the data set's example shape and classes (on the CPU: the PS's model)
  std::vector<std::string> devices; ///< per worker: where it computes ("cpu", "cuda:0", ...)
  std::string eval_device = "cpu";  ///< where the evaluator computes: worker 0's device
  protocol_options protocol;        ///< the protocol's options, with the job's context (job.model, ...)

  size_t shards() const { return bounds.size() - 1; }
  /// The learning rate of an update after `samples` samples.
  double lr_at(uint64_t samples) const { return schedule.at(samples); }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, model_input& x) {
  return f(caf::meta::type_name("model_input"), x.shape, x.classes, x.device, x.precision, x.options,
           x.loss);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_plan& x) {
  return f(caf::meta::type_name("job_plan"), x.cfg, x.train_size, x.model_size, x.buffers, x.sample_budget,
           x.eval_every_samples, exact(x.lr), x.schedule, x.bounds, x.shard_hosts, x.input, x.devices, x.eval_device, x.protocol);
}

/// What worker `id`'s model is made for: the plan's input on the worker's
/// device, in the job's precision.
model_input worker_input(const job_plan& plan, int id);

/// What the evaluator's model is made for: the plan's input on plan.eval_device.
model_input evaluator_input(const job_plan& plan);

/// `cfg` with its implicit limits made explicit (no limit: 1 epoch; a target
/// alone: stop at it, capped at target_only_epoch_cap epochs).
job_config with_limits(const job_config& cfg);

/// cfg.protocol_opts plus the job's context (job.model, job.dataset, job.workers):
/// what the protocol is made with.
protocol_options protocol_options_for(const job_config& cfg);

/// The plan of `cfg` (validated already) in `ctx`. The one rule for
/// --ps-shards 0: one shard per host of ctx.hosts; --device resolved against
/// ctx.offer (runtime/job/devices.hpp). Throws config_error naming what is
/// wrong (a schedule the run's length cannot carry, a device not offered).
job_plan make_plan(const job_config& cfg, const plan_context& ctx);

}  // namespace syncpoint
