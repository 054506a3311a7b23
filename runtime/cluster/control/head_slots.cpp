// Who holds which slots: a job's come back when it ends, a sweep's one at a
// time; free slots are offered to the elastic jobs and sweeps short of them.
#include "runtime/cluster/control/head_state.hpp"

#include <algorithm>

namespace syncpoint::cluster::head_detail {

void release_slots(head_ptr self, job_entry& job) {
  for (auto& kv : job.held)
    for (auto& n : self->state.nodes)
      if (n.handle.address() == kv.first)
        n.status.used = std::max(0, n.status.used - kv.second);
  job.held.clear();
}

void maybe_done_shutting_down(head_ptr self) {
  auto& st = self->state;
  if (!st.shutting_down)
    return;
  for (auto& kv : st.jobs) {  // each outcome handed over and read (a relay, a sweep's runner, ends once it was)
    auto& job = kv.second;
    bool sweep_running = job.handle && !job.runner && !job.handle_ended;
    if (!is_final(job.status.state) || job.relay || sweep_running)
      return;
  }
  for (auto& n : st.nodes)
    self->send(n.handle, leave_atom::value, credential{n.token}, std::string("the head is shutting down"), st.leave_code);
  for (auto& rp : st.shutdown_waiters)
    rp.deliver(true);
  st.shutdown_waiters.clear();
  if (st.cfg.on_shut_down)
    st.cfg.on_shut_down();
}

void offer_slots(head_ptr self, const std::string& node_name, std::vector<uint64_t> jobs) {
  auto& st = self->state;
  auto* n = find_node(self, node_name);
  if (!n || jobs.empty())
    return;
  int32_t free = free_slots(*n);
  auto id = jobs.front();
  jobs.erase(jobs.begin());
  auto j = st.jobs.find(id);
  if (free <= 0 || j == st.jobs.end() || is_final(j->second.status.state)) {
    offer_slots(self, node_name, std::move(jobs));
    return;
  }
  if (!j->second.loop.empty()) {  // (a sweep's cells say what they need themselves)
    if (auto why = lacks_code(*n, j->second.loop, j->second.model); !why.empty()) {
      log(self, job_name(id, j->second) + " is not offered the slots of node '" + node_name + "': " + why);
      offer_slots(self, node_name, std::move(jobs));
      return;
    }
  }
  // The offered slots count as used until the job answers, so that two
  // offers of one slot cannot cross (a node joining while a job ends).
  n->status.used += free;
  auto where = n->handle.address();
  auto settle = [=](int32_t taken) {
    auto& st = self->state;
    auto* n = find_node(self, node_name);
    if (!n || n->handle.address() != where)
      return;  // the node left meanwhile, and its slots with it
    taken = std::clamp(taken, 0, free);
    n->status.used -= free - taken;
    auto j = st.jobs.find(id);
    if (j != st.jobs.end() && taken > 0) {
      j->second.held[where] += taken;
      log(self, job_name(id, j->second) + " took " + std::to_string(taken) + (taken == 1 ? " slot" : " slots") + " of node '" + node_name + "'");
    }
  };
  self->request(j->second.handle, std::chrono::seconds(10), grow_atom::value, credential{st.cfg.control_token}, n->handle,
                node_name, credential{n->token}, free)
    .then(
      [=](int32_t taken) {
        settle(taken);
        offer_slots(self, node_name, jobs);
      },
      [=](caf::error&) {
        settle(0);
        offer_slots(self, node_name, jobs);
      });
}

std::vector<uint64_t> elastic_jobs(head_ptr self) {
  std::vector<uint64_t> out;
  for (auto& [id, job] : self->state.jobs)
    if (job.elastic && !is_final(job.status.state))
      out.push_back(id);
  return out;
}

void offer_freed_slots(head_ptr self, uint64_t except) {
  auto jobs = elastic_jobs(self);
  jobs.erase(std::remove(jobs.begin(), jobs.end(), except), jobs.end());
  if (jobs.empty() || self->state.shutting_down)
    return;
  for (auto& n : self->state.nodes)
    if (free_slots(n) > 0)
      offer_slots(self, n.status.name, jobs);
}

}  // namespace syncpoint::cluster::head_detail
