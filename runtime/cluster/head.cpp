#include "runtime/cluster/head.hpp"

#include <syncpoint/worker_loop.hpp>

#include "runtime/cluster/connect.hpp"
#include "runtime/cluster/head_state.hpp"
#include "runtime/cluster/job_runner.hpp"
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
  return why.empty() ? lacks(n.models, "model", model) : why;
}

}  // namespace head_detail

namespace {

using namespace head_detail;

// "3 free on nodes with GPUs (gpu-a: 2 of 4, cuda:0, cuda:1; gpu-b: 1 of 2, cuda:0)", or "none".
std::string gpu_offer(const std::vector<node_entry>& nodes) {
  int total = 0;
  std::string each;
  for (auto& n : nodes) {
    if (n.status.gpus.empty())
      continue;
    total += free_slots(n);
    each += (each.empty() ? "" : "; ") + n.status.name + ": " + std::to_string(free_slots(n)) + " of " +
            std::to_string(n.status.slots) + ", " + gpu_names(n.status.gpus);
  }
  if (each.empty())
    return "no node that offers any";
  return std::to_string(total) + " free on nodes with GPUs (" + each + ")";
}

caf::result<std::string> on_register(head_ptr self, node_hello& hello, node_actor& node) {
  auto& st = self->state;
  if (st.shutting_down)
    return make_error(sp_error::bad_input, "the head is shutting down");
  if (auto err = check_secret(self, hello.secret, "node '" + printable(hello.name) + "' registering"))
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
  e.token = hello.token;
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
        if (auto* n = find_node(self, name))
          n->status.address = host + ":" + std::to_string(port);
        log(self, "node '" + name + "' is at " + host + ":" + std::to_string(port));
      }, [](caf::error&) {});
  }
  auto gpus = hello.gpus.empty() ? std::string() : " and GPUs " + gpu_names(hello.gpus);
  log(self, "node '" + hello.name + "' joined with " + std::to_string(hello.slots) + (hello.slots == 1 ? " slot" : " slots") + gpus);
  offer_slots(self, hello.name, elastic_jobs(self));
  return hello.name;
}

