#include "runtime/job/job_parts.hpp"

#include <syncpoint/compressor.hpp>

#include "actors/coordinator.hpp"
#include "actors/evaluator.hpp"
#include "actors/parameter_server.hpp"
#include "actors/row_store.hpp"
#include "core/row_blocks.hpp"
#include "runtime/records/checkpoint_file.hpp"
#include "runtime/records/summarize.hpp"
#include "actors/tracer.hpp"
#include <syncpoint/data_registry.hpp>
#include <syncpoint/model.hpp>
#include <syncpoint/worker_loop.hpp>

#include <algorithm>
#include <thread>
#include <cmath>

namespace syncpoint {

namespace {

// One gradient on two examples, one of them of the largest label: a model
// that cannot take the data's shape or classes is refused before anything
// starts. (A loop of the user's own takes its data its own way.)
void check_model_fits(const job_config& cfg, const dataset& train) {
  if (cfg.model == "timing-only" || cfg.loop != "classify" || train.size == 0)
    return;
  auto top = std::max_element(train.y.begin(), train.y.end()) - train.y.begin();
  std::vector<float> x(train.row(0), train.row(0) + train.dim);
  x.insert(x.end(), train.row(top), train.row(top) + train.dim);
  std::vector<int64_t> y{train.y[0], train.y[static_cast<size_t>(top)]};
  try {
    auto m = make_model(cfg.model, input_of(train));
    std::vector<float> g(m->size());
    m->load(m->initial_weights(cfg.seed).data());
    batch_view two{x.data(), y.data(), 2, train.dim, train.shape.data(), static_cast<int64_t>(train.shape.size())};
    auto tables = m->tables();
    if (!tables.empty()) {  // a sparse model: rows of zeros for the two examples' keys
      std::vector<row_block> rows;
      auto keys = m->keys(two);
      for (uint32_t t = 0; t < tables.size() && t < keys.size(); ++t) {
        make_distinct(keys[t]);
        rows.push_back({t, keys[t], std::vector<float>(keys[t].size() * tables[t].width, 0.0f)});
      }
      m->load_rows(std::move(rows));
    }
    m->gradient(two, g.data());
  } catch (const std::exception& e) {
    std::string why = e.what();
    why = why.substr(0, why.find('\n'));
    throw config_error("model '" + cfg.model + "' cannot train on data set '" + cfg.dataset + "' (examples of shape " +
                       shape_text(train.shape) + ", " + std::to_string(train.classes) + " classes): " + why);
  }
}

// A loop of the user's own says which models it can train.
void check_loop_takes_model(const job_config& cfg, const dataset& train) {
  auto spec = find_loop(cfg.loop);
  if (!spec.check)
    return;
  try {
    spec.check(*make_model(cfg.model, input_of(train)));
  } catch (const std::exception& e) {
    throw config_error("loop '" + cfg.loop + "' cannot train model '" + cfg.model + "': " + e.what());
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
  request.context = cfg.context;
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
  check_loop_takes_model(cfg, data.train);
  return data;
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

ps_config shard_config(const job_plan& plan, size_t k, std::vector<float> slice, std::shared_ptr<const saved_ps> resume,
                       tracer_actor tracer, time_point origin) {
  auto& cfg = plan.cfg;
  ps_config c{std::move(slice), plan.lr, cfg.momentum, cfg.weight_decay, cfg.workers, std::move(tracer), origin,
              cfg.ps_bandwidth, cfg.latency_ms * 1e-3,
              cfg.momentum_rule == "plain" ? momentum_rule::plain : momentum_rule::adjusted, std::move(resume),
              cfg.internals.wire_bytes};
  c.optimizer = {parse_optimizer(cfg.optimizer), cfg.beta1, cfg.beta2, cfg.eps};
  c.schedule = plan.schedule;
  c.shard = static_cast<uint32_t>(k);
  c.shards = static_cast<uint32_t>(plan.shards());
  c.offset = plan.bounds[k];
  c.replicas = static_cast<uint32_t>(cfg.ps_replicas);
  c.model_size = plan.model_size;
  c.buffers = plan.buffers;
  return c;
}

ps_parts prepare_ps(caf::actor_system& sys, const job_plan& plan, const core_options& opts) {
  auto& cfg = plan.cfg;
  ps_parts out;
  auto* resume = opts.resume;
  auto initial = make_model(cfg.model, plan.input)->initial_weights(cfg.seed);
  auto k = plan.shards();
  auto parts = resume ? resume_parts(plan.bounds, resume->ps) : shard_states{};  // before anything is spawned
  // About six events a push (compute, push, wait, pull, apply, a barrier's
  // share): the trace grows in place instead of by copies of itself.
  auto pushes = static_cast<double>(plan.sample_budget) / std::max(1, cfg.batch);
  auto expected = static_cast<size_t>(std::min(6 * pushes + 16.0 * cfg.workers, double{1 << 21}));
  out.tracer = spawn_tracer(sys, resume ? resume->trace : std::vector<trace_event>{}, expected);
  for (size_t i = 0; i < k; ++i) {
    auto begin = static_cast<std::ptrdiff_t>(plan.bounds[i]), end = static_cast<std::ptrdiff_t>(plan.bounds[i + 1]);
    auto slice = k == 1 ? std::move(initial) : std::vector<float>(initial.begin() + begin, initial.begin() + end);
    out.shards.push_back(
      shard_config(plan, i, std::move(slice), parts.empty() ? nullptr : parts[i], out.tracer, opts.origin));
    if (resume && !resume->rows_file.empty())  // a sparse model's rows: each shard reads the chunks for its keys
      out.shards.back().resume_rows = [file = resume->rows_file, at = resume->rows_at](
                                        const std::function<void(const saved_rows&)>& take) {
        read_row_chunks(file, at, take);
      };
  }
  return out;
}

job_core spawn_job_control(caf::actor_system& sys, const job_plan& plan, std::shared_ptr<const dataset> test,
                           const core_options& opts, tracer_actor tracer, ps_group ps) {
  auto& cfg = plan.cfg;
  job_core core;
  auto* resume = opts.resume;
  core.tracer = std::move(tracer);
  core.ps = std::move(ps);
  auto co = std::make_shared<coordinator_config>();
  co->protocol_name = cfg.protocol;
  co->proto = make_protocol(cfg.protocol, plan.protocol);
  co->workers = cfg.workers;
  co->batch = cfg.batch;
  co->momentum = cfg.momentum;
  co->schedule = plan.schedule;
  co->sample_budget = plan.sample_budget;
  co->max_time_s = cfg.max_time_s;
  co->target_accuracy = cfg.target_accuracy;
  co->stop_at_target = cfg.stop_at_target;
  co->eval_every_samples = plan.eval_every_samples;
  co->progress = opts.progress;
  co->report_progress = opts.report_progress;
  co->report_events = opts.report_events;
  co->on_progress = opts.on_progress;
  co->ps = core.ps;
  co->fail_copies = fail_copies(cfg);
  co->fail_shard_with = cfg.internals.fail_worker;
  co->tracer = core.tracer;
  co->driver = opts.driver;
  co->observers = opts.observers;
  co->origin = opts.origin;
  co->request_timeout = opts.request_timeout;
  co->placer = opts.placer;
  co->own_placer = opts.own_placer;
  co->check_copies = cfg.clock == clock_kind::virtual_time;  // (cheap in one process; the tests' oracle)
  if (resume)
    co->resume = std::make_shared<const saved_coordinator>(resume->coordinator);
  co->own_timers = cfg.clock == clock_kind::real;
  if (opts.on_checkpoint) {
    co->checkpoint_every_s = cfg.checkpoint_every_s;
    co->on_checkpoint = opts.on_checkpoint;
  }
  core.coordinator = spawn_coordinator(sys, co);
  evaluator_config ev;
  ev.model = cfg.model;
  ev.loop = cfg.loop;
  ev.input = evaluator_input(plan);
  ev.job = loop_context{-1, cfg.workers, cfg.seed, cfg.batch, test, ev.input, cfg.request_timeout_s};
  ev.test = std::move(test);
  ev.coordinator = core.coordinator;
  ev.detached = opts.detached_evaluator;
  core.evaluator = spawn_evaluator(sys, std::move(ev));
  return core;
}

namespace {

// --ps-rereplicate in one process: a copy made in a lost one's place is
// spawned here, from the state its shard's serving copy saved.
copy_placer_actor spawn_copy_placer(caf::actor_system& sys, std::shared_ptr<const job_plan> plan, tracer_actor tracer,
                                    time_point origin) {
  return sys.spawn([plan, tracer, origin](copy_placer_actor::pointer self) -> copy_placer_actor::behavior_type {
    return {
      [=](copy_atom, uint32_t k, uint32_t r, saved_ps& state) -> caf::result<ps_actor, std::string, std::string> {
        if (k >= plan->shards() || r > static_cast<uint32_t>(plan->cfg.ps_replicas))
          return make_error(sp_error::bad_input, "no copy " + std::to_string(r) + " of shard " + std::to_string(k));
        auto slice = state.w;
        auto c = shard_config(*plan, k, std::move(slice), std::make_shared<const saved_ps>(std::move(state)), tracer,
                              origin);
        c.copy = r;
        c.serving = false;
        return {spawn_parameter_server(self->system(), std::move(c)), std::string(), std::string()};
      },
      [](copy_atom, uint32_t, uint32_t, const ps_actor&, bool) {},
    };
  });
}

}  // namespace

// A sparse model's tables, checked before anything is spawned: specs that
// work, and unbounded tables whose declared keys fit --ps-memory.
void check_tables(const job_plan& plan, const std::vector<table_spec>& tables) {
  if (tables.empty())
    return;
  if (plan.cfg.ps_replicas > 0)  // a replica sees no pulls, so it would make no rows: not yet
    throw config_error("model '" + plan.cfg.model + "' has sparse tables, which replicated shards do not keep yet: "
                       "run it without --ps-replicas (docs/sparse.md, \"Status\")");
  for (auto& t : tables) {
    try {
      row_store check(t, plan.cfg.seed);
    } catch (const std::invalid_argument& e) {
      throw config_error("model '" + plan.cfg.model + "': " + e.what());
    }
  }
  if (plan.cfg.ps_memory <= 0)
    return;
  double per_shard = 0;  // unbounded tables at their declared keys, an even share a shard
  std::string which;
  for (auto& t : tables)
    if (t.capacity == row_capacity::unbounded && t.expected_keys > 0) {
      per_shard += static_cast<double>(t.expected_keys) * static_cast<double>(row_store::bytes_per_row(t)) /
                   static_cast<double>(plan.shards());
      which += (which.empty() ? "'" : ", '") + t.name + "'";
    }
  if (per_shard > plan.cfg.ps_memory)
    throw config_error("model '" + plan.cfg.model + "': table " + which + " without a capacity would hold " +
                       std::to_string(static_cast<uint64_t>(per_shard)) + " bytes of rows a shard at its declared " +
                       "keys, over --ps-memory " + std::to_string(static_cast<uint64_t>(plan.cfg.ps_memory)) +
                       ": give it a capacity (lru, lfu, ttl), more shards, or a larger --ps-memory");
}

void add_tables(std::vector<ps_config>& shards, const job_plan& plan, const dataset& test, model& m) {
  auto tables = m.tables();
  if (tables.empty())
    return;
  auto keys = test.size > 0 ? m.keys(test.view(0, test.size)) : std::vector<std::vector<uint64_t>>(tables.size());
  if (keys.size() != tables.size())
    throw config_error("model '" + plan.cfg.model + "' gave keys of " + std::to_string(keys.size()) + " tables, it has " +
                       std::to_string(tables.size()));
  auto k = static_cast<uint32_t>(shards.size());
  for (auto& c : shards)
    set_tables(c, plan, tables, std::vector<std::vector<uint64_t>>(tables.size()));
  for (size_t t = 0; t < keys.size(); ++t) {
    make_distinct(keys[t]);
    for (auto key : keys[t])
      shards[row_shard(key, k)].eval_keys[t].push_back(key);
  }
}

void set_tables(ps_config& shard, const job_plan& plan, std::vector<table_spec> tables,
                std::vector<std::vector<uint64_t>> eval_keys) {
  shard.tables = std::move(tables);
  shard.seed = plan.cfg.seed;
  shard.rows_async = plan.cfg.sparse_sync == "async";
  shard.memory_limit = plan.cfg.ps_memory;
  shard.eval_keys = std::move(eval_keys);
}

job_core spawn_job_core(caf::actor_system& sys, const job_plan& plan, std::shared_ptr<const dataset> test,
                        const core_options& given) {
  auto opts = given;
  auto m = make_model(plan.cfg.model, plan.input);
  check_tables(plan, m->tables());  // before anything is spawned
  auto parts = prepare_ps(sys, plan, opts);
  add_tables(parts.shards, plan, *test, *m);
  if (plan.cfg.ps_rereplicate && plan.cfg.ps_replicas > 0 && !opts.placer) {
    opts.placer = spawn_copy_placer(sys, std::make_shared<const job_plan>(plan), parts.tracer, opts.origin);
    opts.own_placer = true;
  }
  ps_group ps;
  ps.bounds = plan.bounds;
  auto replicas = static_cast<uint32_t>(plan.cfg.ps_replicas);
  for (auto& c : parts.shards) {
    if (replicas == 0) {
      ps.shards.push_back(spawn_parameter_server(sys, std::move(c)));
      continue;
    }
    // Copy 0 is the primary; each replica starts from the same configuration.
    auto& copies = ps.copies.emplace_back();
    for (uint32_t r = 0; r <= replicas; ++r) {
      auto copy = c;
      copy.copy = r;
      copies.push_back(spawn_parameter_server(sys, std::move(copy)));
    }
    ps.shards.push_back(copies.front());
  }
  return spawn_job_control(sys, plan, std::move(test), opts, std::move(parts.tracer), std::move(ps));
}

worker_config worker_for(const job_plan& plan, int id, double iter_cost_ms, std::shared_ptr<const dataset> train,
                         ps_group ps, tracer_actor tracer, time_point origin, caf::duration request_timeout,
                         const checkpoint_state* resume) {
  auto& cfg = plan.cfg;
  worker_config w;
  w.id = id;
  w.workers = cfg.workers;
  w.train = std::move(train);
  w.model = cfg.model;
  w.loop = cfg.loop;
  w.input = worker_input(plan, id);
  w.batch = cfg.batch;
  w.lr = plan.lr;
  w.clip_norm = cfg.clip_norm;
  w.sample_budget = plan.sample_budget;
  w.compress = make_compressor(cfg.compress);
  w.wire_bytes = cfg.internals.wire_bytes;
  w.seed = cfg.seed;
  w.virtual_clock = cfg.clock == clock_kind::virtual_time;
  w.iter_cost_s = iter_cost_ms * 1e-3;
  w.stragglers = straggler_plan::parse(cfg.straggler);
  w.ps = std::move(ps);
  w.tracer = std::move(tracer);
  w.origin = origin;
  w.request_timeout = request_timeout;
  w.loop_timeout_s = cfg.request_timeout_s;
  if (id == cfg.internals.fail_worker)
    w.fail_at_iter = cfg.internals.fail_at_iter;
  auto i = static_cast<size_t>(id);
  if (resume && i < resume->workers.size() && !resume->coordinator.gone.at(i))
    w.resume = std::make_shared<const saved_worker>(resume->workers[i]);
  return w;
}

size_t scheduler_threads(int workers) {
  auto cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<size_t>(std::max(1, std::min(workers, cores)));
}

run_result make_result(const job_config& cfg, double iter_cost_ms, run_outcome outcome) {
  run_result r;
  r.summary = summarize(cfg, iter_cost_ms, outcome.trace, outcome.losses);
  r.trace = std::move(outcome.trace);
  for (auto& l : outcome.losses)
    r.failures.push_back("worker " + std::to_string(l.worker) + " lost: " + l.reason);
  r.final_model = std::move(outcome.final_model);
  r.profile.coordinator_busy_s = outcome.coordinator_busy_s;
  r.profile.coordinator_pushes = outcome.coordinator_pushes;
  return r;
}

}  // namespace syncpoint
