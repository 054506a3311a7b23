#include "runtime/job_parts.hpp"

#include "actors/coordinator.hpp"
#include "actors/evaluator.hpp"
#include "actors/parameter_server.hpp"
#include "runtime/checkpoint_file.hpp"
#include "actors/tracer.hpp"
#include <syncpoint/data_registry.hpp>
#include <syncpoint/model.hpp>

#include <algorithm>
#include <cmath>

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

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out;
  for (auto d : shape)
    out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

// One gradient on two examples, one of them of the largest label: a model
// that cannot take the data's shape or classes is refused before anything starts.
void check_model_fits(const job_config& cfg, const dataset& train) {
  if (cfg.model == "timing-only" || train.size == 0)
    return;
  auto m = make_model(cfg.model);
  auto top = std::max_element(train.y.begin(), train.y.end()) - train.y.begin();
  std::vector<float> x(train.row(0), train.row(0) + train.dim);
  x.insert(x.end(), train.row(top), train.row(top) + train.dim);
  std::vector<int64_t> y{train.y[0], train.y[static_cast<size_t>(top)]};
  std::vector<float> g(m->size());
  try {
    m->load(m->initial_weights(cfg.seed).data());
    m->gradient({x.data(), y.data(), 2, train.dim, train.shape.data(), static_cast<int64_t>(train.shape.size())},
                g.data());
  } catch (const std::exception& e) {
    std::string why = e.what();
    why = why.substr(0, why.find('\n'));
    throw config_error("model '" + cfg.model + "' cannot train on data set '" + cfg.dataset + "' (examples of shape " +
                       shape_text(train.shape) + ", " + std::to_string(train.classes) + " classes): " + why);
  }
}

}  // namespace

train_test load_job_data(const job_config& cfg) {
  train_test data;
  data_request request;
  request.dir = cfg.data_dir;
  // The generated sets' sizes: the limits, else 6000 and 1000 examples.
  request.train_size = cfg.train_limit > 0 ? cfg.train_limit : 6000;
  request.test_size = cfg.test_limit > 0 ? cfg.test_limit : 1000;
  request.seed = cfg.seed;
  try {
    data = make_dataset(cfg.dataset, request);
  } catch (const data_error& e) {
    throw config_error(e.what());
  } catch (const std::invalid_argument& e) {
    throw config_error(e.what());
  }
  data.train.truncate(cfg.train_limit);
  data.test.truncate(cfg.test_limit);
  if (data.train.size < cfg.workers)
    throw config_error("the training set has " + std::to_string(data.train.size) + " examples for " +
                       std::to_string(cfg.workers) + " workers");
  check_model_fits(cfg, data.train);
  return data;
}

protocol_options protocol_options_for(const job_config& cfg) {
  auto o = cfg.protocol_opts;
  o.set("job.model", cfg.model).set("job.dataset", cfg.dataset).set("job.workers", cfg.workers);
  return o;
}

std::string data_key(const job_config& c) {
  return c.dataset + "|" + c.data_dir + "|" + std::to_string(c.train_limit) + "|" +
         std::to_string(c.test_limit) + "|" + std::to_string(c.seed);
}

namespace {

using shard_states = std::vector<std::shared_ptr<const saved_ps>>;

// Each shard's part of a checkpoint's PS (shards over `bounds`), all taken before
// anything starts: one these shards cannot take is refused (config_error).
shard_states resume_parts(const std::vector<uint64_t>& bounds, const saved_ps& whole) {
  shard_states parts;
  try {
    for (size_t i = 0; i + 1 < bounds.size(); ++i)
      parts.push_back(std::make_shared<const saved_ps>(shard_of(whole, bounds, i)));
  } catch (const std::invalid_argument& e) {
    throw config_error(e.what());
  }
  return parts;
}

}  // namespace

namespace {

// --lr-scaling linear (Goyal et al.): the rate grows with the total batch.
double lr_scale(const job_config& cfg) {
  return cfg.lr_scaling == "linear" ? static_cast<double>(cfg.workers) * cfg.batch / 256.0 : 1.0;
}

}  // namespace

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

ps_config shard_config(const job_config& cfg, int64_t train_size, const std::vector<uint64_t>& bounds, size_t k,
                       std::vector<float> slice, std::shared_ptr<const saved_ps> resume, tracer_actor tracer,
                       time_point origin) {
  ps_config c{std::move(slice), cfg.lr * lr_scale(cfg), cfg.momentum, cfg.weight_decay, cfg.workers, std::move(tracer), origin,
              cfg.ps_bandwidth, cfg.latency_ms * 1e-3,
              cfg.momentum_rule == "plain" ? momentum_rule::plain : momentum_rule::adjusted, std::move(resume),
              cfg.wire_bytes};
  c.optimizer = {parse_optimizer(cfg.optimizer), cfg.beta1, cfg.beta2, cfg.eps};
  c.schedule = schedule_of(cfg, train_size);
  c.shard = static_cast<uint32_t>(k);
  c.shards = static_cast<uint32_t>(bounds.size() - 1);
  c.offset = bounds[k];
  c.model_size = bounds.back();
  c.buffers = make_model(cfg.model)->buffers();
  return c;
}