caf::result<uint64_t, std::string> on_submit(head_ptr self, job_config& cfg, client_actor& client, const std::string& secret,
                                             follower_actor& follower) {
  auto& st = self->state;
  if (auto err = check_submission(self, secret, "job", static_cast<bool>(client)))
    return err;
  if (cfg.clock != clock_kind::real)
    return make_error(sp_error::bad_input,
                      "virtual time runs in one process: use 'syncpoint train --clock virtual'");
  cfg.out_dir.clear();  // the client writes the results on its side
  if (cfg.dataset == "fashion-mnist")
    cfg.data_dir = st.cfg.data_dir;
  // Where the workers go (free slots by node), decided before the plan: with
  // --ps-placement nodes, the shards spread over the workers' nodes.
  std::vector<int> free;
  std::string offer;
  for (auto& n : st.nodes) {
    free.push_back(n.status.slots - n.status.used);
    offer += (offer.empty() ? "" : ", ") + n.status.name + ": " + std::to_string(free.back()) +
             " of " + std::to_string(n.status.slots);
  }
  auto how = parse_placement(cfg.placement).value_or(st.cfg.default_placement);
  int total_free = 0;
  for (auto f : free)
    total_free += std::max(f, 0);
  // Elastic: start on the free slots, the rest as slots free up (a node joins, a job ends).
  int now = cfg.elastic ? std::min(cfg.workers, total_free) : cfg.workers;
  // --device cuda or cuda:N: only the slots of nodes that offer GPUs (node --gpus), each worker
  // on one of its node's; auto: so if such slots suffice, else the CPU anywhere.
  std::vector<std::vector<int32_t>> gpus;
  bool offered = false;
  for (auto& n : st.nodes) {
    gpus.push_back(n.status.gpus);
    offered = offered || !n.status.gpus.empty();
  }
  bool wants_gpu = cuda_index(cfg.device) >= -1;
  std::optional<gpu_placement> on_gpus;
  if (now > 0 && (wants_gpu || (cfg.device == "auto" && offered)))
    on_gpus = place_on_gpus(free, gpus, now, how, wants_gpu ? cfg.device : "cuda");
  auto where = on_gpus ? std::optional(on_gpus->nodes) : wants_gpu || now == 0 ? std::nullopt : place(free, now, how);
  std::vector<size_t> hosts;  // the workers' nodes, in the order of their first worker
  if (where)
    for (auto idx : *where)
      if (std::find(hosts.begin(), hosts.end(), idx) == hosts.end())
        hosts.push_back(idx);
  job_plan plan;
  std::optional<std::vector<std::vector<size_t>>> replica_hosts;  // --ps-replicas: per shard, its replicas' hosts
  std::shared_ptr<const dataset> test;
  std::shared_ptr<const resume_point> resume;
  try {
    validate(cfg);
    // With the workers: load_job_data also checks there are enough examples for them.
    auto key = data_key(cfg) + "|" + std::to_string(cfg.workers);
    if (!st.test || st.data_key != key) {
      auto data = load_job_data(cfg);
      st.train_size = data.train.size;
      st.test = std::make_shared<const dataset>(std::move(data.test));
      st.data_key = key;
    }
    test = st.test;
    if (wants_gpu && cfg.elastic)
      throw config_error("--elastic with --device " + cfg.device + ": an elastic job's later workers are not placed "
                         "on GPUs yet (docs/gpu.md)");
    if (wants_gpu && !on_gpus)
      throw config_error("--device " + cfg.device + ": the job needs " + std::to_string(cfg.workers) +
                         " worker slots on nodes that offer " + (cfg.device == "cuda" ? "GPUs" : cfg.device) +
                         " (node --gpus), and the cluster has " + gpu_offer(st.nodes));
    auto input = input_of(*test);
    auto m = make_model(cfg.model, input);
    // --ps-placement nodes (BytePS): the shards spread over the workers' nodes; else all on the head.
    auto shard_hosts = cfg.ps_placement == "nodes" ? static_cast<int32_t>(hosts.size()) : 1;
    plan_context ctx{st.train_size, m->size(), m->buffers(), shard_hosts, input};
    ctx.tensors = m->tensor_sizes().size();
    if (on_gpus)
      ctx.placed = on_gpus->devices;
    plan = make_plan(cfg, ctx);
    replica_hosts = place_replicas(cfg.ps_placement == "nodes" ? plan.shard_hosts : std::vector<int32_t>{},
                                   plan.shards(), hosts.size(), cfg.ps_replicas);
    if (where && !replica_hosts) {
      bool head = cfg.ps_placement != "nodes";
      auto have = hosts.size() + (head ? 1 : 0);
      throw config_error("--ps-replicas " + std::to_string(cfg.ps_replicas) + ": each shard's " +
                         std::to_string(cfg.ps_replicas + 1) + " copies need " + std::to_string(cfg.ps_replicas + 1) +
                         " hosts, one each, and the job has " + std::to_string(have) + " (" +
                         std::to_string(hosts.size()) + " node" + (hosts.size() == 1 ? "" : "s") +
                         " hosting its workers" + (head ? ", and the head" : "") + ")");
    }
    if (takes_checkpoints(plan.cfg))
      check_checkpointable(plan);
    if (!plan.cfg.resume_dir.empty())
      resume = std::make_shared<const resume_point>(load_resume_point(plan));
  } catch (const std::exception& e) {
    return make_error(sp_error::bad_input, std::string("head: ") + e.what());
  }
  if (where)  // a node runs the job's code only if its program registered it
    for (auto idx : hosts)
      if (auto why = lacks_code(st.nodes[idx], cfg.loop, cfg.model); !why.empty())
        return make_error(sp_error::bad_input, why);
  if (!where)
    return make_error(sp_error::bad_input,
                      "the job needs " + std::to_string(cfg.workers) + " worker slots but the cluster has " +
                        std::to_string(total_free) + " free" +
                        (st.nodes.empty() ? std::string(" (no node has joined)") : " (" + offer + ")") +
                        (cfg.elastic ? "; --elastic starts on one at least" : ""));
  auto id = st.next_job++;
  job_setup setup;
  setup.id = id;
  setup.plan = plan;
  setup.test = std::move(test);
  setup.resume = std::move(resume);
  setup.client = client;
  setup.follower = std::move(follower);
  setup.head = head_actor{self};
  setup.head_token = st.cfg.control_token;
  setup.plane = st.cfg.plane;
  setup.dashboard = st.cfg.dashboard;
  if (st.cfg.plane)  // each node's bulk endpoint, on the host the head sees it at
    for (auto& n : st.nodes) {
      bool local = n.handle.node() == self->node();
      auto at = parse_endpoint(n.status.address);
      if (local)
        setup.node_bulk[n.status.name] = ":" + std::to_string(st.cfg.plane->port());
      else if (at && n.bulk_port != 0)
        setup.node_bulk[n.status.name] = bulk_endpoint(at->host, n.bulk_port);
    }
  job_entry entry;
  entry.client = client;
  entry.stop_token = make_token();
  for (auto idx : *where) {
    auto& n = st.nodes[idx];
    setup.nodes.push_back(n.handle);
    setup.node_names.push_back(n.status.name);
    setup.node_tokens.push_back(n.token);
    ++n.status.used;
    ++entry.held[n.handle.address()];
  }
  if (plan.cfg.ps_placement == "nodes")
    for (auto host : plan.shard_hosts) {
      auto& n = st.nodes[hosts[static_cast<size_t>(host)]];
      setup.shard_nodes.push_back(n.handle);
      setup.shard_node_names.push_back(n.status.name);
      setup.shard_node_tokens.push_back(n.token);
    }
  if (replica_hosts && plan.cfg.ps_replicas > 0)
    for (auto& copies : *replica_hosts) {
      auto& nodes = setup.replica_nodes.emplace_back();
      auto& names = setup.replica_node_names.emplace_back();
      auto& tokens = setup.replica_node_tokens.emplace_back();
      for (auto host : copies) {
        auto& n = st.nodes[hosts[host]];
        nodes.push_back(n.handle);
        names.push_back(n.status.name);
        tokens.push_back(n.token);
      }
    }
  setup.nodes.resize(static_cast<size_t>(cfg.workers));  // vacant places: an invalid node
  setup.node_names.resize(setup.nodes.size());
  setup.node_tokens.resize(setup.nodes.size());
  entry.elastic = cfg.elastic;
  entry.loop = cfg.loop;
  entry.model = cfg.model;
  entry.status = {id, cfg.protocol, cfg.workers, 0, -1, job_stage::starting};
  entry.status.devices = plan.devices;
  entry.runner = spawn_job(self->system(), std::move(setup));
  entry.handle = entry.runner;
  self->monitor(entry.handle);
  auto stop_token = entry.stop_token;
  st.jobs.emplace(id, std::move(entry));
  log(self, "job " + std::to_string(id) + " submitted: " + cfg.protocol + ", " +
              std::to_string(cfg.workers) + " workers");
  return {id, std::move(stop_token)};
}

