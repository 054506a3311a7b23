// A job on the cluster, as the head runs it: its behavior, the start of its run once every worker
// answered, its end, and what it relays between the coordinator, the submitter and the head.
// Spawning its parts is job_launch.cpp; losses, growth, copies and restarts are job_down.cpp,
// job_grow.cpp, job_replace.cpp and job_restart.cpp.
#include "runtime/cluster/jobs/job_runner.hpp"

#include "runtime/cluster/jobs/job_state.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace syncpoint::cluster::detail {

// Progress and the outcome come from this job's coordinator only.
bool from_coordinator(job_ptr self) {
  return self->current_sender() == caf::actor_cast<caf::strong_actor_ptr>(self->state.core.coordinator);
}

void tell_head(job_ptr self) {
  auto& st = self->state;
  self->send(st.setup.head, job_atom::value, credential{st.setup.head_token}, st.setup.id, st.status);
}

void say(job_ptr self, const std::string& line) {
  auto& st = self->state;
  if (!st.client_gone && st.setup.plan.cfg.progress)
    self->send(st.setup.client, progress_atom::value, line);
}

// What the coordinator tells its driver, to the job's follower: one sender,
// so it hears it in the coordinator's order (and, as the follower is the
// client, before the result).
template <class... Ts>
void relay(job_ptr self, const Ts&... xs) {
  auto& st = self->state;
  if (from_coordinator(self) && st.setup.follower && !st.client_gone)
    self->send(st.setup.follower, xs...);
}

// The submitter's observers ask the running coordinator (not one being
// replaced after a lost shard) through the head, with its secret.
template <class... Ts>
void ask_coordinator(job_ptr self, const std::string& token, const Ts&... xs) {
  auto& st = self->state;
  if (same_secret(token, st.setup.head_token) && st.phase == job_phase::running)
    self->send(st.core.coordinator, xs...);
}

// Ends a job that never ran to its outcome: stops everything it spawned.
void abort_job(job_ptr self, const std::string& why) {
  auto& st = self->state;
  if (st.ended())
    return;
  st.phase = job_phase::ended;
  for (auto& w : st.workers)
    if (w)
      self->send_exit(w, caf::exit_reason::user_shutdown);
  for (auto& shard : st.core.ps.all_members())  // spawned (phase 2), here or on nodes, each copy (--ps-replicas)
    if (shard)
      self->send_exit(shard, caf::exit_reason::user_shutdown);
  end_placed_copies(self);
  if (st.core.tracer)
    self->send_exit(st.core.tracer, caf::exit_reason::user_shutdown);
  if (st.core.coordinator) {
    self->send_exit(st.core.coordinator, caf::exit_reason::user_shutdown);
    self->send_exit(st.core.evaluator, caf::exit_reason::user_shutdown);
  }
  st.status.state = job_stage::failed;
  tell_head(self);
  if (st.watch)
    self->send_exit(st.watch, caf::exit_reason::user_shutdown);  // its last figures stay on the page
  if (!st.client_gone)
    self->send(st.setup.client, finished_atom::value, job_result{job_stage::failed, why, 0, {}});
  self->quit();
}

// Asks the coordinator to end the run early; its outcome still comes.
void stop_job(job_ptr self, const std::string& why) {
  auto& st = self->state;
  if (st.phase != job_phase::running) {
    abort_job(self, why);
    return;
  }
  if (st.stop_reason.empty()) {
    st.stop_reason = why;
    self->send(st.core.coordinator, stop_request{why});
  }
}

// "; PS shards on a, b" when the shards run on nodes; "a+b": a replica on b.
std::string shard_hosts(const job_state& st) {
  if (st.setup.shard_nodes.empty() && st.setup.replica_nodes.empty())
    return "";
  std::string out = "; PS shards on ";
  for (size_t k = 0; k < st.status.shards.size(); ++k)
    out += (k ? ", " : "") + st.status.shards[k];
  return out;
}

void start(job_ptr self) {
  auto& st = self->state;
  st.phase = job_phase::running;
  self->send(st.core.coordinator, start_atom::value, st.workers, st.core.evaluator);
  if (!st.checkpoint_asked.empty())  // (Slurm's warning can come while the nodes load the data)
    self->send(st.core.coordinator, checkpoint_request{std::exchange(st.checkpoint_asked, {})});
  if (st.setup.dashboard.hub) {  // the run (again, after a restart) for the dashboard
    if (!st.watch)
      st.watch = spawn_watch(self->system(), {st.setup.id, st.setup.plan.cfg, st.setup.dashboard, self->address()});
    self->send(st.watch, start_atom::value, st.core.tracer, st.core.coordinator, st.core.ps, st.status.shards);
  }
  if (st.setup.follower && !st.client_gone)
    self->send(st.setup.follower, start_atom::value);
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
                     (st.setup.plan.cfg.elastic ? "elastic: the rest as slots free up" : "the rest were lost with their node") +
                     ")"
                 : std::string(" workers started")) +
              " on " + where + shard_hosts(st));
  st.status.state = job_stage::running;
  tell_head(self);
}

