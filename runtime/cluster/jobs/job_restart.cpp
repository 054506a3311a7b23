// A job whose shard's node died goes on from its newest checkpoint
// (docs/architecture.md, "A lost shard"), or fails naming the shard.
#include "runtime/cluster/jobs/job_state.hpp"

#include "runtime/records/checkpoint_file.hpp"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace syncpoint::cluster::detail {

std::optional<copy_host> host_for_copy(const job_state& st, size_t k, const std::vector<caf::actor_addr>& excluded) {
  auto alive = [&](const node_actor& n) {
    return n && std::find(st.dead_nodes.begin(), st.dead_nodes.end(), n.address()) == st.dead_nodes.end() &&
           std::find(excluded.begin(), excluded.end(), n.address()) == excluded.end();
  };
  // The survivors, those that host shards first, then those that host workers.
  std::vector<copy_host> survivors;
  auto offer = [&](const node_actor& n, const std::string& name, const std::string& token) {
    if (alive(n) && std::none_of(survivors.begin(), survivors.end(), [&](const copy_host& h) { return h.node == n; }))
      survivors.push_back({n, name, token});
  };
  for (size_t j = 0; j < st.setup.shard_nodes.size(); ++j)
    offer(st.setup.shard_nodes[j], st.setup.shard_node_names[j], st.setup.shard_node_tokens[j]);
  for (size_t j = 0; j < st.setup.replica_nodes.size(); ++j)
    for (size_t r = 0; r < st.setup.replica_nodes[j].size(); ++r)
      offer(st.setup.replica_nodes[j][r], st.setup.replica_node_names[j][r], st.setup.replica_node_tokens[j][r]);
  for (size_t i = 0; i < st.setup.nodes.size(); ++i)
    offer(st.setup.nodes[i], st.setup.node_names[i], st.setup.node_tokens[i]);
  auto holds_copy_of = [&](const node_actor& n) {
    if (k < st.setup.shard_nodes.size() && st.setup.shard_nodes[k] == n)
      return true;
    if (k < st.setup.replica_nodes.size())
      for (auto& c : st.setup.replica_nodes[k])
        if (c == n)
          return true;
    return false;
  };
  auto copies_on = [&](const node_actor& node) {
    auto n = std::count(st.setup.shard_nodes.begin(), st.setup.shard_nodes.end(), node);
    for (auto& copies : st.setup.replica_nodes)
      n += std::count(copies.begin(), copies.end(), node);
    return n;
  };
  auto best = [&](bool apart) {
    auto out = survivors.end();
    for (auto h = survivors.begin(); h != survivors.end(); ++h)
      if ((!apart || !holds_copy_of(h->node)) && (out == survivors.end() || copies_on(h->node) < copies_on(out->node)))
        out = h;
    return out;
  };
  auto it = best(true);
  if (it == survivors.end())
    it = best(false);
  if (it == survivors.end())
    return std::nullopt;
  return *it;
}

// `node` is lost: its workers' ids are vacant (a resumed coordinator loses
// them), and the copies of shards it held go to surviving nodes.
void mark_dead(job_state& st, const caf::actor_addr& node) {
  if (node && std::find(st.dead_nodes.begin(), st.dead_nodes.end(), node) == st.dead_nodes.end())
    st.dead_nodes.push_back(node);
  auto alive = [&](const node_actor& n) {
    return n && std::find(st.dead_nodes.begin(), st.dead_nodes.end(), n.address()) == st.dead_nodes.end();
  };
  for (size_t i = 0; i < st.setup.nodes.size(); ++i)
    if (st.setup.nodes[i] && !alive(st.setup.nodes[i])) {
      st.setup.nodes[i] = node_actor{};
      st.vacant[i] = true;
    }
  auto place = [&](size_t k, node_actor& n, std::string& name, std::string& token, const char* none) {
    if (alive(n))
      return;
    if (auto h = host_for_copy(st, k)) {
      std::tie(n, name, token) = std::tie(h->node, h->name, h->token);
    } else {
      n = node_actor{};
      name = none;
      token.clear();
    }
  };
  for (size_t k = 0; k < st.setup.shard_nodes.size(); ++k)
    if (!on_head(st, k))  // (none left: the head)
      place(k, st.setup.shard_nodes[k], st.setup.shard_node_names[k], st.setup.shard_node_tokens[k], "head");
  for (size_t k = 0; k < st.setup.replica_nodes.size(); ++k)
    for (size_t r = 0; r < st.setup.replica_nodes[k].size(); ++r)
      place(k, st.setup.replica_nodes[k][r], st.setup.replica_node_names[k][r], st.setup.replica_node_tokens[k][r],
            "");
}