// The submitter ends its job early (Ctrl-C on `syncpoint submit`): the job
// stops as a limit would stop it, and its outcome still goes to the client.
caf::result<bool> on_stop(head_ptr self, uint64_t id, const std::string& token, const std::string& reason) {
  auto& st = self->state;
  auto i = st.jobs.find(id);
  if (i == st.jobs.end() || !same_secret(token, i->second.stop_token)) {
    log(self, "refused to stop job " + std::to_string(id) + ": not its submitter's token");
    return make_error(sp_error::not_a_member, "only the job's submitter stops it");
  }
  if (is_final(i->second.status.state))
    return false;
  log(self, job_name(id, i->second) + " stopping: " + printable(reason));
  self->send(i->second.handle, stop_atom::value, st.cfg.control_token, printable(reason));
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
  self->send(i->second.runner, what, st.cfg.control_token, xs...);
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
      return;
    }
  for (auto& kv : st.jobs)
    if (kv.second.handle.address() == dm.source) {
      if (!is_final(kv.second.status.state)) {  // it died without its outcome: say so
        kv.second.status.state = job_stage::failed;
        self->send(kv.second.client, finished_atom::value,
                   job_result{job_stage::failed, "the job's runner on the head stopped: " +
                                          self->system().render(dm.reason), 0, {}});
      }
      release_slots(self, kv.second);
      maybe_done_shutting_down(self);
      return;
    }
}

