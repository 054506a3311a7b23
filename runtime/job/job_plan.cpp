#include "runtime/job/job_plan.hpp"

#include "core/ps_group.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace syncpoint {

job_config with_limits(const job_config& in) {
  job_config cfg = in;
  if (cfg.epochs == 0 && cfg.max_time_s == 0) {
    if (cfg.target_accuracy > 0) {
      cfg.stop_at_target = true;
      cfg.epochs = target_only_epoch_cap;  // a target never reached must still end the run
    } else {
      cfg.epochs = 1;
    }
  }
  return cfg;
}

protocol_options protocol_options_for(const job_config& cfg) {
  auto o = cfg.protocol_opts;
  o.set("job.model", cfg.model).set("job.dataset", cfg.dataset).set("job.workers", cfg.workers);
  return o;
}

namespace {

// --lr-scaling linear (Goyal et al.): the rate grows with the total batch.
double lr_scale(const job_config& cfg) {
  return cfg.lr_scaling == "linear" ? static_cast<double>(cfg.workers) * cfg.batch / 256.0 : 1.0;
}

lr_schedule schedule_of(const job_config& cfg, int64_t train_size) {
  auto scale = lr_scale(cfg);
  auto epochs = cfg.lr_epochs > 0 ? cfg.lr_epochs : cfg.epochs;
  auto horizon = static_cast<uint64_t>(std::llround(epochs * static_cast<double>(train_size)));
  try {
    // Goyal et al.: with the rate scaled up, a warmup starts from the unscaled one.
    return make_lr_schedule(cfg.lr * scale, cfg.lr_schedule, cfg.lr_milestones, cfg.lr_gamma, cfg.warmup, horizon,
                            static_cast<uint64_t>(train_size), scale > 1 ? 1 / scale : 0.0, cfg.lr_min);
  } catch (const std::invalid_argument& e) {
    throw config_error(e.what());
  }
}

}  // namespace

job_plan make_plan(const job_config& options, const plan_context& ctx) {
  job_plan p;
  p.cfg = with_limits(options);
  auto& cfg = p.cfg;
  p.train_size = ctx.train_size;
  p.model_size = ctx.model_size;
  p.buffers = ctx.buffers;
  auto epoch = static_cast<double>(ctx.train_size);
  p.sample_budget =
    cfg.epochs > 0 ? std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(cfg.epochs * epoch))) : 0;
  p.eval_every_samples = static_cast<uint64_t>(std::llround(cfg.eval_every * epoch));
  p.lr = cfg.lr * lr_scale(cfg);
  p.schedule = schedule_of(cfg, ctx.train_size);
  auto shards = std::clamp(cfg.ps_shards > 0 ? cfg.ps_shards : ctx.hosts, 1, 64);
  p.bounds = ps_group::even_bounds(ctx.model_size, static_cast<size_t>(shards));
  for (int32_t k = 0; k < shards; ++k)
    p.shard_hosts.push_back(k % std::max(1, ctx.hosts));
  p.input = ctx.input;
  p.input.loss = cfg.loss;
  if (!ctx.placed.empty()) {
    check_device_options(cfg);
    p.devices = ctx.placed;
  } else {
    p.devices = resolve_devices(cfg, ctx.offer, cfg.workers);
  }
  p.eval_device = p.devices.empty() ? "cpu" : p.devices.front();
  p.protocol = protocol_options_for(cfg);
  if (ctx.tensors > 0) {  // a protocol checks what it needs of the model (fragments: its tensors)
    p.protocol.set("job.tensors", static_cast<long long>(ctx.tensors));
    try {
      make_protocol(cfg.protocol, p.protocol);
    } catch (const std::invalid_argument& e) {
      throw config_error(e.what());
    }
  }
  return p;
}

model_input evaluator_input(const job_plan& plan) {
  auto in = plan.input;
  in.device = plan.eval_device;
  if (in.device != "cpu")
    in.precision = plan.cfg.precision;
  return in;
}

model_input worker_input(const job_plan& plan, int id) {
  auto in = plan.input;
  auto i = static_cast<size_t>(id);
  if (i < plan.devices.size())
    in.device = plan.devices[i];
  if (in.device != "cpu")
    in.precision = plan.cfg.precision;
  return in;
}

}  // namespace syncpoint
