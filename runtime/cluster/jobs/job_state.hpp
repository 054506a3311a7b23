// The state of one job on the head (runtime/cluster/jobs/job_runner.cpp) and the
// steps its restart after a lost shard (job_restart.cpp) shares with it.
// Internal to the job runner: nothing else includes it.
#pragma once

#include "runtime/cluster/jobs/job_runner.hpp"
#include "runtime/cluster/jobs/job_watch.hpp"
#include "runtime/job/job_parts.hpp"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace syncpoint::cluster::detail {

/// A job's life on the head, one phase at a time:
///   starting -> running -> ended                the nodes load the data, the actors are spawned, the run
///   running -> restarting -> starting           a lost shard: the old run ends, the new one resumes
///   any phase -> ended                          the outcome came, or the job was aborted
enum class job_phase : uint8_t { starting, running, restarting, ended };

struct job_state {
  job_setup setup;
  time_point origin;
  job_core core;
  std::vector<worker_actor> workers;  // by worker id, filled as nodes answer
  std::vector<bool> vacant;           // ids with no worker running or starting (elastic, or after a restart)
  std::vector<std::vector<std::string>> hosts;  // by worker id: the nodes it ran on, in order
  size_t spawned = 0;
  job_phase phase = job_phase::starting;
  bool ended() const { return phase == job_phase::ended; }
  bool client_gone = false;
  std::string stop_reason;
  std::string checkpoint_asked;  // a checkpoint asked for before the run started (again): sent at its start
  job_status status;
  std::vector<std::vector<std::string>> copy_hosts;  // --ps-replicas: per shard, each copy's host (status shows the live ones)
  // A shard's node died and the job goes on from its newest checkpoint: the
  // old actors whose end is awaited before it starts again (restarting).
  std::vector<caf::actor_addr> awaited;
  std::vector<caf::actor_addr> dead_nodes;  // nodes lost since the job started
  int restarts = 0;
  int generation = 0;  // bumped by a restart: answers to the old run's requests are void
  std::vector<uint64_t> bulk_keys;  // this run's, by worker id (empty: no bulk channel)
  watch_actor watch;                // the dashboard's watcher (none without a dashboard)
  // --ps-rereplicate: copies spawned in lost ones' places that the
  // coordinator has not yet taken in, by (shard, copy), and where they run.
  struct placed_copy {
    ps_actor copy;
    node_actor node;
    std::string name, token;
    uint64_t ask = 0;
  };
  std::map<std::pair<uint32_t, uint32_t>, placed_copy> placed;
  // The coordinator's asks for a copy, numbered as they come: each slot's
  // newest, and those the coordinator gave up on while a node still spawned
  // the copy (its request timed out), whose copy goes once it comes.
  uint64_t asks = 0;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> newest_ask;
  std::set<uint64_t> withdrawn;
  static inline const char* name = "job";
};

using job_ptr = job_actor::stateful_pointer<job_state>;

// job_runner.cpp
bool from_coordinator(job_ptr self);                // the current message is this run's coordinator's
void say(job_ptr self, const std::string& line);   // a progress line to the submitter
void tell_head(job_ptr self);                       // the job's status, to the head's table
void abort_job(job_ptr self, const std::string& why);
void stop_job(job_ptr self, const std::string& why);  // the coordinator ends the run early; its outcome still comes
void start(job_ptr self);                           // every worker answered: the run starts

// job_launch.cpp
void prepare(job_ptr self);                         // phase 1: every node loads the data set
void launch(job_ptr self);                          // phase 2: spawn the run (again, after a restart)
bool on_head(const job_state& st, size_t k);        // shard k runs on the head

/// What node `node` needs to spawn worker `id` now: its time since the run's origin.
worker_spec spec_for(job_ptr self, size_t id);
/// Has `node` load the job's data; `ready` once it holds the head's training
/// set, else `failed` with why (another data set, or no answer).
void prepare_node(job_ptr self, const node_actor& node, const std::string& token, const std::string& name,
                  std::function<void()> ready, std::function<void(const std::string&)> failed);

// job_down.cpp
/// Something the job monitors went: the client, the coordinator, a shard or a node.
void on_down(job_ptr self, const caf::down_msg& dm);

// job_grow.cpp
/// Elastic: a node with `free` slots joined. Up to that many vacant ids get a
/// worker there (once the node holds the data), which joins the running job.
/// Returns how many it takes.
int32_t grow(job_ptr self, node_actor node, const std::string& name, const std::string& node_token, int32_t free);

// job_replace.cpp
/// --ps-rereplicate: the coordinator asks for copy r of shard k in a lost
/// one's place, from `state`: spawned on host_for_copy's node -> the copy, its
/// bulk endpoint, the node's name.
caf::result<ps_actor, std::string, std::string> place_copy(job_ptr self, uint32_t k, uint32_t r, saved_ps& state);
/// ... and took it in (it is the job's from now on: status, restarts) or ended
/// it. An invalid `copy`, not installed: the coordinator gave up on its newest
/// ask for (k, r), and the copy that ask spawns, now or once it comes, goes.
void copy_placed(job_ptr self, uint32_t k, uint32_t r, const ps_actor& copy, bool installed);
/// Ends the copies spawned that the coordinator has not taken in (the run ends or restarts).
void end_placed_copies(job_ptr self);
/// Status's line for shard k: its live copies' hosts, the one that serves first ("lost": none).
void show_copies(job_ptr self, size_t k);

// job_restart.cpp
/// Where a new copy of shard k goes: a live node (not in `excluded`) that
/// holds no copy of k, the fewest copies first, shard hosts before worker
/// hosts; else any live node (two copies then share a host); none: nullopt.
struct copy_host {
  node_actor node;
  std::string name, token;
};
std::optional<copy_host> host_for_copy(const job_state& st, size_t k, const std::vector<caf::actor_addr>& excluded = {});
/// `node` is lost: its workers' ids become vacant, and each copy of a shard it
/// held moves to the surviving node that holds no other copy of that shard and
/// the fewest copies (shard hosts first, then worker hosts), else to the head.
void mark_dead(job_state& st, const caf::actor_addr& node);
/// Whether the newest checkpoint can replace a lost shard: checkpoints on, one
/// taken, the job not stopping, and fewer than three restarts in a row without
/// a new checkpoint.
bool can_restart(job_ptr self);
/// Shard k of the running job is gone: a restart from the newest checkpoint
/// when there is one to go on from, else the job fails naming the shard.
void shard_lost(job_ptr self, size_t k, const caf::error& reason);
/// The down of an actor of a restarting job's old run: the new run starts after the last.
void awaited_down(job_ptr self, const caf::actor_addr& who);

}  // namespace syncpoint::cluster::detail
