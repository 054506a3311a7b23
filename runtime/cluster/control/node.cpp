#include "runtime/cluster/control/node.hpp"

#include <syncpoint/worker_loop.hpp>

#include "runtime/cluster/control/cell_host.hpp"
#include "runtime/cluster/wire/connect.hpp"
#include "runtime/job/job_parts.hpp"

#include <algorithm>
#include <map>

namespace syncpoint::cluster {

namespace {

struct node_state {
  node_config cfg;
  std::string token = make_token();  // the head must send it back with every job request
  bool joined = false;
  std::vector<worker_actor> workers;
  std::vector<ps_actor> shards;  // PS shards of jobs placed here (they take no slot)
  std::vector<hosted_cell> cells;  // sweeps' cells running here, a slot each
  std::map<caf::actor_addr, std::vector<caf::actor>> proxies;  // by worker: its bulk-channel proxies
  static inline const char* name = "node";
};

using node_ptr = node_actor::stateful_pointer<node_state>;

int used_slots(const node_state& st) {
  return static_cast<int>(st.workers.size() + std::count_if(st.cells.begin(), st.cells.end(), takes_slot));
}

// Leaves with the node's workers.
void leave(node_ptr self, const std::string& why, caf::error reason = caf::none, int32_t code = 0) {
  auto& st = self->state;
  for (auto& w : st.workers)
    self->send_exit(w, caf::exit_reason::user_shutdown);
  st.workers.clear();
  for (auto& kv : st.proxies)
    for (auto& proxy : kv.second)
      self->send_exit(proxy, caf::exit_reason::user_shutdown);
  st.proxies.clear();
  for (auto& s : st.shards)
    self->send_exit(s, caf::exit_reason::user_shutdown);
  st.shards.clear();
  for (auto& c : st.cells)
    kill_cell(c);
  st.cells.clear();
  if (st.cfg.on_leave)
    st.cfg.on_leave(why, code);
  self->quit(reason ? std::move(reason) : caf::error{caf::exit_reason::normal});
}

// Jobs come from the head only: from its process, with the token this node
// gave it (CAF does not authenticate the sender, the token does).
caf::error check_head(node_ptr self, const std::string& token) {
  auto from = caf::actor_cast<caf::actor_addr>(self->current_sender());
  if (!from || from.node() != self->state.cfg.head.node() || !same_secret(token, self->state.token))
    return make_error(sp_error::not_a_member,
                      "node " + self->state.cfg.name + ": jobs are taken from the head only");
  return caf::none;
}

// The job's training set from this node's data folder (cached: one at a time).
job_config load(node_ptr self, job_config cfg) {
  auto& st = self->state;
  if (cfg.dataset == "fashion-mnist")
    cfg.data_dir = st.cfg.data_dir;
  auto& kept = *st.cfg.loaded;  // (this process's: a node started again after its head's loss keeps it)
  if (!kept.train || kept.key != data_key(cfg)) {
    kept.train.reset();  // at most one data set in memory
    kept.train = std::make_shared<const dataset>(load_job_data(cfg).train);
    set_torch_threads(1);  // parallelism comes from the workers, one core each (as in one process)
    kept.key = data_key(cfg);
  }
  return cfg;
}

caf::result<int64_t> prepare(node_ptr self, const std::string& token, const job_config& job) {
  if (auto err = check_head(self, token))
    return err;
  try {
    load(self, job);
    return self->state.cfg.loaded->train->size;
  } catch (const std::exception& e) {
    return make_error(sp_error::bad_input, "node " + self->state.cfg.name + ": " + e.what());
  }
}

caf::result<worker_actor> spawn_one(node_ptr self, const std::string& token, worker_spec& spec) {
  auto& st = self->state;
  if (auto err = check_head(self, token))
    return err;
  if (used_slots(st) >= st.cfg.slots)
    return make_error(sp_error::bad_input, "node " + st.cfg.name + " has no free slot (" +
                                             std::to_string(st.cfg.slots) + " in use)");
  try {
    auto cfg = load(self, spec.plan.cfg);
    auto origin = origin_here(spec.clock, self->clock().now());
    auto timeout = caf::duration{seconds(cfg.request_timeout_s)};
    auto ps = spec.ps;
    std::vector<caf::actor> proxies;
    // The proxies it starts with, by the copy each reaches: a worker that joins after a copy was made
    // again starts with that copy, and the coordinator's news of it then finds its proxy here.
    auto given = std::make_shared<std::map<caf::actor_addr, ps_actor>>();
    if (st.cfg.plane && spec.bulk_key != 0) {  // shards of other processes over the bulk channel
      auto p = st.cfg.plane->proxied(spec.ps, spec.id, spec.bulk_key, st.cfg.head_host);
      for (size_t k = 0; k < spec.ps.copies.size() && k < p.ps.copies.size(); ++k)
        for (size_t r = 0; r < spec.ps.copies[k].size() && r < p.ps.copies[k].size(); ++r)
          if (spec.ps.copies[k][r] && p.ps.copies[k][r] != spec.ps.copies[k][r])
            (*given)[spec.ps.copies[k][r].address()] = p.ps.copies[k][r];
      ps = std::move(p.ps);
      proxies = std::move(p.proxies);
      std::string bulk;
      for (auto k : p.on_bulk)
        bulk += (bulk.empty() ? "" : ", ") + std::to_string(k);
      if (!bulk.empty())
        p.notes.push_back((p.on_bulk.size() > 1 ? "shards " : "shard ") + bulk + " on the bulk channel" +
                          (p.in_memory.empty()                       ? ""
                           : p.in_memory.size() == p.on_bulk.size() ? ", through shared memory"
                                                                    : ", some through shared memory"));
      for (auto& note : p.notes)
        if (st.cfg.on_note)
          st.cfg.on_note("worker " + std::to_string(spec.id) + ": " + note);
    }
    auto wc = worker_for(spec.plan, spec.id, spec.iter_cost_ms, st.cfg.loaded->train, ps, spec.tracer, origin, timeout);
    if (st.cfg.plane && spec.bulk_key != 0)  // a copy made in a lost one's place: on the bulk channel too
      wc.reach_copy = [plane = st.cfg.plane, id = spec.id, key = spec.bulk_key, head_host = st.cfg.head_host,
                       on_note = st.cfg.on_note, given](ps_actor copy, const std::string& bulk, uint64_t floats) {
        if (auto had = given->find(copy.address()); had != given->end())
          return had->second;
        auto p = plane->proxy_for(copy, bulk, floats, "a new shard copy", id, key, head_host);
        if (!p.note.empty() && on_note)
          on_note("worker " + std::to_string(id) + ": " + p.note);
        return p.proxy ? p.proxy : copy;
      };
    if (spec.resumed)
      wc.resume = std::make_shared<const saved_worker>(std::move(spec.resume));
    auto w = spawn_worker(self->system(), std::move(wc));
    self->monitor(w);
    st.workers.push_back(w);
    if (!proxies.empty())
      st.proxies.emplace(w.address(), std::move(proxies));
    return w;
  } catch (const std::exception& e) {
    return make_error(sp_error::bad_input, "node " + st.cfg.name + ": " + e.what());
  }
}

caf::result<ps_actor> spawn_shard(node_ptr self, const std::string& token, shard_spec& spec) {
  auto& st = self->state;
  if (auto err = check_head(self, token))
    return err;
  auto k = static_cast<size_t>(spec.shard);
  auto& b = spec.plan.bounds;
  if (spec.resumed && spec.initial.empty())  // (a copy made in a lost one's place: its state is its start)
    spec.initial = spec.resume.w;
  bool ordered = b.size() >= 2 && b.front() == 0 && std::is_sorted(b.begin(), b.end()) && b.back() > 0 &&
                 b.back() == spec.plan.model_size;
  if (!ordered || k + 1 >= b.size() || spec.initial.size() != b[k + 1] - b[k] || spec.plan.cfg.workers < 1 ||
      (spec.resumed && spec.resume.w.size() != spec.initial.size()))
    return make_error(sp_error::bad_input, "node " + st.cfg.name + ": shard " + std::to_string(k) +
                                             " does not match its bounds, its job or its saved state");
  auto origin = origin_here(spec.clock, self->clock().now());
  auto resume = spec.resumed ? std::make_shared<const saved_ps>(std::move(spec.resume)) : nullptr;
  ps_config ps_cfg;
  try {
    if (spec.plan.train_size < 1)
      throw config_error("no training examples");
    ps_cfg = shard_config(spec.plan, k, std::move(spec.initial), std::move(resume), spec.tracer, origin);
    if (!spec.tables.empty())
      set_tables(ps_cfg, spec.plan, std::move(spec.tables), std::move(spec.eval_keys));
  } catch (const std::exception& e) {
    return make_error(sp_error::bad_input, "node " + st.cfg.name + ": shard " + std::to_string(k) + ": " + e.what());
  }
  ps_cfg.bulk_keys = std::move(spec.bulk_keys);
  ps_cfg.copy = spec.copy;
  ps_cfg.serving = spec.serving;
  auto keys = ps_cfg.bulk_keys;
  auto shard = spawn_parameter_server(self->system(), std::move(ps_cfg));
  if (st.cfg.plane)
    st.cfg.plane->serve(shard, b[k + 1] - b[k], std::move(keys));
  self->monitor(shard);
  st.shards.push_back(shard);
  return shard;
}

caf::result<int32_t> run_cell(node_ptr self, const std::string& token, const cell_order& order,
                              const cell_sink_actor& sink) {
  auto& st = self->state;
  if (auto err = check_head(self, token))
    return err;
  if (used_slots(st) >= st.cfg.slots)  // not_now: the sweep places it again without counting a try
    return make_error(sp_error::not_now, "node " + st.cfg.name + " has no free slot (" +
                                           std::to_string(st.cfg.slots) + " in use)");
  auto cell = start_cell(self->system(), order, sink, st.cfg.train_exe, st.cfg.name);
  if (!cell.error.empty())
    return make_error(sp_error::bad_input, cell.error);
  self->monitor(cell.watch);
  auto pid = cell.pid;
  st.cells.push_back(std::move(cell));
  return static_cast<int32_t>(pid);
}

node_actor::behavior_type node(node_ptr self, node_config cfg) {
  self->state.cfg = std::move(cfg);
  auto& st = self->state;
  self->monitor(st.cfg.head);
  // Stopped (Ctrl-C on `syncpoint node`): leave as when the head says so,
  // the node's cells killed (their watches would wait for them otherwise).
  self->set_exit_handler([=](caf::exit_msg& em) { leave(self, "stopped", std::move(em.reason)); });
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    if (dm.source == st.cfg.head.address()) {
      leave(self, head_lost, caf::make_error(caf::sec::runtime_error, head_lost));
      return;
    }
    st.workers.erase(std::remove_if(st.workers.begin(), st.workers.end(),
                                    [&](const worker_actor& w) { return w.address() == dm.source; }),
                     st.workers.end());
    if (auto p = st.proxies.find(dm.source); p != st.proxies.end()) {  // a worker's proxies go with it
      for (auto& proxy : p->second)
        self->send_exit(proxy, caf::exit_reason::user_shutdown);
      st.proxies.erase(p);
    }
    st.shards.erase(std::remove_if(st.shards.begin(), st.shards.end(),
                                   [&](const ps_actor& s) { return s.address() == dm.source; }),
                    st.shards.end());
    st.cells.erase(std::remove_if(st.cells.begin(), st.cells.end(),
                                  [&](const hosted_cell& c) { return c.watch.address() == dm.source; }),
                   st.cells.end());
  });
  self->request(st.cfg.head, st.cfg.register_timeout, register_atom::value,
                node_hello{st.cfg.name, st.cfg.slots, schema_fingerprint(), st.token, st.cfg.secret,
                           st.cfg.plane ? st.cfg.plane->port() : uint16_t{0}, st.cfg.gpus, loop_names(), model_names(),
                           st.cfg.host, st.cfg.launcher, st.cfg.rank},
                node_actor{self})
    .then(
      [=](const std::string& name, bool journaled) {
        auto& st = self->state;
        st.joined = true;
        if (st.cfg.on_joined)
          st.cfg.on_joined(name, journaled);
        self->send(self, heartbeat_atom::value);
      },
      [=](caf::error& err) {
        auto why = err == caf::sec::request_timeout ? std::string("the head did not answer within the time limit")
                                                    : error_words(self->system(), err);
        leave(self, why, caf::make_error(caf::sec::runtime_error, why));
      });
  return {
    [=](prepare_atom, const credential& token, const job_config& job) -> caf::result<int64_t> {
      return prepare(self, token.text, job);
    },
    [=](spawn_atom, const credential& token, worker_spec& spec) -> caf::result<worker_actor> {
      return spawn_one(self, token.text, spec);
    },
    [=](spawn_atom, const credential& token, shard_spec& spec) -> caf::result<ps_actor> {
      return spawn_shard(self, token.text, spec);
    },
    [=](cell_atom, const credential& token, const cell_order& order,
        const cell_sink_actor& sink) -> caf::result<int32_t> {
      return run_cell(self, token.text, order, sink);
    },
    [=](stop_atom, const credential& token, uint64_t sweep) {
      if (!check_head(self, token.text))
        for (auto& c : self->state.cells)
          if (c.sweep == sweep)
            kill_cell(c);
    },
    [=](leave_atom, const credential& token, const std::string& reason, int32_t code) {
      if (!check_head(self, token.text))
        leave(self, reason, caf::none, code);
    },
    [=](heartbeat_atom) {
      auto& st = self->state;
      if (self->current_sender() != self->ctrl())
        return;
      self->send(st.cfg.head, heartbeat_atom::value, st.cfg.name);
      self->delayed_send(self, st.cfg.heartbeat, heartbeat_atom::value);
    },
  };
}

}  // namespace

node_actor spawn_node(caf::actor_system& sys, node_config cfg) {
  if (!cfg.loaded)
    cfg.loaded = std::make_shared<loaded_data>();
  return sys.spawn(node, std::move(cfg));
}

}  // namespace syncpoint::cluster
