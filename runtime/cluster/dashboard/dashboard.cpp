#include "runtime/cluster/dashboard/dashboard.hpp"


#include <syncpoint/version.hpp>

#include <algorithm>
#include <map>

namespace syncpoint::cluster {

namespace {

struct hub_state {
  hub_config cfg;
  status_source_actor head;
  std::map<uint64_t, std::shared_ptr<const live_job>> live;  // by job id
  bool polling = false;  // a status request is out
  static inline const char* name = "dashboard_hub";
};

using hub_ptr = hub_actor::stateful_pointer<hub_state>;

// The view of `status` with the figures the watchers sent; the figures of all
// but the newest `keep_finished` finished jobs are let go.
std::shared_ptr<const dashboard_view> build(hub_ptr self, cluster_status& status) {
  auto& st = self->state;
  auto v = std::make_shared<dashboard_view>();
  v->now_ms = unix_ms();
  v->version = syncpoint::version();
  v->nodes = std::move(status.nodes);
  std::sort(status.jobs.begin(), status.jobs.end(), [](auto& a, auto& b) { return a.id < b.id; });
  size_t finished_seen = 0;
  for (auto j = status.jobs.rbegin(); j != status.jobs.rend(); ++j)
    if (is_final(j->state) && ++finished_seen > st.cfg.keep_finished)
      st.live.erase(j->id);
  for (auto& s : status.jobs) {
    auto i = st.live.find(s.id);
    v->jobs.push_back({s, s.kind == job_kind::sweep, i == st.live.end() ? nullptr : i->second});
  }
  return v;
}

void poll(hub_ptr self) {
  auto& st = self->state;
  if (!st.head || st.polling)
    return;
  st.polling = true;
  self->request(st.head, std::chrono::seconds(5), status_atom::value, credential{st.cfg.secret})
    .then(
      [=](cluster_status& status) {
        self->state.polling = false;
        self->state.cfg.board->put(build(self, status));
      },
      [=](caf::error&) { self->state.polling = false; });  // the head is going: the last view stays
}

hub_actor::behavior_type hub(hub_ptr self, hub_config cfg) {
  self->state.cfg = std::move(cfg);
  return {
    [=](attach_atom, status_source_actor& head) {
      auto& st = self->state;
      if (st.head)
        return;
      st.head = std::move(head);
      self->monitor(st.head);  // it ends with the head
      self->set_down_handler([=](caf::down_msg&) { self->quit(); });
      poll(self);
      self->delayed_send(self, st.cfg.period, timeout_atom::value);
    },
    [=](live_atom, uint64_t id, std::shared_ptr<const live_job>& figures) {
      self->state.live[id] = std::move(figures);
    },
    [=](timeout_atom) {
      poll(self);
      self->delayed_send(self, self->state.cfg.period, timeout_atom::value);
    },
  };
}

}  // namespace

hub_actor spawn_hub(caf::actor_system& sys, hub_config cfg) {
  return sys.spawn<caf::detached>(hub, std::move(cfg));
}

}  // namespace syncpoint::cluster
