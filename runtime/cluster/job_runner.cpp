#include "runtime/cluster/job_runner.hpp"

#include "runtime/checkpoint_file.hpp"
#include "runtime/job_parts.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>

namespace syncpoint::cluster {

namespace {

struct job_state {
  job_setup setup;
  time_point origin;
  job_core core;
  std::vector<worker_actor> workers;  // by worker id, filled as nodes answer
  std::vector<bool> vacant;           // elastic: ids with no worker running or starting
  std::vector<std::vector<std::string>> hosts;  // by worker id: the nodes it ran on, in order
  size_t spawned = 0;
  bool started = false;
  bool ended = false;
  bool client_gone = false;
  std::string stop_reason;
  job_status status;
  // A shard's node died and the job goes on from its newest checkpoint: the
  // old actors whose end is awaited before it starts again, and the lost node.
  bool restarting = false;
  std::vector<caf::actor_addr> awaited;
  caf::actor_addr lost_node;
  int restarts = 0;
  static inline const char* name = "job";
};

using job_ptr = job_actor::stateful_pointer<job_state>;

// Progress and the outcome come from this job's coordinator only.
bool from_coordinator(job_ptr self) {
  return self->current_sender() == caf::actor_cast<caf::strong_actor_ptr>(self->state.core.coordinator);
}

void tell_head(job_ptr self) {
  auto& st = self->state;
  self->send(st.setup.head, job_atom::value, st.setup.head_token, st.setup.id, st.status);
}

void say(job_ptr self, const std::string& line) {
  auto& st = self->state;
  if (!st.client_gone && st.setup.cfg.progress)
    self->send(st.setup.client, progress_atom::value, line);
}

// Ends a job that never ran to its outcome: stops everything it spawned.
void abort_job(job_ptr self, const std::string& why) {
  auto& st = self->state;
  if (st.ended)
    return;
  st.ended = true;
  for (auto& w : st.workers)
    if (w)
      self->send_exit(w, caf::exit_reason::user_shutdown);
  for (auto& shard : st.core.ps.shards)  // spawned (phase 2), here or on nodes
    if (shard)
      self->send_exit(shard, caf::exit_reason::user_shutdown);
  if (st.core.tracer)
    self->send_exit(st.core.tracer, caf::exit_reason::user_shutdown);
  if (st.core.coordinator) {
    self->send_exit(st.core.coordinator, caf::exit_reason::user_shutdown);
    self->send_exit(st.core.evaluator, caf::exit_reason::user_shutdown);
  }
  st.status.state = "failed";
  tell_head(self);
  if (!st.client_gone)
    self->send(st.setup.client, finished_atom::value, job_result{"failed", why, 0, {}});
  self->quit();
}

// Asks the coordinator to end the run early; its outcome still comes.
void stop_job(job_ptr self, const std::string& why) {
  auto& st = self->state;
  if (!st.started) {
    abort_job(self, why);
    return;
  }
  if (st.stop_reason.empty()) {
    st.stop_reason = why;
    self->send(st.core.coordinator, stop_atom::value, why);
  }
}

// "; PS shards on a, b" when the shards run on nodes.
std::string shard_hosts(const job_state& st) {
  if (st.setup.shard_nodes.empty())
    return "";
  std::string out = "; PS shards on ";
  for (size_t k = 0; k < st.status.shards.size(); ++k)
    out += (k ? ", " : "") + st.status.shards[k];
  return out;
}

void start(job_ptr self) {
  auto& st = self->state;
  st.started = true;
  self->send(st.core.coordinator, start_atom::value, st.workers, st.core.evaluator);
  std::map<std::string, int> per_node;
  for (size_t i = 0; i < st.setup.node_names.size(); ++i)
    if (!st.vacant[i])
      ++per_node[st.setup.node_names[i]];
  std::string where;
  for (auto& kv : per_node)
    where += (where.empty() ? "" : ", ") + kv.first + " (" + std::to_string(kv.second) + ")";
  auto running = std::count(st.vacant.begin(), st.vacant.end(), false);
  say(self, "[job " + std::to_string(st.setup.id) + "] " + std::to_string(running) +
              (static_cast<size_t>(running) < st.workers.size()
                 ? " of " + std::to_string(st.workers.size()) + " workers started (" +
                     (st.setup.cfg.elastic ? "elastic: the rest as slots free up" : "the rest were lost with their node") +
                     ")"
                 : std::string(" workers started")) +
              " on " + where + shard_hosts(st));
  st.status.state = "running";
  tell_head(self);
}

void finish(job_ptr self, run_outcome& outcome) {
  auto& st = self->state;
  st.ended = true;
  std::vector<size_t> nth(st.hosts.size(), 0);  // a worker's k-th loss was on its k-th node
  for (auto& l : outcome.losses)
    if (l.worker >= 0 && static_cast<size_t>(l.worker) < st.hosts.size()) {
      auto& h = st.hosts[static_cast<size_t>(l.worker)];
      auto k = nth[static_cast<size_t>(l.worker)]++;
      if (!h.empty())
        l.reason += " (node " + h[std::min(k, h.size() - 1)] + ")";
    }
  std::string state = st.stop_reason.empty() ? "done" : "stopped";
  st.status.state = state;
  tell_head(self);
  job_result result{state, st.stop_reason, st.setup.cfg.iter_cost_ms, std::move(outcome)};
  if (auto& r = st.setup.resume) {
    result.resumed_from = r->file;
    result.resumed_at_s = to_seconds(r->point.state.time_ns);
  }
  if (!st.client_gone)
    self->send(st.setup.client, finished_atom::value, std::move(result));
  self->quit();
}

// What node `node` needs to spawn worker `id` now: its time since the run's origin.
worker_spec spec_for(job_ptr self, size_t id) {
  auto& st = self->state;
  auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(self->clock().now() - st.origin);
  return {st.setup.cfg, static_cast<int32_t>(id), st.setup.cfg.iter_cost_ms, st.core.ps, st.core.tracer,
          elapsed.count()};
}

// Has `node` load the job's data; `ready` once it holds the head's training
// set, else `failed` with why (another data set, or no answer).
void prepare_node(job_ptr self, const node_actor& node, const std::string& token, const std::string& name,
                  std::function<void()> ready, std::function<void(const std::string&)> failed) {
  auto& st = self->state;
  self->request(node, st.setup.spawn_timeout, prepare_atom::value, token, st.setup.cfg)
    .then(
      [=](int64_t examples) {
        auto& st = self->state;
        if (st.ended)
          return;
        if (examples != st.setup.train_size)
          failed("node " + name + " has " + std::to_string(examples) + " training examples where the head has " +
                 std::to_string(st.setup.train_size) + " (a different data set in its --data folder?)");
        else
          ready();
      },
      [=](caf::error& err) { failed("node " + name + " could not prepare the job: " + self->system().render(err)); });
}

// The options of this job's PS side.
core_options core_options_for(job_ptr self) {
  auto& st = self->state;
  auto& cfg = st.setup.cfg;
  core_options opts;
  opts.resume = st.setup.resume ? &st.setup.resume->point.state : nullptr;
  if (cfg.checkpoint_every_s > 0)
    opts.on_checkpoint = checkpoint_writer(cfg, run_settings(cfg, cfg.iter_cost_ms));
  opts.driver = job_actor{self};
  opts.origin = st.origin;
  opts.request_timeout = caf::duration{seconds(cfg.request_timeout_s)};
  opts.report_progress = true;
  opts.detached_evaluator = true;
  return opts;
}

// Once the PS shards run: the coordinator and evaluator here, and the workers
// on their nodes; the run starts when every worker has answered.
void spawn_rest(job_ptr self, tracer_actor tracer, ps_group ps) {
  auto& st = self->state;
  auto& cfg = st.setup.cfg;
  auto opts = core_options_for(self);
  const checkpoint_state* from = opts.resume;
  st.core = spawn_job_control(self->system(), cfg, st.setup.train_size, st.setup.test, opts, std::move(tracer),
                              std::move(ps));
  self->monitor(st.core.coordinator);
  for (auto& shard : st.core.ps.shards)
    self->monitor(shard);
  st.workers.resize(static_cast<size_t>(cfg.workers));
  auto needed = static_cast<size_t>(std::count(st.vacant.begin(), st.vacant.end(), false));
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
                  st.setup.node_tokens[idx], std::move(spec))
      .then(
        [=](worker_actor& w) {
          auto& st = self->state;
          st.workers[idx] = std::move(w);
          if (st.ended) {  // aborted meanwhile
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

// Shard k of `plan` on its node (--ps-placement nodes); spawn_rest once all are up.
void spawn_remote_shard(job_ptr self, std::shared_ptr<ps_plan> plan, size_t k) {
  auto& st = self->state;
  auto& c = plan->shards[k];
  auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(self->clock().now() - st.origin);
  shard_spec spec{st.setup.cfg, static_cast<uint32_t>(k), plan->bounds, std::move(c.initial), c.resume != nullptr,
                  c.resume ? *c.resume : saved_ps{}, plan->tracer, elapsed.count()};
  auto name = st.setup.shard_node_names[k];
  self->request(st.setup.shard_nodes[k], st.setup.spawn_timeout, spawn_atom::value, st.setup.shard_node_tokens[k],
                std::move(spec))
    .then(
      [=](ps_actor& shard) {
        auto& st = self->state;
        st.core.ps.shards[k] = shard;
        if (st.ended) {
          self->send_exit(shard, caf::exit_reason::user_shutdown);
          return;
        }
        if (std::all_of(st.core.ps.shards.begin(), st.core.ps.shards.end(), [](auto& s) { return bool(s); }))
          spawn_rest(self, plan->tracer, st.core.ps);
      },
      [=](caf::error& err) {
        abort_job(self, "node " + name + " could not start shard " + std::to_string(k) +
                          " of the parameter server: " + self->system().render(err));
      });
}

// Phase 2, once every node holds the data: the run's clock starts, and the
// PS shards are spawned, here or on their nodes.
void launch(job_ptr self) {
  auto& st = self->state;
  st.origin = self->clock().now();
  if (st.setup.resume)  // the run's clock goes on from the checkpoint's time
    st.origin -= std::chrono::nanoseconds(st.setup.resume->point.state.time_ns);
  std::shared_ptr<ps_plan> plan;
  try {
    plan = std::make_shared<ps_plan>(plan_job_core(self->system(), st.setup.cfg, core_options_for(self)));
  } catch (const std::exception& e) {  // a checkpoint these shards cannot take
    abort_job(self, e.what());
    return;
  }
  st.core.tracer = plan->tracer;
  st.core.ps.bounds = plan->bounds;
  st.core.ps.shards.assign(plan->shards.size(), ps_actor{});
  st.status.shards.clear();
  bool remote = false;
  for (size_t k = 0; k < plan->shards.size(); ++k) {
    bool here = on_head(st, k);
    st.status.shards.push_back(here ? "head" : st.setup.shard_node_names[k]);
    if (here)
      st.core.ps.shards[k] = spawn_parameter_server(self->system(), std::move(plan->shards[k]));
    remote = remote || !here;
  }
  if (!remote) {
    spawn_rest(self, plan->tracer, st.core.ps);
    return;
  }
  for (size_t k = 0; k < plan->shards.size(); ++k)
    if (!on_head(st, k))
      spawn_remote_shard(self, plan, k);
}

// Whether this job's newest checkpoint can replace a lost shard: checkpoints
// on, one taken, and few restarts so far (a node that dies again and again
// ends the job).
bool can_restart(job_ptr self) {
  auto& st = self->state;
  auto& cfg = st.setup.cfg;
  return st.started && !st.ended && !st.restarting && cfg.checkpoint_every_s > 0 && st.restarts < 3 &&
         !newest_checkpoint(cfg.checkpoint_dir).empty();
}

// Shard k is gone with its node: the job starts again from its newest
// checkpoint, the node's shards placed on a surviving node that hosts
// shards or workers (else on the head) and its workers lost, once every
// actor of the old run has ended.
void restart(job_ptr self, size_t k, const std::string& why) {
  auto& st = self->state;
  auto cfg = st.setup.cfg;
  cfg.resume_dir = cfg.checkpoint_dir;
  std::shared_ptr<const resume_point> from;
  try {
    from = std::make_shared<const resume_point>(
      load_resume_point(cfg, make_model(cfg.model)->size(), st.setup.train_size));
  } catch (const std::exception& e) {
    abort_job(self, why + "; its newest checkpoint cannot be resumed: " + e.what());
    return;
  }
  st.restarting = true;
  ++st.restarts;
  auto dead = st.setup.shard_nodes[k].address();
  st.lost_node = dead;
  std::string dead_name = st.setup.shard_node_names[k];
  // Where the dead node's shards go: a surviving shard host, else a worker's node, else the head.
  size_t to = SIZE_MAX;
  for (size_t j = 0; j < st.setup.shard_nodes.size() && to == SIZE_MAX; ++j)
    if (!on_head(st, j) && st.setup.shard_nodes[j].address() != dead)
      to = j;
  for (size_t j = 0; j < st.setup.shard_nodes.size(); ++j)
    if (!on_head(st, j) && st.setup.shard_nodes[j].address() == dead) {
      if (to == SIZE_MAX) {
        st.setup.shard_nodes[j] = node_actor{};
        st.setup.shard_node_names[j] = "head";
      } else {
        st.setup.shard_nodes[j] = st.setup.shard_nodes[to];
        st.setup.shard_node_names[j] = st.setup.shard_node_names[to];
        st.setup.shard_node_tokens[j] = st.setup.shard_node_tokens[to];
      }
    }
  for (size_t i = 0; i < st.setup.nodes.size(); ++i)  // its workers leave (the coordinator says so)
    if (st.setup.nodes[i] && st.setup.nodes[i].address() == dead) {
      st.setup.nodes[i] = node_actor{};
      st.vacant[i] = true;
    }
  // Every actor of the old run ends; its workers and shards are awaited, so
  // that the nodes have freed their slots before new ones are asked for.
  st.awaited.clear();
  auto end = [&](const auto& handle, bool await) {
    if (!handle)
      return;
    if (await) {
      self->monitor(handle);
      st.awaited.push_back(handle.address());
    }
    self->send_exit(handle, caf::exit_reason::user_shutdown);
  };
  for (auto& w : st.workers)
    end(w, true);
  for (auto& shard : st.core.ps.shards)
    end(shard, true);
  end(st.core.coordinator, false);
  end(st.core.evaluator, false);
  end(st.core.tracer, false);
  st.core = job_core{};
  st.workers.assign(st.workers.size(), worker_actor{});
  st.spawned = 0;
  st.started = false;
  st.setup.resume = from;
  char at[32];
  std::snprintf(at, sizeof at, "%.3f", to_seconds(from->point.state.time_ns));
  say(self, "[job " + std::to_string(st.setup.id) + "] " + why + " (node " + dead_name +
              "): restarting from the newest checkpoint, " + from->file + " (t = " + at + " s on the run clock)");
  if (st.awaited.empty()) {
    st.restarting = false;
    launch(self);
  }
}

// The down of an actor of the old run: the new run starts after the last.
void awaited_down(job_ptr self, const caf::actor_addr& who) {
  auto& st = self->state;
  auto it = std::find(st.awaited.begin(), st.awaited.end(), who);
  if (it == st.awaited.end())
    return;
  st.awaited.erase(it);
  if (st.awaited.empty() && !st.ended) {
    st.restarting = false;
    launch(self);
  }
}

// Shard k of the running job is gone.
void shard_lost(job_ptr self, size_t k, const caf::error& reason) {
  auto& st = self->state;
  auto why = "lost shard " + std::to_string(k) + " of the parameter server";
  if (!on_head(st, k) && can_restart(self)) {
    restart(self, k, why);
    return;
  }
  abort_job(self, why + (on_head(st, k) ? std::string() : " (node " + st.setup.shard_node_names[k] + ")") +
                    ": " + self->system().render(reason) +
                    (st.setup.cfg.checkpoint_every_s > 0 ? "" : "; the job has no checkpoints (--checkpoint-every) to go on from"));
}

// Elastic: a node with `free` slots joined. Up to that many vacant ids get a
// worker there (once the node holds the data), which joins the running
// job. Returns how many it takes.
int32_t grow(job_ptr self, node_actor node, const std::string& name, const std::string& node_token, int32_t free) {
  auto& st = self->state;
  if (!st.setup.cfg.elastic || !st.started || st.ended || !node)
    return 0;
  std::vector<size_t> ids;
  for (size_t i = 0; i < st.vacant.size() && static_cast<int32_t>(ids.size()) < free; ++i)
    if (st.vacant[i])
      ids.push_back(i);
  if (ids.empty())
    return 0;
  for (auto i : ids) {
    st.vacant[i] = false;
    st.setup.nodes[i] = node;
    st.setup.node_names[i] = name;
    st.setup.node_tokens[i] = node_token;
  }
  self->monitor(node);
  auto give_back = [=](const std::vector<size_t>& which, const std::string& why) {
    auto& st = self->state;
    for (auto i : which)
      st.vacant[i] = true;
    say(self, "[job " + std::to_string(st.setup.id) + "] node " + name + " could not take workers: " + why);
  };
  auto spawn_all = [=] {
    for (auto i : ids)
      self->request(node, self->state.setup.spawn_timeout, spawn_atom::value, node_token, spec_for(self, i))
        .then(
          [=](worker_actor& w) {
            auto& st = self->state;
            st.workers[i] = w;
            if (st.ended) {
              self->send_exit(w, caf::exit_reason::user_shutdown);
              return;
            }
            st.hosts[i].push_back(name);
            self->send(st.core.coordinator, join_atom::value, static_cast<worker_id>(i), std::move(w),
                       "node " + name);
          },
          [=](caf::error& err) { give_back({i}, self->system().render(err)); });
  };
  prepare_node(self, node, node_token, name, spawn_all, [=](const std::string& why) { give_back(ids, why); });
  return static_cast<int32_t>(ids.size());
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

job_actor::behavior_type job(job_ptr self, job_setup setup) {
  auto& st = self->state;
  st.setup = std::move(setup);
  auto& cfg = st.setup.cfg;
  st.status = {st.setup.id, cfg.protocol, cfg.workers, 0, -1, "starting"};
  st.vacant.assign(static_cast<size_t>(cfg.workers), false);
  st.hosts.resize(st.vacant.size());
  for (size_t i = 0; i < st.setup.nodes.size(); ++i) {
    st.vacant[i] = !st.setup.nodes[i];
    if (st.setup.nodes[i])
      st.hosts[i].push_back(st.setup.node_names[i]);
  }
  self->monitor(st.setup.client);
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    if (st.restarting) {
      awaited_down(self, dm.source);
      if (dm.source != st.setup.client.address())
        return;
    }
    auto shard = std::find_if(st.core.ps.shards.begin(), st.core.ps.shards.end(),
                              [&](const ps_actor& s) { return s && s.address() == dm.source; });
    if (dm.source == st.lost_node) {
      return;  // restarted without it
    } else if (shard != st.core.ps.shards.end() && st.started && !st.ended) {
      shard_lost(self, static_cast<size_t>(shard - st.core.ps.shards.begin()), dm.reason);
    } else if (st.core.coordinator && dm.source == st.core.coordinator.address() && !st.ended &&
               dm.reason.category() == caf::atom("syncpoint") &&
               dm.reason.code() == static_cast<uint8_t>(sp_error::lost_shard) && can_restart(self)) {
      return;  // the shard's own down restarts the job
    } else if (dm.source == st.setup.client.address()) {
      st.client_gone = true;
      stop_job(self, "the submitting process went away");
    } else if (st.core.coordinator && dm.source == st.core.coordinator.address() && !st.ended) {
      abort_job(self, "the coordinator stopped: " + self->system().render(dm.reason));
    } else if (st.started && st.setup.cfg.elastic) {  // its workers' places wait for a new node
      for (size_t i = 0; i < st.setup.nodes.size(); ++i)
        if (st.setup.nodes[i].address() == dm.source) {
          st.vacant[i] = true;
          st.setup.nodes[i] = node_actor{};
        }
    } else if (!st.started) {  // a node lost before the run began (after: its workers are lost)
      for (size_t i = 0; i < st.setup.nodes.size(); ++i)
        if (st.setup.nodes[i].address() == dm.source) {
          abort_job(self, "node " + st.setup.node_names[i] + " was lost while the job was starting");
          return;
        }
    }
  });
  prepare(self);
  return {
    [=](progress_atom, const progress_report& r) {
      if (!from_coordinator(self))
        return;
      auto& st = self->state;
      st.status.progress = r.fraction;
      st.status.accuracy = r.accuracy;
      say(self, r.line);
      tell_head(self);
    },
    [=](done_atom, run_outcome& outcome) {
      if (from_coordinator(self))
        finish(self, outcome);
    },
    [=](grow_atom, const std::string& token, node_actor& node, const std::string& name,
        const std::string& node_token, int32_t free) -> int32_t {
      if (!same_secret(token, self->state.setup.head_token))
        return 0;
      return grow(self, std::move(node), name, node_token, free);
    },
    [=](stop_atom, const std::string& token, const std::string& reason) {
      // The head's secret, not the sender's node: CAF 0.17 lets a peer forge that.
      if (same_secret(token, self->state.setup.head_token))
        stop_job(self, reason);
    },
  };
}

}  // namespace

job_actor spawn_job(caf::actor_system& sys, job_setup setup) {
  return sys.spawn(job, std::move(setup));
}

}  // namespace syncpoint::cluster
