#include "runtime/cluster/control/head.hpp"

#include <syncpoint/worker_loop.hpp>

#include "runtime/cluster/wire/connect.hpp"
#include "runtime/cluster/control/head_state.hpp"
#include "runtime/cluster/jobs/job_runner.hpp"
#include <syncpoint/train.hpp>
#include "runtime/job/checkpointing.hpp"
#include "runtime/job/devices.hpp"
#include "runtime/job/job_parts.hpp"

#include <caf/io/middleman.hpp>

#include <algorithm>
#include <chrono>
#include <map>

namespace syncpoint::cluster {

namespace head_detail {

std::string printable(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 64))
    out += c >= 32 && c < 127 ? c : '?';
  return s.size() > 64 ? out + "..." : out;
}

caf::error check_secret(head_ptr self, const std::string& given, const std::string& what) {
  auto& secret = self->state.cfg.secret;
  if (secret.empty() || same_secret(given, secret))
    return {};
  auto sender = self->current_sender();
  auto from = !sender ? std::string("an anonymous sender")
              : sender->node() != self->node() ? "CAF node " + to_string(sender->node())
                                               : std::string("this process");
  log(self, "refused " + what + " from " + from + ": " + (given.empty() ? "no token" : "wrong token"));
  return make_error(sp_error::unauthorized, std::string("the head refused it: ") +
                                              (given.empty() ? "no token given" : "wrong token") +
                                              " (give the cluster's --token or --token-file)");
}

void log(head_ptr self, const std::string& line) {
  if (self->state.cfg.log)
    self->state.cfg.log(line);
}

caf::error check_submission(head_ptr self, const std::string& secret, const std::string& kind, bool has_client) {
  if (auto err = check_secret(self, secret, "a " + kind + " submitted"))
    return err;
  if (self->state.shutting_down)
    return make_error(sp_error::bad_input, "the head is shutting down");
  if (!has_client)
    return make_error(sp_error::bad_input, "a " + kind + " needs a client to report to");
  return caf::none;
}

node_entry* find_node(head_ptr self, const std::string& name) {
  for (auto& n : self->state.nodes)
    if (n.status.name == name)
      return &n;
  return nullptr;
}

std::string bulk_endpoint_of(head_ptr self, const node_entry& n) {
  auto& plane = self->state.cfg.plane;
  if (!plane)
    return {};
  if (n.handle.node() == self->node())
    return ":" + std::to_string(plane->port());
  auto at = parse_endpoint(n.status.address);
  return at && n.bulk_port != 0 ? bulk_endpoint(at->host, n.bulk_port) : std::string();
}

std::string lacks_code(const node_entry& n, const std::string& loop, const std::string& model) {
  auto listed = [](const std::vector<std::string>& names) {
    std::string out;
    for (auto& x : names)
      out += (out.empty() ? "" : ", ") + x;
    return out;
  };
  auto lacks = [&](const std::vector<std::string>& names, const std::string& what, const std::string& name) {
    if (std::find(names.begin(), names.end(), name) != names.end())
      return std::string();
    return "node '" + n.status.name + "' lacks the " + what + " '" + name + "' (its program registers " + listed(names) +
           "): start it from a program that registers it (docs/cluster.md, \"Your own node program\")";
  };
  auto why = lacks(n.loops, "loop", loop);
  // A model is registered by its name before any ':' ("tinylm:layers=4", "script:net.pt").
  return why.empty() ? lacks(n.models, "model", model.substr(0, model.find(':'))) : why;
}

}  // namespace head_detail

