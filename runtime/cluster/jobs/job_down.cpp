// What a job does when something it monitors goes (its client, its
// coordinator, a PS shard or a node), by the job's phase: starting, running,
// restarting after a lost shard (job_restart.cpp), or ended.
#include "runtime/cluster/jobs/job_state.hpp"

#include <algorithm>
#include <optional>

namespace syncpoint::cluster::detail {

namespace {

// The shard of this run that `who` is (its index), or none.
std::optional<size_t> shard_of(const job_state& st, const caf::actor_addr& who) {
  auto& shards = st.core.ps.shards;
  auto it = std::find_if(shards.begin(), shards.end(), [&](const ps_actor& s) { return s && s.address() == who; });
  return it == shards.end() ? std::nullopt : std::optional<size_t>(static_cast<size_t>(it - shards.begin()));
}

// A replicated shard's copy is gone: status shows the shard's live copies'
// hosts, the one that serves first (the coordinator gives a lost primary's
// place to the next live copy, in copy order, and so does the job's group,
// which workers that join later take). With --ps-rereplicate the coordinator
// has a new copy made (job_replace.cpp). The last copy's loss restarts the
// job from its newest checkpoint, as a lost shard without replicas does
// (without one, the coordinator's failure ends the job, naming every loss).
void copy_gone(job_ptr self, size_t k, size_t r, const caf::error& reason) {
  auto& st = self->state;
  auto& ps = st.core.ps;
  bool serving = ps.shards[k] == ps.copies[k][r];
  ps.copies[k][r] = nullptr;
  auto live = ps.members(k);
  if (serving && !live.empty())
    ps.shards[k] = live.front();  // as the coordinator does: a worker that joins later pulls from it
  show_copies(self, k);
  if (live.empty() && can_restart(self))
    shard_lost(self, k, reason);
}

bool is_node(const job_state& st, const caf::actor_addr& who) {
  auto is = [&](const node_actor& n) { return n && n.address() == who; };
  return std::any_of(st.setup.nodes.begin(), st.setup.nodes.end(), is) ||
         std::any_of(st.setup.shard_nodes.begin(), st.setup.shard_nodes.end(), is) ||
         std::any_of(st.setup.replica_nodes.begin(), st.setup.replica_nodes.end(),
                     [&](auto& copies) { return std::any_of(copies.begin(), copies.end(), is); });
}

}  // namespace

// Something the job monitors went: the client, the coordinator, a shard or a node.
void on_down(job_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  if (dm.source == st.setup.client.address()) {
    st.client_gone = true;
    stop_job(self, "the submitting process went away");
    return;
  }
  bool dead = std::find(st.dead_nodes.begin(), st.dead_nodes.end(), dm.source) != st.dead_nodes.end();
  bool coordinator = st.core.coordinator && dm.source == st.core.coordinator.address();
  auto shard = shard_of(st, dm.source);
  switch (st.phase) {
    case job_phase::restarting:  // the old run ends; a node lost meanwhile is left out of the new one
      if (is_node(st, dm.source))
        mark_dead(st, dm.source);
      awaited_down(self, dm.source);
      return;
    case job_phase::ended:
      return;
    case job_phase::starting:
      if (dead)
        return;  // already left out
      if (shard)
        abort_job(self, "lost shard " + std::to_string(*shard) + " of the parameter server while the job was starting: " +
                          self->system().render(dm.reason));
      else if (coordinator)
        abort_job(self, "the coordinator stopped: " + self->system().render(dm.reason));
      else  // a node lost before the run began (after: its workers are lost)
        for (size_t i = 0; i < st.setup.nodes.size(); ++i)
          if (st.setup.nodes[i].address() == dm.source) {
            abort_job(self, "node " + st.setup.node_names[i] + " was lost while the job was starting");
            return;
          }
      return;
    case job_phase::running:
      if (dead)
        return;  // already left out
      if (shard && st.core.ps.replicas() == 0) {
        shard_lost(self, *shard, dm.reason);
      } else if (auto [k, r] = st.core.ps.copy_of(dm.source); k >= 0) {
        // A replicated shard's copy: the coordinator follows every copy, and
        // a replica serves in a lost primary's place (or, with none left, the
        // coordinator fails the run, and its own down message ends the job).
        copy_gone(self, static_cast<size_t>(k), static_cast<size_t>(r), dm.reason);
      } else if (coordinator) {
        bool shard_gone = dm.reason.category() == caf::atom("syncpoint") &&
                          dm.reason.code() == static_cast<uint8_t>(sp_error::lost_shard);
        if (!shard_gone || !can_restart(self))  // else the shard's own down restarts the job
          abort_job(self, "the coordinator stopped: " + self->system().render(dm.reason));
      } else if (st.setup.plan.cfg.elastic) {  // its workers' places wait for a new node
        if (is_node(st, dm.source))  // (a restart places no copy of a shard there)
          st.dead_nodes.push_back(dm.source);
        for (size_t i = 0; i < st.setup.nodes.size(); ++i)
          if (st.setup.nodes[i].address() == dm.source) {
            st.vacant[i] = true;
            st.setup.nodes[i] = node_actor{};
          }
      } else if (is_node(st, dm.source)) {  // its workers are lost (the coordinator says so)
        st.dead_nodes.push_back(dm.source);
      }
      return;
  }
}

}  // namespace syncpoint::cluster::detail
