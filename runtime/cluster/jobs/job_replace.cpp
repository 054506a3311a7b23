// --ps-rereplicate on a cluster: the job runner is its coordinator's placer
// (actors/coordinator_replace.cpp). A copy of a shard lost with its node is
// spawned again on a live node that holds no other copy of that shard, from
// the state the shard's serving copy saved; once the coordinator has taken
// it in, it is the job's like any other copy: status shows it, and a restart
// places around it.
#include "runtime/cluster/jobs/job_state.hpp"

#include <algorithm>
#include <memory>

namespace syncpoint::cluster::detail {

namespace {

using copy_promise = caf::typed_response_promise<ps_actor, std::string, std::string>;

// Up to three nodes are tried, each one that failed left out of the next choice.
void try_place(job_ptr self, copy_promise rp, uint32_t k, uint32_t r, std::shared_ptr<const saved_ps> state,
               std::vector<caf::actor_addr> tried, int generation, uint64_t ask) {
  auto& st = self->state;
  auto host = host_for_copy(st, k, tried);
  if (!host) {
    rp.deliver(make_error(sp_error::bad_input, "no live node to place shard " + std::to_string(k) + "'s copy on"));
    return;
  }
  shard_spec spec{st.setup.plan, k, {}, true, *state, st.core.tracer, clock_of(self->clock().now(), st.origin),
                  st.bulk_keys};
  spec.copy = r;
  spec.serving = false;
  self->request(host->node, st.setup.spawn_timeout, spawn_atom::value, credential{host->token}, std::move(spec))
    .then(
      [=](ps_actor& copy) mutable {
        auto& st = self->state;
        if (st.ended() || st.generation != generation || st.phase != job_phase::running) {
          self->send_exit(copy, caf::exit_reason::user_shutdown);
          rp.deliver(make_error(sp_error::not_now, "the job's run ended meanwhile"));
          return;
        }
        if (st.withdrawn.erase(ask) > 0) {  // the coordinator no longer waits for it
          self->send_exit(copy, caf::exit_reason::user_shutdown);
          rp.deliver(make_error(sp_error::not_now, "the coordinator gave up on this copy"));
          return;
        }
        if (auto old = st.placed.find({k, r}); old != st.placed.end())  // (one asked for before, never taken in)
          self->send_exit(old->second.copy, caf::exit_reason::user_shutdown);
        st.placed[{k, r}] = {copy, host->node, host->name, host->token, ask};
        auto bulk = st.setup.node_bulk.find(host->name);
        rp.deliver(copy, st.setup.plane && bulk != st.setup.node_bulk.end() ? bulk->second : std::string(),
                   "node " + host->name);
      },
      [=](caf::error& err) mutable {
        tried.push_back(host->node.address());
        if (tried.size() < 3 && self->state.generation == generation) {
          say(self, "[job " + std::to_string(self->state.setup.id) + "] node " + host->name + " could not take "
                      "shard " + std::to_string(k) + "'s copy: " + self->system().render(err) + "; trying another");
          try_place(self, rp, k, r, state, tried, generation, ask);
        } else {
          rp.deliver(std::move(err));
        }
      });
}

}  // namespace

caf::result<ps_actor, std::string, std::string> place_copy(job_ptr self, uint32_t k, uint32_t r, saved_ps& state) {
  auto& st = self->state;
  auto& ps = st.core.ps;
  if (!from_coordinator(self) || st.phase != job_phase::running)
    return make_error(sp_error::not_now, "the job places shard copies for its running coordinator only");
  if (k >= ps.size() || ps.copies.empty() || r >= ps.copies[k].size())
    return make_error(sp_error::bad_input, "no copy " + std::to_string(r) + " of shard " + std::to_string(k));
  auto rp = self->make_response_promise<ps_actor, std::string, std::string>();
  auto ask = st.newest_ask[{k, r}] = ++st.asks;
  try_place(self, rp, k, r, std::make_shared<const saved_ps>(std::move(state)), {}, st.generation, ask);
  return rp;
}

void copy_placed(job_ptr self, uint32_t k, uint32_t r, const ps_actor& copy, bool installed) {
  auto& st = self->state;
  if (!from_coordinator(self))
    return;
  auto it = st.placed.find({k, r});
  if (!copy && !installed) {  // withdrawn: its newest ask for (k, r), answered or not (messages keep their order)
    auto ask = st.newest_ask.find({k, r});
    if (ask == st.newest_ask.end())
      return;
    if (it != st.placed.end() && it->second.ask == ask->second) {
      self->send_exit(it->second.copy, caf::exit_reason::user_shutdown);
      st.placed.erase(it);
    } else {
      st.withdrawn.insert(ask->second);  // (one that failed leaves its number here, unused)
    }
    return;
  }
  if (it == st.placed.end() || it->second.copy != copy)
    return;
  auto host = std::move(it->second);
  st.placed.erase(it);
  if (!installed || st.phase != job_phase::running)
    return;  // (the coordinator ended it)
  auto& ps = st.core.ps;
  ps.copies[k][r] = copy;
  auto bulk = st.setup.node_bulk.find(host.name);
  if (k < ps.copy_bulk.size() && r < ps.copy_bulk[k].size())
    ps.copy_bulk[k][r] = st.setup.plane && bulk != st.setup.node_bulk.end() ? bulk->second : std::string();
  self->monitor(copy);
  // Where it runs now: a later restart places around it, and a lost node takes it along.
  if (r == 0 && k < st.setup.shard_nodes.size()) {
    st.setup.shard_nodes[k] = host.node;
    st.setup.shard_node_names[k] = host.name;
    st.setup.shard_node_tokens[k] = host.token;
  } else if (r > 0 && k < st.setup.replica_nodes.size() && r - 1 < st.setup.replica_nodes[k].size()) {
    st.setup.replica_nodes[k][r - 1] = host.node;
    st.setup.replica_node_names[k][r - 1] = host.name;
    st.setup.replica_node_tokens[k][r - 1] = host.token;
  }
  self->monitor(host.node);
  if (k < st.copy_hosts.size() && r < st.copy_hosts[k].size())
    st.copy_hosts[k][r] = host.name;
  show_copies(self, k);
}

void end_placed_copies(job_ptr self) {
  for (auto& [slot, placed] : std::exchange(self->state.placed, {}))
    self->send_exit(placed.copy, caf::exit_reason::user_shutdown);
}

void show_copies(job_ptr self, size_t k) {
  auto& st = self->state;
  auto& ps = st.core.ps;
  std::string hosts;
  auto add = [&](size_t c) { hosts += (hosts.empty() ? "" : "+") + st.copy_hosts[k][c]; };
  for (size_t c = 0; c < ps.copies[k].size(); ++c)  // the serving copy first
    if (ps.copies[k][c] && ps.copies[k][c] == ps.shards[k])
      add(c);
  for (size_t c = 0; c < ps.copies[k].size(); ++c)
    if (ps.copies[k][c] && ps.copies[k][c] != ps.shards[k])
      add(c);
  if (k < st.status.shards.size())
    st.status.shards[k] = hosts.empty() ? "lost" : hosts;
  tell_head(self);
}

}  // namespace syncpoint::cluster::detail