namespace {

// Whether the job took a checkpoint since it last went on from one.
bool progressed(const job_state& st, const std::string& newest) {
  return !st.setup.resume || st.setup.resume->file != newest;
}

}  // namespace

// Whether this job's newest checkpoint can replace a lost shard: checkpoints
// on, one taken, and fewer than 3 restarts in a row with no checkpoint in
// between (a node that dies again and again before the job gets anywhere
// ends the job; losses far apart, each after new checkpoints, do not).
bool can_restart(job_ptr self) {
  auto& st = self->state;
  auto& cfg = st.setup.plan.cfg;
  if (st.phase != job_phase::running || !st.stop_reason.empty() || st.client_gone || cfg.checkpoint_dir.empty())
    return false;
  auto newest = newest_checkpoint(cfg.checkpoint_dir);
  return !newest.empty() && (st.restarts < 3 || progressed(st, newest));
}

namespace {

// The new run starts once every awaited actor of the old one has ended.
void relaunch_when_ended(job_ptr self) {
  auto& st = self->state;
  if (!st.awaited.empty() || st.phase != job_phase::restarting)
    return;
  st.phase = job_phase::starting;
  launch(self);
}

// Shard k is gone with its node: the job starts again from its newest
// checkpoint, the node's shards placed on a surviving node that hosts
// shards or workers (else on the head) and its workers lost, once every
// actor of the old run has ended.
void restart(job_ptr self, size_t k, const std::string& why) {
  auto& st = self->state;
  auto plan = st.setup.plan;
  plan.cfg.resume_dir = plan.cfg.checkpoint_dir;
  std::shared_ptr<const resume_point> from;
  try {
    from = std::make_shared<const resume_point>(load_resume_point(plan));
  } catch (const std::exception& e) {
    abort_job(self, why + "; its newest checkpoint cannot be resumed: " + e.what());
    return;
  }
  st.phase = job_phase::restarting;
  st.restarts = progressed(st, from->file) ? 1 : st.restarts + 1;
  // The shard's host: its primary's, or (replicated) every copy's, all lost
  // (each named before any is placed again).
  std::string dead_name = st.setup.shard_node_names[k];
  std::vector<caf::actor_addr> dead{st.setup.shard_nodes[k].address()};
  if (k < st.setup.replica_nodes.size())
    for (size_t r = 0; r < st.setup.replica_nodes[k].size(); ++r) {
      dead_name += "+" + st.setup.replica_node_names[k][r];
      dead.push_back(st.setup.replica_nodes[k][r].address());
    }
  for (auto& node : dead)
    mark_dead(st, node);
  ++st.generation;
  for (size_t i = 0; i < st.vacant.size(); ++i)  // gone at the checkpoint: nothing to spawn
    if (from->point.state.coordinator.gone.at(i))
      st.vacant[i] = true;
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
  for (auto& shard : st.core.ps.all_members())  // (with replicas: every live copy)
    end(shard, true);
  end_placed_copies(self);
  end(st.core.coordinator, false);
  end(st.core.evaluator, false);
  end(st.core.tracer, false);
  st.core = job_core{};
  st.workers.assign(st.workers.size(), worker_actor{});
  st.spawned = 0;
  st.setup.resume = from;
  char at[32];
  std::snprintf(at, sizeof at, "%.3f", to_seconds(from->point.state.time_ns));
  say(self, "[job " + std::to_string(st.setup.id) + "] " + why + " (node " + dead_name +
              "): restarting from the newest checkpoint, " + from->file + " (t = " + at + " s on the run clock)");
  relaunch_when_ended(self);
}

}  // namespace

// The down of an actor of the old run: the new run starts after the last.
void awaited_down(job_ptr self, const caf::actor_addr& who) {
  auto& st = self->state;
  auto it = std::find(st.awaited.begin(), st.awaited.end(), who);
  if (it == st.awaited.end())
    return;
  st.awaited.erase(it);
  relaunch_when_ended(self);
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
                    (st.setup.plan.cfg.checkpoint_every_s > 0 ? "" : "; the job has no checkpoints (--checkpoint-every) to go on from"));
}

}  // namespace syncpoint::cluster::detail
