// The head's side of `syncpoint sweep --head`: a sweep is a managed job
// whose runner (sweep_runner.hpp) takes free slots as an elastic job does
// and gives each back when no cell waits for it.
#include "runtime/cluster/control/head_state.hpp"
#include "runtime/cluster/jobs/sweep_runner.hpp"

#include <algorithm>

namespace syncpoint::cluster::head_detail {

namespace {

// Untrusted input: a sweep's size within reason.
constexpr size_t max_cells = 100000, max_args = 1024, max_arg_bytes = 4096;

}  // namespace

caf::result<uint64_t, credential> on_sweep(head_ptr self, std::vector<sweep_cell_order>& cells,
                                            sweep_client_actor& client, const std::string& secret) {
  auto& st = self->state;
  if (auto err = check_submission(self, secret, "sweep", static_cast<bool>(client)))
    return err;
  if (cells.empty() || cells.size() > max_cells)
    return make_error(sp_error::bad_input, "a sweep has 1 to " + std::to_string(max_cells) + " cells, not " +
                                             std::to_string(cells.size()));
  for (size_t i = 0; i < cells.size(); ++i) {
    auto& args = cells[i].args;
    bool too_long = std::any_of(args.begin(), args.end(), [](auto& a) { return a.size() > max_arg_bytes; });
    if (cells[i].index != i || args.size() > max_args || too_long)
      return make_error(sp_error::bad_input, "sweep cell " + std::to_string(i) + " is out of order or too long (" +
                                               std::to_string(max_args) + " options of " +
                                               std::to_string(max_arg_bytes) + " bytes at most)");
  }
  auto id = st.next_job++;
  job_entry entry;
  entry.client = client;
  entry.stop_token = make_token();
  entry.elastic = true;  // it takes slots as they free up
  entry.status = {id, "", 0, 0, -1, job_stage::running, {}, {}, job_kind::sweep};
  auto n = cells.size();
  entry.handle = spawn_sweep(self->system(), {id, std::move(cells), client, head_actor{self}, st.cfg.control_token});
  self->monitor(entry.handle);
  auto stop_token = entry.stop_token;
  st.jobs.emplace(id, std::move(entry));
  log(self, "sweep " + std::to_string(id) + " submitted: " + std::to_string(n) + " cells");
  int free = 0;
  for (auto& node : st.nodes)
    free += free_slots(node);
  if (free == 0)  // the submitter would see "0 running" and nothing else
    self->send(client, progress_atom::value,
               std::string(st.nodes.empty() ? "no node has joined the cluster yet"
                                            : "every slot of the cluster is taken now") +
                 ": the cells start as slots free up (a node joins, a job ends)");
  offer_freed_slots(self);
  return {id, credential{std::move(stop_token)}};
}

void on_slots(head_ptr self, const std::string& token, uint64_t id, const node_actor& node, int32_t n) {
  auto& st = self->state;
  auto j = st.jobs.find(id);
  if (!same_secret(token, st.cfg.control_token) || j == st.jobs.end() ||
      caf::actor_cast<caf::actor_addr>(self->current_sender()) != j->second.handle.address() || n < 0)
    return;
  if (node && n > 0) {
    auto held = j->second.held.find(node.address());
    int back = held == j->second.held.end() ? 0 : std::min(n, held->second);
    if (back > 0) {
      held->second -= back;
      for (auto& entry : st.nodes)
        if (entry.handle.address() == node.address())
          entry.status.used = std::max(0, entry.status.used - back);
    }
  }
  offer_freed_slots(self, n > 0 ? id : 0);  // the sweep gave them back: it has no cell for them
}

}  // namespace syncpoint::cluster::head_detail