head_actor::behavior_type head(head_ptr self, head_config cfg) {
  self->state.cfg = std::move(cfg);
  self->set_down_handler([=](caf::down_msg& dm) { on_down(self, dm); });
  return {
    [=](register_atom, node_hello& hello, node_actor& node) -> caf::result<std::string> {
      return on_register(self, hello, node);
    },
    [=](heartbeat_atom, const std::string& name) {
      auto* n = find_node(self, name);
      if (n && caf::actor_cast<caf::actor_addr>(self->current_sender()) == n->handle.address())
        n->status.last_heartbeat_ms = unix_ms();
    },
    [=](status_atom, const std::string& secret) -> caf::result<cluster_status> {
      if (auto err = check_secret(self, secret, "a status request"))
        return err;
      cluster_status out;
      for (auto& n : self->state.nodes)
        out.nodes.push_back(n.status);
      for (auto& kv : self->state.jobs)
        out.jobs.push_back(kv.second.status);
      return out;
    },
    [=](submit_atom, job_config& cfg, client_actor& client, const std::string& secret,
        follower_actor& follower) -> caf::result<uint64_t, std::string> {
      return on_submit(self, cfg, client, secret, follower);
    },
    [=](stop_atom, uint64_t id, const std::string& token, const std::string& reason) -> caf::result<bool> {
      return on_stop(self, id, token, reason);
    },
    [=](eval_atom, uint64_t id, const std::string& token) -> caf::result<bool> {
      return relay_to_job(self, eval_atom::value, id, token);
    },
    [=](mark_atom, uint64_t id, const std::string& token, const std::string& note, double value)
      -> caf::result<bool> {
      return relay_to_job(self, mark_atom::value, id, token, note, value);
    },
    [=](checkpoint_atom, uint64_t id, const std::string& token, const std::string& why) -> caf::result<bool> {
      return relay_to_job(self, checkpoint_atom::value, id, token, why);
    },
    [=](job_atom, const std::string& token, uint64_t id, job_status& status) {
      auto& st = self->state;
      auto i = st.jobs.find(id);
      if (!same_secret(token, st.cfg.control_token) || i == st.jobs.end()
          || caf::actor_cast<caf::actor_addr>(self->current_sender()) != i->second.handle.address())
        return;
      bool was_final = is_final(i->second.status.state);
      i->second.status = std::move(status);
      if (!was_final && is_final(i->second.status.state)) {
        release_slots(self, i->second);
        log(self, job_name(id, i->second) + " " + to_string(i->second.status.state));
        maybe_done_shutting_down(self);
        offer_freed_slots(self);
      }
    },
    [=](sweep_atom, std::vector<sweep_cell_order>& cells, sweep_client_actor& client,
        const std::string& secret) -> caf::result<uint64_t, std::string> {
      return on_sweep(self, cells, client, secret);
    },
    [=](slots_atom, const std::string& token, uint64_t id, node_actor& node, int32_t n) {
      on_slots(self, token, id, node, n);
    },
    [=](shutdown_atom, const std::string& token, int32_t code) -> caf::result<bool> {
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
          self->send(kv.second.handle, stop_atom::value, st.cfg.control_token,
                     std::string("the head is shutting down"));
      maybe_done_shutting_down(self);
      return rp;
    },
  };
}

}  // namespace

head_actor spawn_head(caf::actor_system& sys, head_config cfg) {
  return sys.spawn(head, std::move(cfg));
}

}  // namespace syncpoint::cluster