namespace {

using namespace head_detail;

caf::result<std::string, bool> on_register(head_ptr self, node_hello& hello, node_actor& node) {
  auto& st = self->state;
  if (st.shutting_down)
    return make_error(sp_error::bad_input, "the head is shutting down");
  if (auto err = check_secret(self, hello.secret.text, "node '" + printable(hello.name) + "' registering"))
    return err;
  if (hello.schema != schema_fingerprint())
    return make_error(sp_error::bad_input,
                      "node '" + printable(hello.name) + "' was built from another message schema (its " +
                        printable(hello.schema) + ", the head's " + schema_fingerprint() +
                        "): run the same syncpoint build on every machine");
  if (!valid_node_name(hello.name))
    return make_error(sp_error::bad_input, "a node's name must be 1 to " + std::to_string(max_node_name) +
                                             " printable characters, not '" + printable(hello.name) + "'");
  for (auto* shown : {&hello.host, &hello.launcher})  // what status and the dashboard show
    if (!shown->empty() && !valid_node_name(*shown))
      return make_error(sp_error::bad_input, "node '" + hello.name + "' gives a host or launcher of more than " +
                                               std::to_string(max_node_name) + " printable characters: '" +
                                               printable(*shown) + "'");
  if (hello.slots < 1 || hello.slots > 4096)
    return make_error(sp_error::bad_input, "node '" + hello.name + "' offers " +
                                             std::to_string(hello.slots) + " slots (1..4096)");
  for (size_t i = 0; i < hello.gpus.size(); ++i)
    if (hello.gpus[i] < 0 || hello.gpus[i] > 63 ||
        std::find(hello.gpus.begin(), hello.gpus.begin() + static_cast<std::ptrdiff_t>(i), hello.gpus[i]) !=
          hello.gpus.begin() + static_cast<std::ptrdiff_t>(i))
      return make_error(sp_error::bad_input, "node '" + hello.name + "' offers GPU " + std::to_string(hello.gpus[i]) +
                                               " twice or out of 0..63");
  if (auto* taken = find_node(self, hello.name))
    return make_error(sp_error::bad_input, "a node named '" + hello.name +
                                             "' is already registered (at " +
                                             taken->status.address + ")");
  if (!node || caf::actor_cast<caf::actor_addr>(self->current_sender()) != node.address())
    return make_error(sp_error::not_a_member, "a node registers itself, not another actor");
  node_entry e;
  e.handle = node;
  e.token = hello.token.text;
  e.bulk_port = hello.bulk_port;
  e.loops = hello.loops;
  e.models = hello.models;
  e.status.name = hello.name;
  e.status.slots = hello.slots;
  e.status.gpus = hello.gpus;
  e.status.host = hello.host;
  e.status.launcher = hello.launcher;
  e.status.rank = hello.rank;
  e.status.up_since_ms = e.status.last_heartbeat_ms = unix_ms();
  bool local = node.node() == self->node();
  e.status.address = local ? "local (head)" : to_string(node.node());
  st.nodes.push_back(e);
  self->monitor(node);
  if (!local) {  // learn the host and port the node connected from
    auto mm = self->system().middleman().actor_handle();
    auto name = hello.name;
    self->request(mm, std::chrono::seconds(5), caf::get_atom::value, node.node())
      .then([=](const caf::node_id&, const std::string& host, uint16_t port) {
        auto& st = self->state;
        auto* n = find_node(self, name);
        if (!n || n->handle != node)
          return;  // (left meanwhile)
        n->status.address = host + ":" + std::to_string(port);
        log(self, "node '" + name + "' is at " + host + ":" + std::to_string(port));
        // The running jobs place copies made again here, and workers that reach it, on its bulk
        // channel: this process's, not the one before it under that name (its port is gone).
        if (auto at = bulk_endpoint_of(self, *n); !at.empty())
          for (auto& [id, job] : st.jobs)
            if (job.runner && !is_final(job.status.state))
              self->send(job.runner, bulk_atom::value, credential{st.cfg.control_token}, name, at);
      }, [](caf::error&) {});
  }
  auto gpus = hello.gpus.empty() ? std::string() : " and GPUs " + gpu_names(hello.gpus);
  log(self, "node '" + hello.name + "' joined with " + std::to_string(hello.slots) + (hello.slots == 1 ? " slot" : " slots") + gpus);
  journal_nodes(self);
  try_restore(self);  // a job of the journal waits for this node: it comes before elastic jobs short of slots
  offer_slots(self, hello.name, elastic_jobs(self));
  return {hello.name, st.journal.has_value()};
}

caf::result<uint64_t, credential, bool> on_submit(head_ptr self, job_config& cfg, client_actor& client,
                                                   const std::string& secret, follower_actor& follower) {
  if (auto err = check_submission(self, secret, "job", static_cast<bool>(client)))
    return err;
  if (cfg.clock != clock_kind::real)
    return make_error(sp_error::bad_input,
                      "virtual time runs in one process: use 'syncpoint train --clock virtual'");
  auto started = start_job(self, std::move(cfg), client, follower);
  if (!started)
    return started.error();
  return {started->id, credential{std::move(started->stop_token)}, self->state.journal.has_value()};
}

// The submitter ends its job early (Ctrl-C on `syncpoint submit`): the job
// stops as a limit would stop it, and its outcome still goes to the client.
caf::result<bool> on_stop(head_ptr self, uint64_t id, const std::string& token, const std::string& reason) {
  auto& st = self->state;
  if (auto r = st.restoring.find(id); r != st.restoring.end() && same_secret(token, r->second.journal.stop_token)) {
    auto why = printable(reason) + " (before it went on from its checkpoint)";  // it waited for its nodes
    log(self, "job " + std::to_string(id) + " stopped: " + why);
    end_unrestored(self, id, r->second.relay, job_stage::stopped, why);
    st.restoring.erase(r);
    return true;
  }
  auto i = st.jobs.find(id);
  if (i == st.jobs.end() || !same_secret(token, i->second.stop_token)) {
    log(self, "refused to stop job " + std::to_string(id) + ": not its submitter's token");
    return make_error(sp_error::not_a_member, "only the job's submitter stops it");
  }
  if (is_final(i->second.status.state))
    return false;
  log(self, job_name(id, i->second) + " stopping: " + printable(reason));
  self->send(i->second.handle, stop_atom::value, credential{st.cfg.control_token}, printable(reason));
  return true;
}

// The submitter's observers ask job `id` for an evaluation or a mark (`ts`):
// relayed to its runner with the head's secret, as a stop is.
template <class Atom, class... Ts>
caf::result<bool> relay_to_job(head_ptr self, Atom what, uint64_t id, const std::string& token, const Ts&... xs) {
  auto& st = self->state;
  auto i = st.jobs.find(id);
  if (i == st.jobs.end() || !i->second.runner || !same_secret(token, i->second.stop_token))
    return make_error(sp_error::not_a_member,
                      "only the job's submitter asks it for an evaluation, a mark or a checkpoint");
  if (is_final(i->second.status.state))
    return false;
  self->send(i->second.runner, what, credential{st.cfg.control_token}, xs...);
  return true;
}

void on_down(head_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  for (auto i = st.nodes.begin(); i != st.nodes.end(); ++i)
    if (i->handle.address() == dm.source) {
      bool left = !dm.reason || dm.reason == caf::exit_reason::normal
                  || dm.reason == caf::exit_reason::user_shutdown;
      log(self, "node '" + i->status.name + "' " +
                  (left ? std::string("left") : "was lost: " + self->system().render(dm.reason)));
      st.nodes.erase(i);  // its workers leave their jobs through the coordinators' monitors
      journal_nodes(self);
      return;
    }
  for (auto& kv : st.jobs)  // a relay ended: it handed the outcome over, or its submitter went
    if (kv.second.relay && kv.second.relay.address() == dm.source) {
      kv.second.relay = submitter_relay_actor{};
      maybe_done_shutting_down(self);
      return;
    }
  for (auto& kv : st.restoring)  // a reattached submitter went before its job went on: it stops there
    if (kv.second.relay.address() == dm.source) {
      std::string why = "its submitter went away before the job went on from its checkpoint";
      auto id = kv.first;
      log(self, "job " + std::to_string(id) + " stopped: " + why);
      end_unrestored(self, id, kv.second.relay, job_stage::stopped, why);  // (the relay is gone: only the journal)
      st.restoring.erase(id);
      return;
    }
  for (auto& kv : st.jobs)
    if (kv.second.handle.address() == dm.source) {
      kv.second.handle_ended = true;
      if (!is_final(kv.second.status.state)) {  // it died without its outcome: say so
        kv.second.status.state = job_stage::failed;
        auto why = "the job's runner on the head stopped: " + self->system().render(dm.reason);
        journal_state(self, kv.first, job_stage::failed, &why);
        self->send(kv.second.client, finished_atom::value, job_result{job_stage::failed, why, 0, {}});
      }
      release_slots(self, kv.second);
      maybe_done_shutting_down(self);
      return;
    }
}

void on_heartbeat(head_ptr self, const std::string& name) {
  try_restore(self);  // (the head sends itself one at the rejoin deadline)
  auto* n = find_node(self, name);
  if (n && caf::actor_cast<caf::actor_addr>(self->current_sender()) == n->handle.address())
    n->status.last_heartbeat_ms = unix_ms();
}

caf::result<cluster_status> status_of(head_ptr self, const std::string& secret) {
  if (auto err = check_secret(self, secret, "a status request"))
    return err;
  cluster_status out;
  for (auto& n : self->state.nodes)
    out.nodes.push_back(n.status);
  for (auto& kv : self->state.jobs)
    out.jobs.push_back(kv.second.status);
  for (auto& kv : self->state.restoring) {
    auto& cfg = kv.second.journal.plan.cfg;
    out.jobs.push_back({kv.first, cfg.protocol, cfg.workers, 0, -1, job_stage::starting});
  }
  std::sort(out.jobs.begin(), out.jobs.end(), [](auto& a, auto& b) { return a.id < b.id; });
  return out;
}

// A job's runner reports its status; a final one frees its slots.
void on_job_status(head_ptr self, const std::string& token, uint64_t id, job_status& status) {
  auto& st = self->state;
  auto i = st.jobs.find(id);
  if (!same_secret(token, st.cfg.control_token) || i == st.jobs.end() ||
      caf::actor_cast<caf::actor_addr>(self->current_sender()) != i->second.handle.address())
    return;
  bool was_final = is_final(i->second.status.state);
  auto was = i->second.status.state;
  i->second.status = std::move(status);
  if (was != i->second.status.state)
    journal_state(self, id, i->second.status.state);
  if (!was_final && is_final(i->second.status.state)) {
    release_slots(self, i->second);
    log(self, job_name(id, i->second) + " " + to_string(i->second.status.state));
    maybe_done_shutting_down(self);
    offer_freed_slots(self);
  }
}

// The head's own process ends it: every job stopped, their outcomes sent, then the answer.
caf::result<bool> on_shutdown(head_ptr self, const std::string& token, int32_t code) {
  auto& st = self->state;
  if (!same_secret(token, st.cfg.control_token))
    return make_error(sp_error::not_a_member, "only the head's own process shuts it down");
  if (!st.shutting_down)
    st.leave_code = code;
  st.shutting_down = true;
  auto rp = self->make_response_promise<bool>();
  st.shutdown_waiters.push_back(rp);
  for (auto& kv : st.jobs)
    if (!is_final(kv.second.status.state))
      self->send(kv.second.handle, stop_atom::value, credential{st.cfg.control_token}, std::string("the head is shutting down"));
  for (auto& kv : std::exchange(st.restoring, {}))  // never went on: stopped where they stood
    end_unrestored(self, kv.first, kv.second.relay, job_stage::stopped,
                   "the head shut down before the job could go on from its checkpoint");
  for (auto& kv : st.jobs)  // the outcomes still go to their submitters before the head ends
    if (kv.second.relay)
      self->send(kv.second.relay, leave_atom::value);
  maybe_done_shutting_down(self);
  return rp;
}

// A table: each message to the handler that takes it.
head_actor::behavior_type head(head_ptr self, head_config cfg) {
  self->state.cfg = std::move(cfg);
  self->set_down_handler([=](caf::down_msg& dm) { on_down(self, dm); });
  restore_jobs(self);
  return {
    [=](register_atom, node_hello& hello, node_actor& node) -> caf::result<std::string, bool> {
      return on_register(self, hello, node);
    },
    [=](heartbeat_atom, const std::string& name) { on_heartbeat(self, name); },
    [=](status_atom, const credential& secret) -> caf::result<cluster_status> { return status_of(self, secret.text); },
    [=](submit_atom, job_config& cfg, client_actor& client, const credential& secret,
        follower_actor& follower) -> caf::result<uint64_t, credential, bool> {
      return on_submit(self, cfg, client, secret.text, follower);
    },
    [=](reattach_atom, uint64_t id, const credential& token, client_actor& client) -> caf::result<bool> {
      return on_reattach(self, id, token.text, client);
    },
    [=](finished_atom, const credential& token, uint64_t id, job_stage state, const std::string& why) {
      if (same_secret(token, self->state.cfg.control_token))  // (a relay of this head's)
        journal_state(self, id, state, &why);
    },
    [=](stop_atom, uint64_t id, const credential& token, const std::string& reason) -> caf::result<bool> {
      return on_stop(self, id, token.text, reason);
    },
    [=](eval_atom, uint64_t id, const credential& token) -> caf::result<bool> {
      return relay_to_job(self, eval_atom::value, id, token.text);
    },
    [=](mark_atom, uint64_t id, const credential& token, const std::string& note, double value)
      -> caf::result<bool> {
      return relay_to_job(self, mark_atom::value, id, token.text, note, value);
    },
    [=](checkpoint_atom, uint64_t id, const credential& token, const std::string& why) -> caf::result<bool> {
      return relay_to_job(self, checkpoint_atom::value, id, token.text, why);
    },
    [=](job_atom, const credential& token, uint64_t id, job_status& status) {
      on_job_status(self, token.text, id, status);
    },
    [=](sweep_atom, std::vector<sweep_cell_order>& cells, sweep_client_actor& client,
        const credential& secret) -> caf::result<uint64_t, credential> {
      return on_sweep(self, cells, client, secret.text);
    },
    [=](slots_atom, const credential& token, uint64_t id, node_actor& node, int32_t n) {
      on_slots(self, token.text, id, node, n);
    },
    [=](shutdown_atom, const credential& token, int32_t code) -> caf::result<bool> {
      return on_shutdown(self, token.text, code);
    },
  };
}

}  // namespace

head_actor spawn_head(caf::actor_system& sys, head_config cfg) {
  return sys.spawn(head, std::move(cfg));
}

}  // namespace syncpoint::cluster