void finish(job_ptr self, run_outcome& outcome) {
  auto& st = self->state;
  st.phase = job_phase::ended;
  end_placed_copies(self);
  std::vector<size_t> nth(st.hosts.size(), 0);  // a worker's k-th loss was on its k-th node
  for (auto& l : outcome.losses)
    if (l.worker >= 0 && static_cast<size_t>(l.worker) < st.hosts.size()) {
      auto& h = st.hosts[static_cast<size_t>(l.worker)];
      auto k = nth[static_cast<size_t>(l.worker)]++;
      if (!h.empty())
        l.reason += " (node " + h[std::min(k, h.size() - 1)] + ")";
    }
  auto state = st.stop_reason.empty() ? job_stage::done : job_stage::stopped;
  st.status.state = state;
  tell_head(self);
  job_result result{state, st.stop_reason, st.setup.plan.cfg.iter_cost_ms, std::move(outcome)};
  if (auto& r = st.setup.resume) {
    result.resumed_from = r->file;
    result.resumed_at_s = to_seconds(r->point.state.time_ns);
  }
  if (st.watch)
    self->send(st.watch, done_atom::value, result);  // a copy: the trace for the head's files
  if (!st.client_gone)
    self->send(st.setup.client, finished_atom::value, std::move(result));
  self->quit();
}


job_actor::behavior_type job(job_ptr self, job_setup setup) {
  auto& st = self->state;
  st.setup = std::move(setup);
  auto& cfg = st.setup.plan.cfg;
  st.status = {st.setup.id, cfg.protocol, cfg.workers, 0, -1, job_stage::starting};
  st.status.devices = st.setup.plan.devices;
  st.vacant.assign(static_cast<size_t>(cfg.workers), false);
  st.hosts.resize(st.vacant.size());
  for (size_t i = 0; i < st.setup.nodes.size(); ++i) {
    st.vacant[i] = !st.setup.nodes[i];
    if (st.setup.nodes[i])
      st.hosts[i].push_back(st.setup.node_names[i]);
  }
  self->monitor(st.setup.client);
  self->set_down_handler([=](caf::down_msg& dm) { on_down(self, dm); });
  prepare(self);
  return {
    [=](progress_atom, const progress_report& r) {
      if (!from_coordinator(self))
        return;
      auto& st = self->state;
      st.status.progress = r.fraction;
      st.status.accuracy = r.accuracy;
      if (st.setup.follower)
        relay(self, progress_atom::value, r);
      else
        say(self, r.line);
      tell_head(self);
    },
    [=](eval_atom, const eval_result& r) { relay(self, eval_atom::value, r); },
    [=](phase_atom, const phase_change& p) { relay(self, phase_atom::value, p); },
    [=](done_atom, run_outcome& outcome) {
      if (from_coordinator(self))
        finish(self, outcome);
    },
    [=](grow_atom, const credential& token, node_actor& node, const std::string& name,
        const credential& node_token, int32_t free) -> int32_t {
      if (!same_secret(token, self->state.setup.head_token))
        return 0;
      return grow(self, std::move(node), name, node_token.text, free);
    },
    [=](stop_atom, const credential& token, const std::string& reason) {
      // The head's secret, not the sender's node: CAF 0.17 lets a peer forge that.
      if (same_secret(token, self->state.setup.head_token))
        stop_job(self, reason);
    },
    [=](eval_atom, const credential& token) { ask_coordinator(self, token.text, eval_request{}); },
    [=](checkpoint_atom, const credential& token, const std::string& why) {
      auto& st = self->state;
      if (same_secret(token, st.setup.head_token) && !st.ended() && st.phase != job_phase::running)
        st.checkpoint_asked = why;
      else
        ask_coordinator(self, token.text, checkpoint_request{why});
    },
    [=](mark_atom, const credential& token, const std::string& note, double value) {
      ask_coordinator(self, token.text, mark_request{note, value});
    },
    [=](bulk_atom, const credential& token, const std::string& node, const std::string& at) {
      if (same_secret(token, self->state.setup.head_token))
        self->state.setup.node_bulk[node] = at;  // (a node joined again, or its address came after the start)
    },
    [=](copy_atom, uint32_t k, uint32_t r, saved_ps& state) { return place_copy(self, k, r, state); },
    [=](copy_atom, uint32_t k, uint32_t r, const ps_actor& copy, bool installed) {
      copy_placed(self, k, r, copy, installed);
    },
  };
}

}  // namespace syncpoint::cluster::detail

namespace syncpoint::cluster {

job_actor spawn_job(caf::actor_system& sys, job_setup setup) {
  return sys.spawn(detail::job, std::move(setup));
}

}  // namespace syncpoint::cluster
