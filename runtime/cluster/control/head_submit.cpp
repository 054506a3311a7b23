// A job submitted to the head (or carried on by a head that came back):
// where its workers and shards go, its plan, and its runner.
#include "runtime/cluster/control/head_state.hpp"

#include "runtime/cluster/wire/connect.hpp"

#include <syncpoint/worker_loop.hpp>

#include "runtime/job/checkpointing.hpp"
#include "runtime/job/devices.hpp"
#include "runtime/job/job_parts.hpp"

#include <algorithm>

namespace syncpoint::cluster::head_detail {

namespace {

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

// A job's data set as the head keeps it (its cfg's data_dir is the head's).
head_data load_head_data(const job_config& cfg) {
  auto data = load_job_data(cfg);
  return {data.train.size, std::make_shared<const dataset>(std::move(data.test))};
}

// The data set a job of `cfg` needs: the last one loaded, the one being
// loaded for it, or loaded now. Throws config_error as load_job_data does.
void take_data(head_ptr self, const job_config& cfg) {
  auto& st = self->state;
  auto key = head_data_key(self, cfg);
  if (st.test && st.data_key == key)
    return;
  head_data data;
  if (st.preload.valid() && st.preload_key == key)
    data = std::exchange(st.preload, {}).get();
  else
    data = load_head_data(cfg);
  st.train_size = data.train_size;
  st.test = std::move(data.test);
  st.data_key = key;
}

}  // namespace

job_config on_head_data(head_ptr self, job_config cfg) {
  if (cfg.dataset == "fashion-mnist")
    cfg.data_dir = self->state.cfg.data_dir;
  return cfg;
}

// With the workers: load_job_data also checks there are enough examples for them.
std::string head_data_key(head_ptr self, const job_config& cfg) {
  return data_key(on_head_data(self, cfg)) + "|" + std::to_string(cfg.workers);
}

void preload_data(head_ptr self, const job_config& cfg) {
  auto& st = self->state;
  auto in = on_head_data(self, cfg);
  st.preload_key = head_data_key(self, in);
  st.preload = std::async(std::launch::async, [in] { return load_head_data(in); }).share();
}

namespace {

// Where a job's workers go (free slots by node), decided before the plan: with
// --ps-placement nodes, the shards spread over the workers' nodes.
struct worker_placement {
  std::string offer;  // "node-a: 2 of 4, node-b: 0 of 2"
  int total_free = 0;
  bool wants_gpu = false;
  std::optional<gpu_placement> on_gpus;
  std::optional<std::vector<size_t>> where;  // each worker's node; none if they do not fit
  std::vector<size_t> hosts;                 // the workers' nodes, in the order of their first worker
};

worker_placement place_workers(head_ptr self, const job_config& cfg) {
  auto& st = self->state;
  worker_placement out;
  std::vector<int> free;
  for (auto& n : st.nodes) {
    free.push_back(n.status.slots - n.status.used);
    out.offer += (out.offer.empty() ? "" : ", ") + n.status.name + ": " + std::to_string(free.back()) + " of " +
                 std::to_string(n.status.slots);
  }
  auto how = parse_placement(cfg.placement).value_or(st.cfg.default_placement);
  for (auto f : free)
    out.total_free += std::max(f, 0);
  // Elastic: start on the free slots, the rest as slots free up (a node joins, a job ends).
  int now = cfg.elastic ? std::min(cfg.workers, out.total_free) : cfg.workers;
  // --device cuda or cuda:N: only the slots of nodes that offer GPUs (node --gpus), each worker
  // on one of its node's; auto: so if such slots suffice, else the CPU anywhere.
  std::vector<std::vector<int32_t>> gpus;
  bool offered = false;
  for (auto& n : st.nodes) {
    gpus.push_back(n.status.gpus);
    offered = offered || !n.status.gpus.empty();
  }
  out.wants_gpu = cuda_index(cfg.device) >= -1;
  if (now > 0 && (out.wants_gpu || (cfg.device == "auto" && offered)))
    out.on_gpus = place_on_gpus(free, gpus, now, how, out.wants_gpu ? cfg.device : "cuda");
  out.where = out.on_gpus                    ? std::optional(out.on_gpus->nodes)
              : out.wants_gpu || now == 0 ? std::nullopt
                                          : place(free, now, how);
  if (out.where)
    for (auto idx : *out.where)
      if (std::find(out.hosts.begin(), out.hosts.end(), idx) == out.hosts.end())
        out.hosts.push_back(idx);
  return out;
}

// The job made concrete on these nodes: its plan, data and resume point.
struct planned_job {
  job_plan plan;
  std::optional<std::vector<std::vector<size_t>>> replica_hosts;  // --ps-replicas: per shard, its replicas' hosts
  std::shared_ptr<const dataset> test;
  std::shared_ptr<const resume_point> resume;
};

// Throws config_error (or what loading the data throws) naming what cannot run.
planned_job plan_job(head_ptr self, const job_config& cfg, const worker_placement& placed) {
  auto& st = self->state;
  planned_job out;
  validate(cfg);
  take_data(self, cfg);
  out.test = st.test;
  if (placed.wants_gpu && cfg.elastic)
    throw config_error("--elastic with --device " + cfg.device + ": an elastic job's later workers are not placed "
                       "on GPUs yet (docs/gpu.md)");
  if (placed.wants_gpu && !placed.on_gpus)
    throw config_error("--device " + cfg.device + ": the job needs " + std::to_string(cfg.workers) +
                       " worker slots on nodes that offer " + (cfg.device == "cuda" ? "GPUs" : cfg.device) +
                       " (node --gpus), and the cluster has " + gpu_offer(st.nodes));
  auto input = input_of(*out.test);
  input.loss = cfg.loss;
  auto m = make_model(cfg.model, input);
  auto& hosts = placed.hosts;
  // --ps-placement nodes (BytePS): the shards spread over the workers' nodes; else all on the head.
  auto shard_hosts = cfg.ps_placement == "nodes" ? static_cast<int32_t>(hosts.size()) : 1;
  plan_context ctx{st.train_size, m->size(), m->buffers(), shard_hosts, input};
  ctx.tensors = m->tensor_sizes().size();
  if (placed.on_gpus)
    ctx.placed = placed.on_gpus->devices;
  out.plan = make_plan(cfg, ctx);
  check_tables(out.plan, m->tables());  // specs that work, no replicas, --ps-memory
  out.replica_hosts = place_replicas(cfg.ps_placement == "nodes" ? out.plan.shard_hosts : std::vector<int32_t>{},
                                     out.plan.shards(), hosts.size(), cfg.ps_replicas);
  if (placed.where && !out.replica_hosts) {
    bool head = cfg.ps_placement != "nodes";
    auto have = hosts.size() + (head ? 1 : 0);
    throw config_error("--ps-replicas " + std::to_string(cfg.ps_replicas) + ": each shard's " +
                       std::to_string(cfg.ps_replicas + 1) + " copies need " + std::to_string(cfg.ps_replicas + 1) +
                       " hosts, one each, and the job has " + std::to_string(have) + " (" +
                       std::to_string(hosts.size()) + " node" + (hosts.size() == 1 ? "" : "s") +
                       " hosting its workers" + (head ? ", and the head" : "") + ")");
  }
  if (takes_checkpoints(out.plan.cfg))
    check_checkpointable(out.plan);
  if (!out.plan.cfg.resume_dir.empty())
    out.resume = std::make_shared<const resume_point>(load_resume_point(out.plan));
  return out;
}

// The nodes of the job's workers, shards and replicas into its setup, their slots taken.
void assign_nodes(head_ptr self, job_setup& setup, job_entry& entry, const worker_placement& placed,
                  const planned_job& planned, int workers) {
  auto& st = self->state;
  auto& plan = planned.plan;
  for (auto idx : *placed.where) {
    auto& n = st.nodes[idx];
    setup.nodes.push_back(n.handle);
    setup.node_names.push_back(n.status.name);
    setup.node_tokens.push_back(n.token);
    ++n.status.used;
    ++entry.held[n.handle.address()];
  }
  if (plan.cfg.ps_placement == "nodes")
    for (auto host : plan.shard_hosts) {
      auto& n = st.nodes[placed.hosts[static_cast<size_t>(host)]];
      setup.shard_nodes.push_back(n.handle);
      setup.shard_node_names.push_back(n.status.name);
      setup.shard_node_tokens.push_back(n.token);
    }
  if (planned.replica_hosts && plan.cfg.ps_replicas > 0)
    for (auto& copies : *planned.replica_hosts) {
      auto& nodes = setup.replica_nodes.emplace_back();
      auto& names = setup.replica_node_names.emplace_back();
      auto& tokens = setup.replica_node_tokens.emplace_back();
      for (auto host : copies) {
        auto& n = st.nodes[placed.hosts[host]];
        nodes.push_back(n.handle);
        names.push_back(n.status.name);
        tokens.push_back(n.token);
      }
    }
  setup.nodes.resize(static_cast<size_t>(workers));  // vacant places: an invalid node
  setup.node_names.resize(setup.nodes.size());
  setup.node_tokens.resize(setup.nodes.size());
}

}  // namespace

caf::expected<started_job> start_job(head_ptr self, job_config cfg, client_actor client, follower_actor follower,
                                     restoring_job* restored) {
  auto& st = self->state;
  cfg = on_head_data(self, std::move(cfg));
  cfg.out_dir.clear();  // the client writes the results on its side
  auto placed = place_workers(self, cfg);
  planned_job planned;
  try {
    planned = plan_job(self, cfg, placed);
  } catch (const std::exception& e) {
    return make_error(sp_error::bad_input, std::string("head: ") + e.what());
  }
  if (placed.where)  // a node runs the job's code only if its program registered it
    for (auto idx : placed.hosts)
      if (auto why = lacks_code(st.nodes[idx], cfg.loop, cfg.model); !why.empty())
        return make_error(sp_error::bad_input, why);
  if (!placed.where)
    return make_error(sp_error::bad_input,
                      "the job needs " + std::to_string(cfg.workers) + " worker slots but the cluster has " +
                        std::to_string(placed.total_free) + " free" +
                        (st.nodes.empty() ? std::string(" (no node has joined)") : " (" + placed.offer + ")") +
                        (cfg.elastic ? "; --elastic starts on one at least" : ""));
  auto id = restored ? restored->journal.id : st.next_job++;
  job_setup setup;
  setup.id = id;
  setup.plan = planned.plan;
  setup.test = planned.test;
  setup.resume = planned.resume;
  setup.head = head_actor{self};
  setup.head_token = st.cfg.control_token;
  setup.plane = st.cfg.plane;
  setup.dashboard = st.cfg.dashboard;
  setup.follower = std::move(follower);
  for (auto& n : st.nodes)  // (a node whose address comes later, or that joins again, is told the job then)
    if (auto at = bulk_endpoint_of(self, n); !at.empty())
      setup.node_bulk[n.status.name] = at;
  job_entry entry;
  entry.stop_token = restored ? restored->journal.stop_token : make_token();
  // The runner reports to a relay: it hands the outcome over with a receipt, which a head shutting
  // down waits for, and with a journal it outlives the submitter's connection.
  entry.relay = restored ? restored->relay
                         : spawn_submitter_relay(self->system(), {id, client, head_actor{self}, st.cfg.control_token});
  if (!restored)
    self->monitor(entry.relay);
  setup.client = entry.relay;
  entry.client = entry.relay;
  assign_nodes(self, setup, entry, placed, planned, cfg.workers);
  entry.elastic = cfg.elastic;
  entry.loop = cfg.loop;
  entry.model = cfg.model;
  entry.status = {id, cfg.protocol, cfg.workers, 0, -1, job_stage::starting};
  entry.status.devices = planned.plan.devices;
  journal_started(self, id, setup, entry.stop_token, restored);
  entry.runner = spawn_job(self->system(), std::move(setup));
  entry.handle = entry.runner;
  self->monitor(entry.handle);
  auto stop_token = entry.stop_token;
  st.jobs.emplace(id, std::move(entry));
  if (!restored)
    log(self, "job " + std::to_string(id) + " submitted: " + cfg.protocol + ", " + std::to_string(cfg.workers) +
                " workers");
  return started_job{id, std::move(stop_token)};
}

}  // namespace syncpoint::cluster::head_detail
