// An elastic job grows: a node with free slots joined, and the job's vacant
// worker ids get workers there, which join the running job (docs/elastic-bsp.md
// and docs/cluster.md, "Elastic jobs").
#include "runtime/cluster/jobs/job_state.hpp"

namespace syncpoint::cluster::detail {

// Elastic: a node with `free` slots joined. Up to that many vacant ids get a
// worker there (once the node holds the data), which joins the running
// job. Returns how many it takes.
int32_t grow(job_ptr self, node_actor node, const std::string& name, const std::string& node_token, int32_t free) {
  auto& st = self->state;
  if (!st.setup.plan.cfg.elastic || st.phase != job_phase::running || !node)
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
  auto generation = st.generation;
  auto spawn_all = [=] {
    if (self->state.generation != generation)  // restarted meanwhile: the new run placed its own
      return;
    for (auto i : ids)
      self->request(node, self->state.setup.spawn_timeout, spawn_atom::value, credential{node_token}, spec_for(self, i))
        .then(
          [=](worker_actor& w) {
            auto& st = self->state;
            if (st.ended() || st.generation != generation) {
              self->send_exit(w, caf::exit_reason::user_shutdown);
              return;
            }
            st.workers[i] = w;
            st.hosts[i].push_back(name);
            self->send(st.core.coordinator, join_atom::value, static_cast<worker_id>(i), std::move(w),
                       "node " + name);
          },
          [=](caf::error& err) { give_back({i}, self->system().render(err)); });
  };
  prepare_node(self, node, node_token, name, spawn_all, [=](const std::string& why) { give_back(ids, why); });
  return static_cast<int32_t>(ids.size());
}

}  // namespace syncpoint::cluster::detail
