// Phases 1 and 2 of a job's run (again after a restart): every node loads the
// data set; then the run's clock starts, the PS shards (each copy) spawn here
// or on their nodes, and once every copy runs, the coordinator, the evaluator
// and the workers; the run starts when every worker has answered (job_runner.cpp).
#include "runtime/cluster/jobs/job_state.hpp"

#include "runtime/job/job_parts.hpp"
#include "runtime/records/checkpoint_file.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <random>

namespace syncpoint::cluster::detail {
// A random key per worker, never 0 (0: no key).
std::vector<uint64_t> bulk_keys(size_t workers) {
  std::random_device rd;
  std::vector<uint64_t> keys(workers);
  for (auto& k : keys)
    do
      k = (uint64_t{rd()} << 32) ^ rd();
    while (k == 0);
  return keys;
}

// What node `node` needs to spawn worker `id` now: its time since the run's origin.
worker_spec spec_for(job_ptr self, size_t id) {
  auto& st = self->state;
  worker_spec spec{st.setup.plan, static_cast<int32_t>(id), st.setup.plan.cfg.iter_cost_ms, st.core.ps, st.core.tracer,
                   clock_of(self->clock().now(), st.origin)};
  spec.bulk_key = id < st.bulk_keys.size() ? st.bulk_keys[id] : 0;
  return spec;
}

// Has `node` load the job's data; `ready` once it holds the head's training
// set, else `failed` with why (another data set, or no answer).
void prepare_node(job_ptr self, const node_actor& node, const std::string& token, const std::string& name,
                  std::function<void()> ready, std::function<void(const std::string&)> failed) {
  auto& st = self->state;
  self->request(node, st.setup.spawn_timeout, prepare_atom::value, credential{token}, st.setup.plan.cfg)
    .then(
      [=](int64_t examples) {
        auto& st = self->state;
        if (st.ended())
          return;
        if (examples != st.setup.plan.train_size)
          failed("node " + name + " has " + std::to_string(examples) + " training examples where the head has " +
                 std::to_string(st.setup.plan.train_size) + " (a different data set in its --data folder?)");
        else
          ready();
      },
      [=](caf::error& err) { failed("node " + name + " could not prepare the job: " + self->system().render(err)); });
}

// The options of this job's PS side.
core_options core_options_for(job_ptr self) {
  auto& st = self->state;
  auto& cfg = st.setup.plan.cfg;
  core_options opts;
  opts.resume = st.setup.resume ? &st.setup.resume->point.state : nullptr;
  if (!cfg.checkpoint_dir.empty())  // periodic, or asked for (checkpoint_request)
    opts.on_checkpoint = checkpoint_writer(st.setup.plan, run_settings(st.setup.plan, cfg.iter_cost_ms));
  opts.driver = job_actor{self};
  opts.origin = st.origin;
  opts.request_timeout = caf::duration{seconds(cfg.request_timeout_s)};
  opts.report_progress = true;
  opts.report_events = static_cast<bool>(st.setup.follower);
  opts.detached_evaluator = true;
  return opts;
}

// Once the PS shards run: the coordinator and evaluator here, and the workers
// on their nodes; the run starts when every worker has answered.
void spawn_rest(job_ptr self, tracer_actor tracer, ps_group ps) {
  auto& st = self->state;
  auto& cfg = st.setup.plan.cfg;
  auto opts = core_options_for(self);
  if (cfg.ps_rereplicate)  // a lost copy is made again on a node (job_replace.cpp)
    opts.placer = job_actor{self};
  const checkpoint_state* from = opts.resume;
  st.core = spawn_job_control(self->system(), st.setup.plan, st.setup.test, opts, std::move(tracer), std::move(ps));
  self->monitor(st.core.coordinator);
  for (auto& shard : st.core.ps.all_members())
    self->monitor(shard);
  st.workers.resize(static_cast<size_t>(cfg.workers));
  auto needed = static_cast<size_t>(std::count(st.vacant.begin(), st.vacant.end(), false));
  if (needed == 0) {  // restarted without a node that hosted every worker: the coordinator says so
    start(self);
    return;
  }
  for (int i = 0; i < cfg.workers; ++i) {
    auto idx = static_cast<size_t>(i);
    if (st.vacant[idx])
      continue;
    auto spec = spec_for(self, idx);
    if (from && !from->coordinator.gone.at(idx)) {
      spec.resumed = true;
      spec.resume = from->workers.at(idx);
    }
    self->request(st.setup.nodes[idx], st.setup.spawn_timeout, spawn_atom::value,
                  credential{st.setup.node_tokens[idx]}, std::move(spec))
      .then(
        [=](worker_actor& w) {
          auto& st = self->state;
          st.workers[idx] = std::move(w);
          if (st.ended()) {  // aborted meanwhile
            self->send_exit(st.workers[idx], caf::exit_reason::user_shutdown);
            return;
          }
          if (++st.spawned == needed)
            start(self);
        },
        [=](caf::error& err) {
          abort_job(self, "node " + self->state.setup.node_names[idx] + " could not start worker " +
                            std::to_string(idx) + ": " + self->system().render(err));
        });
  }
}

// Whether shard k runs here (--ps-placement head, or placed here again).
bool on_head(const job_state& st, size_t k) {
  return st.setup.shard_nodes.empty() || !st.setup.shard_nodes[k];
}

// Whether every shard (every copy of it) runs: then the rest of the job starts.
bool every_copy_up(const job_state& st) {
  auto up = [](auto& s) { return bool(s); };
  if (!std::all_of(st.core.ps.shards.begin(), st.core.ps.shards.end(), up))
    return false;
  for (auto& copies : st.core.ps.copies)
    if (!std::all_of(copies.begin(), copies.end(), up))
      return false;
  return true;
}

// A resumed sparse job's shards on nodes take the checkpoint's rows from here
// (a shard in this process reads the file itself): each chunk, read at `at`,
// goes to every one of them, each keeping its keys, and the next is read once
// all took it. So no second copy of a table is held, here or there; the
// workers start after the last.
void stream_rows(job_ptr self, std::shared_ptr<ps_parts> parts, uint64_t at) {
  auto& st = self->state;
  std::vector<size_t> remote;
  for (size_t k = 0; k < parts->shards.size(); ++k)
    if (!on_head(st, k))
      remote.push_back(k);
  auto& state = st.setup.resume->point.state;
  std::optional<std::pair<saved_rows, uint64_t>> chunk;
  try {
    if (!remote.empty())
      chunk = read_row_chunk(state.rows_file, at);
  } catch (const std::exception& e) {
    abort_job(self, e.what());
    return;
  }
  if (!chunk) {
    spawn_rest(self, parts->tracer, st.core.ps);
    return;
  }
  auto pending = std::make_shared<size_t>(remote.size());
  auto next = chunk->second;
  for (auto k : remote)
    self->request(st.core.ps.shards[k], st.setup.spawn_timeout, resume_atom::value, chunk->first)
      .then(
        [=](uint64_t) {
          if (--*pending == 0 && !self->state.ended())
            stream_rows(self, parts, next);
        },
        [=](caf::error& err) {
          abort_job(self, "shard " + std::to_string(k) + " could not take the checkpoint's rows: " +
                            self->system().render(err));
        });
}

// Every copy of every shard runs: the workers next (after a resumed sparse
// job's rows, stream_rows).
void shards_up(job_ptr self, std::shared_ptr<ps_parts> parts) {
  auto& st = self->state;
  if (st.setup.resume && !st.setup.resume->point.state.rows_file.empty())
    stream_rows(self, std::move(parts), st.setup.resume->point.state.rows_at);
  else
    spawn_rest(self, parts->tracer, st.core.ps);
}

// A shard's primary runs (here or on its node).
void primary_up(job_state& st, size_t k, ps_actor shard) {
  st.core.ps.shards[k] = shard;
  if (!st.core.ps.copies.empty())
    st.core.ps.copies[k][0] = std::move(shard);
}

// Copy r of shard k on its node (r = 0: the primary, with --ps-placement
// nodes; r > 0: a replica, --ps-replicas); spawn_rest once every copy is up.
// A replica copies the shard's configuration; the primary, spawned last, takes it.
void spawn_remote_copy(job_ptr self, std::shared_ptr<ps_parts> parts, size_t k, size_t r) {
  auto& st = self->state;
  auto& c = parts->shards[k];
  shard_spec spec{st.setup.plan, static_cast<uint32_t>(k), r == 0 ? std::move(c.initial) : c.initial,
                  c.resume != nullptr, c.resume ? *c.resume : saved_ps{}, parts->tracer,
                  clock_of(self->clock().now(), st.origin), st.bulk_keys};
  spec.copy = static_cast<uint32_t>(r);
  spec.tables = c.tables;
  spec.eval_keys = c.eval_keys;
  auto& node = r == 0 ? st.setup.shard_nodes[k] : st.setup.replica_nodes[k][r - 1];
  auto& token = r == 0 ? st.setup.shard_node_tokens[k] : st.setup.replica_node_tokens[k][r - 1];
  auto name = r == 0 ? st.setup.shard_node_names[k] : st.setup.replica_node_names[k][r - 1];
  auto what = (r == 0 ? "shard " : "replica " + std::to_string(r) + " of shard ") + std::to_string(k);
  self->request(node, st.setup.spawn_timeout, spawn_atom::value, credential{token}, std::move(spec))
    .then(
      [=](ps_actor& copy) {
        auto& st = self->state;
        if (r == 0)
          primary_up(st, k, copy);
        else
          st.core.ps.copies[k][r] = copy;
        if (st.ended()) {
          self->send_exit(copy, caf::exit_reason::user_shutdown);
          return;
        }
        if (every_copy_up(st))
          shards_up(self, parts);
      },
      [=](caf::error& err) {
        abort_job(self, "node " + name + " could not start " + what + " of the parameter server: " +
                          self->system().render(err));
      });
}

// Phase 2, once every node holds the data: the run's clock starts, and the
// PS shards are spawned, here or on their nodes.
void launch(job_ptr self) {
  auto& st = self->state;
  st.origin = self->clock().now();
  if (st.setup.resume)  // the run's clock goes on from the checkpoint's time
    st.origin -= std::chrono::nanoseconds(st.setup.resume->point.state.time_ns);
  std::shared_ptr<ps_parts> parts;
  try {
    parts = std::make_shared<ps_parts>(prepare_ps(self->system(), st.setup.plan, core_options_for(self)));
    add_tables(parts->shards, st.setup.plan, *st.setup.test, *make_model(st.setup.plan.cfg.model, st.setup.plan.input));
  } catch (const std::exception& e) {  // a checkpoint these shards cannot take
    abort_job(self, e.what());
    return;
  }
  st.core.tracer = parts->tracer;
  st.core.ps.bounds = st.setup.plan.bounds;
  st.core.ps.shards.assign(parts->shards.size(), ps_actor{});
  st.status.shards.clear();
  st.copy_hosts.clear();
  // The bulk channel: new keys for every run, each shard's endpoint (a sparse
  // model's keys and rows go in its frames too).
  st.bulk_keys = st.setup.plane ? bulk_keys(static_cast<size_t>(st.setup.plan.cfg.workers)) : std::vector<uint64_t>{};
  st.core.ps.bulk.assign(parts->shards.size(), "");
  st.core.ps.copy_bulk.clear();
  auto replicas = static_cast<size_t>(st.setup.plan.cfg.ps_replicas);
  st.core.ps.copies.assign(replicas > 0 ? parts->shards.size() : 0, std::vector<ps_actor>(replicas + 1));
  bool remote = replicas > 0;  // (replicas run on nodes)
  for (size_t k = 0; k < parts->shards.size(); ++k) {
    bool here = on_head(st, k);
    st.status.shards.push_back(here ? "head" : st.setup.shard_node_names[k]);
    if (st.setup.plane) {
      auto at = st.setup.node_bulk.find(st.status.shards.back());
      st.core.ps.bulk[k] = here ? ":" + std::to_string(st.setup.plane->port())
                                : at != st.setup.node_bulk.end() ? at->second : "";
    }
    st.copy_hosts.push_back({st.status.shards.back()});
    if (replicas > 0)
      st.core.ps.copy_bulk.push_back({st.core.ps.bulk[k]});
    for (size_t r = 1; r <= replicas; ++r) {  // "a+b": the primary's host, then each replica's
      st.copy_hosts.back().push_back(st.setup.replica_node_names[k][r - 1]);
      st.status.shards.back() += "+" + st.copy_hosts.back().back();
      auto at = st.setup.plane ? st.setup.node_bulk.find(st.copy_hosts.back().back()) : st.setup.node_bulk.end();
      st.core.ps.copy_bulk.back().push_back(at != st.setup.node_bulk.end() ? at->second : "");  // (no plane: none)
    }
    for (size_t r = 1; r <= replicas; ++r)  // before the primary takes the shard's configuration
      spawn_remote_copy(self, parts, k, r);
    if (here) {
      parts->shards[k].bulk_keys = st.bulk_keys;
      primary_up(st, k, spawn_parameter_server(self->system(), std::move(parts->shards[k])));
      if (st.setup.plane)
        st.setup.plane->serve(st.core.ps.shards[k], st.setup.plan.bounds[k + 1] - st.setup.plan.bounds[k], st.bulk_keys);
    }
    remote = remote || !here;
  }
  if (!remote) {
    spawn_rest(self, parts->tracer, st.core.ps);  // (a shard here reads a checkpoint's rows itself)
    return;
  }
  for (size_t k = 0; k < parts->shards.size(); ++k)
    if (!on_head(st, k))
      spawn_remote_copy(self, parts, k, 0);
}

// Phase 1: every node loads the data set (so loading is not charged to the
// run's time) and must hold the same training set as the head.
void prepare(job_ptr self) {
  auto& st = self->state;
  std::map<std::string, size_t> distinct;  // node name -> a worker it hosts
  for (size_t i = 0; i < st.setup.nodes.size(); ++i)
    if (!st.vacant[i])
      distinct.emplace(st.setup.node_names[i], i);
  auto pending = std::make_shared<size_t>(distinct.size());
  for (auto& kv : distinct) {
    auto name = kv.first;
    auto& node = st.setup.nodes[kv.second];
    self->monitor(node);  // a node lost while the job starts fails it at once
    prepare_node(
      self, node, st.setup.node_tokens[kv.second], name,
      [=] {
        if (--*pending == 0)
          launch(self);
      },
      [=](const std::string& why) { abort_job(self, why); });
  }
}

}  // namespace syncpoint::cluster::detail