ps_plan plan_job_core(caf::actor_system& sys, const job_config& cfg, int64_t train_size, const core_options& opts) {
  ps_plan plan;
  auto* resume = opts.resume;
  auto initial = make_model(cfg.model)->initial_weights(cfg.seed);
  auto k = static_cast<size_t>(std::max(1, cfg.ps_shards));
  plan.bounds = ps_group::even_bounds(initial.size(), k);
  auto parts = resume ? resume_parts(plan.bounds, resume->ps) : shard_states{};  // before anything is spawned
  // About six events a push (compute, push, wait, pull, apply, a barrier's
  // share): the trace grows in place instead of by copies of itself.
  auto pushes = cfg.epochs > 0 ? cfg.epochs * static_cast<double>(train_size) / std::max(1, cfg.batch) : 0.0;
  auto expected = static_cast<size_t>(std::min(6 * pushes + 16.0 * cfg.workers, double{1 << 21}));
  plan.tracer = spawn_tracer(sys, resume ? resume->trace : std::vector<trace_event>{}, expected);
  for (size_t i = 0; i < k; ++i) {
    auto begin = static_cast<std::ptrdiff_t>(plan.bounds[i]), end = static_cast<std::ptrdiff_t>(plan.bounds[i + 1]);
    auto slice = k == 1 ? std::move(initial) : std::vector<float>(initial.begin() + begin, initial.begin() + end);
    plan.shards.push_back(shard_config(cfg, train_size, plan.bounds, i, std::move(slice), parts.empty() ? nullptr : parts[i],
                                       plan.tracer, opts.origin));
  }
  return plan;
}

job_core spawn_job_control(caf::actor_system& sys, const job_config& cfg, int64_t train_size,
                           std::shared_ptr<const dataset> test, const core_options& opts, tracer_actor tracer,
                           ps_group ps) {
  job_core core;
  auto* resume = opts.resume;
  core.tracer = std::move(tracer);
  core.ps = std::move(ps);
  auto co = std::make_shared<coordinator_config>();
  co->protocol_name = cfg.protocol;
  co->proto = make_protocol(cfg.protocol, protocol_options_for(cfg));
  co->workers = cfg.workers;
  co->batch = cfg.batch;
  co->momentum = cfg.momentum;
  co->schedule = schedule_of(cfg, train_size);
  auto epoch = static_cast<double>(train_size);
  co->sample_budget =  // 0: no budget (a time cap ends the run)
    cfg.epochs > 0 ? std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(cfg.epochs * epoch))) : 0;
  co->max_time_s = cfg.max_time_s;
  co->target_accuracy = cfg.target_accuracy;
  co->stop_at_target = cfg.stop_at_target;
  co->eval_every_samples = static_cast<uint64_t>(std::llround(cfg.eval_every * epoch));
  co->progress = opts.progress;
  co->report_progress = opts.report_progress;
  co->report_events = opts.report_events;
  co->on_progress = opts.on_progress;
  co->ps = core.ps;
  co->tracer = core.tracer;
  co->driver = opts.driver;
  co->observers = opts.observers;
  co->origin = opts.origin;
  co->request_timeout = opts.request_timeout;
  if (resume)
    co->resume = std::make_shared<const saved_coordinator>(resume->coordinator);
  co->own_timers = cfg.clock == clock_kind::real;
  if (opts.on_checkpoint) {
    co->checkpoint_every_s = cfg.checkpoint_every_s;
    co->on_checkpoint = opts.on_checkpoint;
  }
  core.coordinator = spawn_coordinator(sys, co);
  core.evaluator =
    spawn_evaluator(sys, {std::move(test), cfg.model, 0, core.coordinator, opts.detached_evaluator});
  return core;
}

job_core spawn_job_core(caf::actor_system& sys, const job_config& cfg, int64_t train_size,
                        std::shared_ptr<const dataset> test, const core_options& opts) {
  auto plan = plan_job_core(sys, cfg, train_size, opts);
  ps_group ps;
  ps.bounds = plan.bounds;
  for (auto& c : plan.shards)
    ps.shards.push_back(spawn_parameter_server(sys, std::move(c)));
  return spawn_job_control(sys, cfg, train_size, std::move(test), opts, std::move(plan.tracer), std::move(ps));
}

worker_config worker_for(const job_config& cfg, int id, double iter_cost_ms,
                         std::shared_ptr<const dataset> train, ps_group ps, tracer_actor tracer,
                         time_point origin, caf::duration request_timeout, const checkpoint_state* resume) {
  worker_config w;
  w.id = id;
  w.workers = cfg.workers;
  w.train = std::move(train);
  w.model = cfg.model;
  w.batch = cfg.batch;
  w.lr = cfg.lr * lr_scale(cfg);
  w.clip_norm = cfg.clip_norm;
  w.seed = cfg.seed;
  w.virtual_clock = cfg.clock == clock_kind::virtual_time;
  w.iter_cost_s = iter_cost_ms * 1e-3;
  w.stragglers = straggler_plan::parse(cfg.straggler);
  w.ps = std::move(ps);
  w.tracer = std::move(tracer);
  w.origin = origin;
  w.request_timeout = request_timeout;
  if (id == cfg.fail_worker)
    w.fail_at_iter = cfg.fail_at_iter;
  auto i = static_cast<size_t>(id);
  if (resume && i < resume->workers.size() && !resume->coordinator.gone.at(i))
    w.resume = std::make_shared<const saved_worker>(resume->workers[i]);
  return w;
}

}  // namespace syncpoint
