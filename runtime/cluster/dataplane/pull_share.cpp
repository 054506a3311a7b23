#include "runtime/cluster/dataplane/pull_share.hpp"

#include <deque>
#include <map>
#include <set>

namespace syncpoint::cluster {

namespace {

struct waiter {
  caf::actor_addr proxy;
  caf::response_promise reply;
};

// A version on its way: who fetches it, and who waits for it.
struct fetch {
  caf::actor_addr fetcher;
  std::deque<waiter> waiters;
};

struct share_state {
  caf::actor_addr shard;
  std::set<caf::actor_addr> watched;  // the proxies monitored (once each)
  std::map<uint64_t, fetch> fetches;  // by the pulls' min_version
  static inline const char* name = "bulk_pull_share";
};

using share_ptr = caf::stateful_actor<share_state>*;

void watch(share_ptr self, const caf::actor_addr& proxy) {
  if (self->state.watched.insert(proxy).second)
    self->monitor(proxy);
}

// The fetch of `v` failed or its proxy went: the first waiter fetches instead.
void hand_over(share_ptr self, uint64_t v) {
  auto i = self->state.fetches.find(v);
  if (i == self->state.fetches.end())
    return;
  auto& f = i->second;
  if (f.waiters.empty()) {
    self->state.fetches.erase(i);
    return;
  }
  auto next = std::move(f.waiters.front());
  f.waiters.pop_front();
  f.fetcher = next.proxy;
  watch(self, next.proxy);
  next.reply.deliver(share_reply{true, {}});
}

caf::behavior pull_share(share_ptr self, ps_actor shard) {
  self->state.shard = shard.address();
  self->monitor(shard);
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    if (dm.source == st.shard) {  // its job is over here: waiters fetch alone (and fail as the shard is gone)
      for (auto& [v, f] : st.fetches)
        for (auto& w : f.waiters)
          w.reply.deliver(share_reply{true, {}});
      self->quit();
      return;
    }
    st.watched.erase(dm.source);
    std::vector<uint64_t> orphaned;
    for (auto& [v, f] : st.fetches)
      if (f.fetcher == dm.source)
        orphaned.push_back(v);
    for (auto v : orphaned)
      hand_over(self, v);
  });
  return {
    [=](pull_atom, uint64_t v) -> caf::result<share_reply> {
      auto& st = self->state;
      auto proxy = caf::actor_cast<caf::actor_addr>(self->current_sender());
      auto i = st.fetches.find(v);
      if (i == st.fetches.end()) {
        st.fetches[v].fetcher = proxy;
        watch(self, proxy);
        return share_reply{true, {}};
      }
      auto rp = self->make_response_promise();
      i->second.waiters.push_back({proxy, rp});
      return caf::delegated<share_reply>{};
    },
    [=](fetched_atom, uint64_t v, weights& w) {
      auto& st = self->state;
      auto i = st.fetches.find(v);
      if (i == st.fetches.end())
        return;
      for (auto& waiting : i->second.waiters)
        waiting.reply.deliver(share_reply{false, w});  // one buffer, shared: weights are read-only
      st.fetches.erase(i);
    },
    [=](fetch_failed_atom, uint64_t v) { hand_over(self, v); },
  };
}

}  // namespace

caf::actor spawn_pull_share(caf::actor_system& sys, const ps_actor& shard) {
  return sys.spawn(pull_share, shard);
}

}  // namespace syncpoint::cluster
