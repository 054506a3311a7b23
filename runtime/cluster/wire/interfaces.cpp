#include "runtime/cluster/wire/interfaces.hpp"

#include "runtime/cluster/dataplane/shm_ring.hpp"
#include "runtime/job/job_parts.hpp"

#include <syncpoint/train.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <typeinfo>

namespace syncpoint::cluster {

void register_cluster_messages(caf::actor_system_config& cfg) {
  register_messages(cfg);
  cfg.add_message_type<job_config>("job_config");
  cfg.add_message_type<credential>("credential");
  cfg.add_message_type<node_hello>("node_hello");
  cfg.add_message_type<worker_spec>("worker_spec");
  cfg.add_message_type<shard_spec>("shard_spec");
  cfg.add_message_type<node_status>("node_status");
  cfg.add_message_type<job_status>("job_status");
  cfg.add_message_type<cluster_status>("cluster_status");
  cfg.add_message_type<job_result>("job_result");
  cfg.add_message_type<client_actor>("client_actor");
  cfg.add_message_type<follower_actor>("follower_actor");
  cfg.add_message_type<node_actor>("node_actor");
  cfg.add_message_type<job_actor>("job_actor");
  cfg.add_message_type<head_actor>("head_actor");
  cfg.add_message_type<sweep_cell_order>("sweep_cell_order");
  cfg.add_message_type<std::vector<sweep_cell_order>>("std::vector<sweep_cell_order>");
  cfg.add_message_type<cell_order>("cell_order");
  cfg.add_message_type<cell_chunk>("cell_chunk");
  cfg.add_message_type<cell_event>("cell_event");
  cfg.add_message_type<cell_sink_actor>("cell_sink_actor");
  cfg.add_message_type<sweep_client_actor>("sweep_client_actor");
  cfg.add_message_type<sweep_actor>("sweep_actor");
  cfg.add_message_type<managed_actor>("managed_actor");
}

std::string make_token() {
  std::random_device rd;
  char hex[33];
  std::snprintf(hex, sizeof hex, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  return hex;
}

const std::string& schema_fingerprint() {
  // The mangled names of the handle types spell out every message signature
  // (atoms by value, struct names), and are stable for one ABI.
  static const std::string value = [] {
    std::string text = std::to_string(wire_version);
    for (const char* name : {typeid(head_actor).name(), typeid(node_actor).name(),
                             typeid(client_actor).name(), typeid(job_actor).name(),
                             typeid(ps_actor).name(), typeid(worker_actor).name(),
                             typeid(coordinator_actor).name(), typeid(evaluator_actor).name(),
                             typeid(tracer_actor).name(), typeid(driver_actor).name(),
                             typeid(sweep_actor).name(), typeid(sweep_client_actor).name(),
                             typeid(follower_actor).name()})
      text += name;
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : text) {
      h ^= c;
      h *= 1099511628211ull;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return std::string(hex);
  }();
  return value;
}

run_clock clock_of(caf::actor_clock::time_point now, caf::actor_clock::time_point origin) {
  using std::chrono::nanoseconds;
  return {std::chrono::duration_cast<nanoseconds>(now - origin).count(),
          std::chrono::duration_cast<nanoseconds>(origin.time_since_epoch()).count(), machine_boot_id()};
}

caf::actor_clock::time_point origin_here(const run_clock& c, caf::actor_clock::time_point now) {
  if (!c.boot.empty() && c.boot == machine_boot_id())
    return caf::actor_clock::time_point{std::chrono::duration_cast<caf::actor_clock::time_point::duration>(
      std::chrono::nanoseconds(c.origin_ns))};
  return now - std::chrono::nanoseconds(c.elapsed_ns);
}

int64_t unix_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string launch_rank(const node_status& n) {
  if (n.rank < 0)
    return "-";
  return (n.launcher.empty() ? std::string() : n.launcher + " ") + std::to_string(n.rank);
}

std::string to_string(job_stage s) {
  switch (s) {
    case job_stage::starting: return "starting";
    case job_stage::running: return "running";
    case job_stage::done: return "done";
    case job_stage::failed: return "failed";
    case job_stage::stopped: return "stopped";
  }
  return "?";
}

bool is_final(job_stage s) {
  return s == job_stage::done || s == job_stage::failed || s == job_stage::stopped;
}

run_result run_result_of(const job_config& cfg, job_result& r) {
  auto result = make_result(with_limits(cfg), r.iter_cost_ms, std::move(r.outcome));
  result.summary.resumed_from = r.resumed_from;
  result.summary.resumed_at_s = r.resumed_at_s;
  return result;
}

bool valid_node_name(const std::string& name) {
  return !name.empty() && name.size() <= max_node_name &&
         std::all_of(name.begin(), name.end(), [](char c) { return c >= 32 && c < 127; });
}

}  // namespace syncpoint::cluster
