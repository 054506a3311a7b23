// The cluster's typed interfaces and messages: a head that nodes join and
// jobs are submitted to, nodes that host workers, and the client that follows
// a submitted job. Everything here crosses processes through CAF's middleman.
//
//   node   -> head    register(hello, node) -> name        heartbeat(name)
//   anyone -> head    status(secret) -> cluster_status     submit(job, client, secret, follower) -> (job id, stop token)
//   client -> head    stop(job id, stop token, reason) -> true   (the submitter ends its job early)
//   client -> head    eval(job id, stop token) -> true, mark(job id, stop token, note, value) -> true
//                     (the submitter's observers: evaluate now, mark the trace; relayed to the job)
//   job    -> node    prepare(token, job) -> examples       (loads the data before the clock starts)
//   job    -> node    spawn(token, worker_spec) -> worker   (the job runs on the head)
//   job    -> node    spawn(token, shard_spec) -> PS shard  (--ps-placement nodes)
//   head   -> node    leave(token, reason)                  (the head is shutting down)
//   sweep  -> node    cell(token, order, sink) -> pid        stop(token, sweep)
//   node   -> sweep   cell(key, chunk) -> ack                cell(key, event)
//   sweep  -> client  cell(chunk) -> ack, cell(event)        (relayed: the submitter reaches the head only)
//   anyone -> head    sweep(cells, client, secret) -> (sweep id, stop token)
//
// Tokens (each a `credential`, never a plain string): CAF 0.17 does not
// authenticate senders (a peer past the handshake can name any actor as the
// source of a message it routes), so what only the head may tell a node
// carries the secret the node chose when it registered, and what only the
// head's own process may tell the head carries a secret that never leaves
// that process. A head given the cluster's token (--token)
// takes registrations (hello.secret), status and submit only with it.
//   job    -> client  progress(line), finished(job_result)
//   job    -> follower  start, progress(report), eval(result), phase(change) as the coordinator
//                     tells its driver, in its order (when the submission named a follower)
#pragma once

#include "core/interfaces.hpp"
#include "core/secret.hpp"  // same_secret: every token of the cluster is compared with it
#include "core/ps_group.hpp"
#include "runtime/job/job_plan.hpp"
#include <syncpoint/job_config.hpp>

#include <string>
#include <vector>

namespace syncpoint {
struct run_result;
}

namespace syncpoint::cluster {

using register_atom = caf::atom_constant<caf::atom("cl_reg")>;
using heartbeat_atom = caf::atom_constant<caf::atom("cl_beat")>;
using status_atom = caf::atom_constant<caf::atom("cl_status")>;
using submit_atom = caf::atom_constant<caf::atom("cl_submit")>;
using spawn_atom = caf::atom_constant<caf::atom("cl_spawn")>;
using prepare_atom = caf::atom_constant<caf::atom("cl_prep")>;
using leave_atom = caf::atom_constant<caf::atom("cl_leave")>;
using finished_atom = caf::atom_constant<caf::atom("cl_fin")>;
using job_atom = caf::atom_constant<caf::atom("cl_job")>;
using shutdown_atom = caf::atom_constant<caf::atom("cl_shutdn")>;
using grow_atom = caf::atom_constant<caf::atom("cl_grow")>;
using sweep_atom = caf::atom_constant<caf::atom("cl_sweep")>;
using cell_atom = caf::atom_constant<caf::atom("cl_cell")>;
using slots_atom = caf::atom_constant<caf::atom("cl_slots")>;
using reattach_atom = caf::atom_constant<caf::atom("cl_reatt")>;

/// A secret as a message carries it: a node's token, a job's stop token, the
/// cluster's token (--token), the head's own for its jobs and sweeps, its
/// control token. A type of its own, so that no message's secret can be taken
/// for one of its other strings (or a reason for a secret), and left out of
/// every message's text: CAF's to_string (logs, `render`) omits it.
struct credential {
  std::string text;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, credential& x) {
  return f(caf::meta::type_name("credential"), caf::meta::omittable(), x.text);
}
/// Whether `given` is `kept`, in constant time (core/secret.hpp's same_secret).
using syncpoint::same_secret;
inline bool same_secret(const credential& given, const std::string& kept) {
  return syncpoint::same_secret(given.text, kept);
}

/// What a node says when it joins.
struct node_hello {
  std::string name;
  int32_t slots = 0;      // workers it may host
  std::string schema;     // schema_fingerprint() of its build
  credential token;       // the head sends it back with every job request
  credential secret;      // the cluster's token (--token), when the head requires one
  uint16_t bulk_port = 0; // where its PS shards take bulk connections (0: none)
  std::vector<int32_t> gpus;  // the CUDA devices its workers may take (node --gpus; none: CPU only)
  std::vector<std::string> loops;   // the worker loops its program registers (a job's loop must be among them)
  std::vector<std::string> models;  // ... and the models
  std::string host;       // the machine's name, as it calls itself
  std::string launcher;   // what started it (syncpoint launch: slurm, openmpi, ...; "": by hand)
  int32_t rank = -1;      // its rank in that launched job (-1: none)
};

/// The run's origin as the head sends it to a node: the time since it, and
/// where the node shares the head's machine (the same boot), the origin
/// itself on the steady clock every process of that machine reads, so the
/// trace's times of co-located processes agree exactly (the round's critical
/// path, bench/round_path.py). Elsewhere the node's origin is late by the
/// message's flight.
struct run_clock {
  int64_t elapsed_ns = 0;  // time since the run's origin when the head sent this
  int64_t origin_ns = 0;   // the origin on the head's steady clock (its time since that clock's epoch)
  std::string boot;        // the head machine's boot id ("": unknown)
};

/// The clock the head sends for a run that began at `origin`.
run_clock clock_of(caf::actor_clock::time_point now, caf::actor_clock::time_point origin);

/// The run's origin on this process's clock.
caf::actor_clock::time_point origin_here(const run_clock& c, caf::actor_clock::time_point now);

/// A worker's part of a job, sent to the node that hosts it.
struct worker_spec {
  job_plan plan;            // the job's; its data_dir is the head's (a node loads from its own)
  int32_t id = 0;
  double iter_cost_ms = 0;
  ps_group ps;
  tracer_actor tracer;
  run_clock clock;
  bool resumed = false;     // continue from a checkpoint, where `resume` was
  saved_worker resume;
  uint64_t bulk_key = 0;    // what its pushes and pulls on the bulk channel carry (0: none)
};

/// A PS shard's part of a job, sent to the node that hosts it
/// (--ps-placement nodes). The node makes it a parameter_server over
/// [bounds[shard], bounds[shard + 1]) of the model.
struct shard_spec {
  job_plan plan;
  uint32_t shard = 0;             // [plan.bounds[shard], plan.bounds[shard + 1]) of the model
  std::vector<float> initial;     // the shard's slice of the weights
  bool resumed = false;           // continue from a checkpoint's part, `resume`
  saved_ps resume;
  tracer_actor tracer;
  run_clock clock;
  std::vector<uint64_t> bulk_keys;  // per worker, its key on the bulk channel
  uint32_t copy = 0;              // --ps-replicas: which copy of the shard (0: its primary)
  bool serving = true;            // false: made in a lost copy's place (--ps-rereplicate), a replica even as copy 0
  std::vector<table_spec> tables;  // a sparse model's tables (docs/sparse.md),
  std::vector<std::vector<uint64_t>> eval_keys;  // ... and the test set's keys this shard keeps, by table
};

/// Milliseconds since the Unix epoch (the times of status tables).
int64_t unix_ms();

struct node_status {
  std::string name;
  std::string address;      // host:port the head sees the node at
  int32_t slots = 0;
  int32_t used = 0;
  int64_t up_since_ms = 0;       // Unix time
  int64_t last_heartbeat_ms = 0; // Unix time
  std::vector<int32_t> gpus;     // what it offers GPU workers (node --gpus)
  std::string host;              // the machine's name, as the node calls itself
  std::string launcher;          // syncpoint launch's launcher ("": started by hand)
  int32_t rank = -1;             // its rank in the launched job (-1: none)
};

/// A launched node's rank as status shows it: "slurm 2"; "-" for a node started by hand.
std::string launch_rank(const node_status& n);

/// Where a job is; written as its word in status lines, JSON, the dashboard and /metrics.
enum class job_stage : uint8_t { starting, running, done, failed, stopped };

/// "starting", "running", "done", "failed", "stopped"
std::string to_string(job_stage s);

/// Whether a job at `s` has ended: done, failed or stopped.
bool is_final(job_stage s);

/// What the head runs for a submitter: a training job, or a sweep (its
/// cells each a `syncpoint train` of its own on a node's slot).
enum class job_kind : uint8_t { training, sweep };

struct job_status {
  uint64_t id = 0;
  std::string protocol;     // a training job's ("" for a sweep)
  int32_t workers = 0;
  double progress = 0;      // fraction of the sample budget
  double accuracy = -1;     // last evaluation
  job_stage state = job_stage::starting;
  std::vector<std::string> shards;  // where each PS shard runs: "head" or a node's name
  std::vector<std::string> devices; // per worker: where it computes ("cpu", "cuda:0", ...)
  job_kind kind = job_kind::training;
};

/// What status and the dashboard show in a job's protocol column: its protocol, or "sweep".
inline std::string shown_protocol(const job_status& s) {
  return s.kind == job_kind::sweep ? "sweep" : s.protocol;
}

struct cluster_status {
  std::vector<node_status> nodes;
  std::vector<job_status> jobs;
};

/// The end of a submitted job, as the submitting client receives it.
struct job_result {
  job_stage state = job_stage::done;  // done, failed or stopped
  std::string message;      // why it failed or stopped ("" when done)
  double iter_cost_ms = 0;
  run_outcome outcome;      // empty when the job never started
  std::string resumed_from; // the checkpoint it resumed from (empty: none)
  double resumed_at_s = -1;
};

/// `r`'s run as a run in one process would give it (its summary and trace),
/// for the submitter's --out and the head's runs folder alike; `r.outcome` is
/// moved from.
run_result run_result_of(const job_config& cfg, job_result& r);

/// One cell of a sweep (`syncpoint sweep --head`): its `train` options.
struct sweep_cell_order {
  uint32_t index = 0;
  std::string name;
  std::vector<std::string> args;
};

/// A cell placed on a node; `key` is what the node's reports on it carry.
struct cell_order {
  uint64_t sweep = 0;
  uint32_t index = 0, attempt = 0;
  std::vector<std::string> args;
  std::string key;
};

/// A piece (at most max_cell_chunk bytes) of one of a cell's files, on its way to the submitter.
struct cell_chunk {
  uint32_t index = 0, attempt = 0;
  std::string file;   // one of cell_files (runtime/studies/sweep.hpp)
  uint64_t offset = 0;
  std::string bytes;
};
inline constexpr size_t max_cell_chunk = size_t{1} << 20;

/// What became of a cell: started, lost (its node died; placed again), done or failed.
struct cell_event {
  std::string kind;
  uint32_t index = 0, attempt = 0;
  std::string node, message;
  double seconds = 0;              // the attempt's wall time, when it ended
  int32_t running = 0, waiting = 0;  // the sweep's cells after the event
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sweep_cell_order& x) {
  return f(caf::meta::type_name("sweep_cell_order"), x.index, x.name, x.args);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cell_order& x) {
  return f(caf::meta::type_name("cell_order"), x.sweep, x.index, x.attempt, x.args, x.key);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cell_chunk& x) {
  return f(caf::meta::type_name("cell_chunk"), x.index, x.attempt, x.file, x.offset, x.bytes);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cell_event& x) {
  return f(caf::meta::type_name("cell_event"), x.kind, x.index, x.attempt, x.node, x.message, exact(x.seconds),
           x.running, x.waiting);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_hello& x) {
  return f(caf::meta::type_name("node_hello"), x.name, x.slots, x.schema, x.token, x.secret, x.bulk_port, x.gpus, x.loops,
           x.models, x.host, x.launcher, x.rank);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, run_clock& x) {
  return f(caf::meta::type_name("run_clock"), x.elapsed_ns, x.origin_ns, x.boot);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_spec& x) {
  return f(caf::meta::type_name("worker_spec"), x.plan, x.id, exact(x.iter_cost_ms), x.ps, x.tracer,
           x.clock, x.resumed, x.resume, x.bulk_key);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shard_spec& x) {
  return f(caf::meta::type_name("shard_spec"), x.plan, x.shard, float_block{x.initial}, x.resumed, x.resume,
           x.tracer, x.clock, x.bulk_keys, x.copy, x.serving, x.tables, x.eval_keys);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_status& x) {
  return f(caf::meta::type_name("node_status"), x.name, x.address, x.slots, x.used, x.up_since_ms,
           x.last_heartbeat_ms, x.gpus, x.host, x.launcher, x.rank);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_status& x) {
  return f(caf::meta::type_name("job_status"), x.id, x.protocol, x.workers, exact(x.progress), exact(x.accuracy),
           x.state, x.shards, x.devices, x.kind);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cluster_status& x) {
  return f(caf::meta::type_name("cluster_status"), x.nodes, x.jobs);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_result& x) {
  return f(caf::meta::type_name("job_result"), x.state, x.message, exact(x.iter_cost_ms), x.outcome, x.resumed_from,
           exact(x.resumed_at_s));
}

/// Follows one submitted job (lives in the submitting process).
using client_actor = caf::typed_actor<
  caf::reacts_to<progress_atom, std::string>,
  caf::reacts_to<finished_atom, job_result>>;

/// Hears a followed job's run as its coordinator tells its driver, in that
/// order: start (the run began), each progress report whole, every
/// evaluation and phase change (the submitting process hands them to the
/// program's observers). A job's client may be its follower too.
using follower_actor = caf::typed_actor<
  caf::reacts_to<start_atom>,
  caf::reacts_to<progress_atom, progress_report>,
  caf::reacts_to<eval_atom, eval_result>,
  caf::reacts_to<phase_atom, phase_change>>;

/// Where a node sends a cell's files (each chunk acknowledged once the
/// submitter wrote it) and its end (done or failed), with the order's key.
using cell_sink_actor = caf::typed_actor<
  caf::replies_to<cell_atom, std::string, cell_chunk>::with<bool>,
  caf::reacts_to<cell_atom, std::string, cell_event>>;

/// Follows one sweep (lives in the `syncpoint sweep --head` process): the
/// cells' events and files, then finished(job_result).
using sweep_client_actor = client_actor::extend<
  caf::reacts_to<cell_atom, cell_event>,
  caf::replies_to<cell_atom, cell_chunk>::with<bool>>;

/// Hosts workers (one per `syncpoint node` process; the head may host one too).
using node_actor = caf::typed_actor<
  // (token, order, sink) runs `syncpoint train` for a sweep's cell in a slot -> its pid
  caf::replies_to<cell_atom, credential, cell_order, cell_sink_actor>::with<int32_t>,
  caf::reacts_to<stop_atom, credential, uint64_t>,  // (token, sweep) kills the sweep's cells here
  caf::replies_to<prepare_atom, credential, job_config>::with<int64_t>,
  caf::replies_to<spawn_atom, credential, worker_spec>::with<worker_actor>,
  caf::replies_to<spawn_atom, credential, shard_spec>::with<ps_actor>,
  caf::reacts_to<leave_atom, credential, std::string, int32_t>,  // (token, why, the exit code it leaves with)
  caf::reacts_to<heartbeat_atom>>;          // (to itself) time to beat

/// What the head tells any job it runs (a training job or a sweep): stop
/// (its secret, reason), and grow: (its secret, node, name, node token, free
/// slots) a node has free slots; a job short of them takes some, the reply is how many.
using managed_actor = caf::typed_actor<
  caf::reacts_to<stop_atom, credential, std::string>,
  caf::replies_to<grow_atom, credential, node_actor, std::string, credential, int32_t>::with<int32_t>>;

/// Runs one job on the head: the driver of its coordinator. From the head,
/// with its secret: evaluate now, mark the trace (note, value), take a
/// checkpoint (why): what the submitter and its observers ask for.
using job_actor = driver_actor::extend_with<managed_actor>::extend_with<copy_placer_actor>::extend<
  caf::reacts_to<eval_atom, credential>,
  caf::reacts_to<mark_atom, credential, std::string, double>,
  caf::reacts_to<checkpoint_atom, credential, std::string>,  // (secret, why): a checkpoint now
  caf::reacts_to<bulk_atom, credential, std::string, std::string>>;  // (secret, node, endpoint): where a node's bulk channel is now

/// Runs one sweep on the head: places its cells on free slots and relays their files.
using sweep_actor = managed_actor::extend_with<cell_sink_actor>::extend<
  caf::reacts_to<slots_atom, node_actor>,  // (to itself) a busy node's slot goes back after a pause
  caf::reacts_to<timeout_atom>>;           // (to itself) its client never ended after the outcome

/// The cluster manager that `syncpoint head` publishes.
/// What reads the cluster's status (the dashboard's hub): the head, seen through its status only.
using status_source_actor = caf::typed_actor<caf::replies_to<status_atom, credential>::with<cluster_status>>;

using head_actor = caf::typed_actor<
  // -> the name it joined under, and whether the head keeps a journal (head --state): a node
  // that loses such a head waits for it to come back (node --head-wait)
  caf::replies_to<register_atom, node_hello, node_actor>::with<std::string, bool>,
  caf::reacts_to<heartbeat_atom, std::string>,
  caf::replies_to<status_atom, credential>::with<cluster_status>,                   // (the cluster's token)
  // (the cluster's token, who hears every event: invalid for none) -> the job's id, the
  // token that stops it, known to the submitter only, and whether the head keeps a journal
  // (a submitter that loses such a head reattaches to it when it comes back)
  caf::replies_to<submit_atom, job_config, client_actor, credential, follower_actor>::with<uint64_t,
                                                                                           credential, bool>,
  // (job id, its stop token, the submitter's new client): after the head came back (head
  // --state), the job's lines and outcome go to this client; true: it will hear the outcome
  caf::replies_to<reattach_atom, uint64_t, credential, client_actor>::with<bool>,
  // (own relays, with the secret, job id, how it ended, why): a job's outcome, for the journal
  caf::reacts_to<finished_atom, credential, uint64_t, job_stage, std::string>,
  // (job id, its stop token, reason): end the job early; its outcome still goes to the client
  caf::replies_to<stop_atom, uint64_t, credential, std::string>::with<bool>,
  // (job id, its stop token[, note, value]): evaluate now, mark the trace; false once it ended
  caf::replies_to<eval_atom, uint64_t, credential>::with<bool>,
  caf::replies_to<mark_atom, uint64_t, credential, std::string, double>::with<bool>,
  // (job id, its stop token, why): a checkpoint now (into the job's checkpoint folder); false once it ended
  caf::replies_to<checkpoint_atom, uint64_t, credential, std::string>::with<bool>,
  caf::reacts_to<job_atom, credential, uint64_t, job_status>,  // (own job actors, with the secret)
  // (the cluster's token) a sweep's cells -> its id and stop token, as submit
  caf::replies_to<sweep_atom, std::vector<sweep_cell_order>, sweep_client_actor, credential>::with<uint64_t,
                                                                                                    credential>,
  // (own sweep actors, with the secret, sweep id, node, n): give back n slots of the node
  // (n = 0: offer the free slots again)
  caf::reacts_to<slots_atom, credential, uint64_t, node_actor, int32_t>,
  // (the head's control secret, the exit code its nodes leave with): end the jobs, tell the nodes
  caf::replies_to<shutdown_atom, credential, int32_t>::with<bool>>;

/// Registers the types above (and the job's, core/interfaces.hpp).
void register_cluster_messages(caf::actor_system_config& cfg);

/// A digest of every interface a node and the head exchange (their message
/// signatures as the compiler sees them) plus wire_version: two builds with
/// the same fingerprint speak the same schema.
const std::string& schema_fingerprint();

/// 128 random bits as hex: a secret for the tokens above.
std::string make_token();


/// A node's name: 1 to max_node_name printable ASCII characters (it shows in
/// logs and `syncpoint status`). The head refuses any other.
inline constexpr size_t max_node_name = 128;
bool valid_node_name(const std::string& name);

/// Bump when a message struct's fields change (interfaces are covered by the fingerprint).
inline constexpr int wire_version = 28;  // 28: every secret a `credential`, not a string; a sweep a job_kind of its own; 27: a job_config's testing fields in its internals, last; 26: a job_config's fields in declaration order (core/job_schema.hpp); 25: a sparse row block's values as one float block; 24: a head that comes back (head --state: reattach, the journal flag in the register and submit replies); 23: a snapshot names its request (a promoted replica answers it again); 22: replicated shards (ps_group copies, a replica's reports, --ps-replicas); 21: local work in proceed, a fragment's ranges in gradient_push; 20: a push says the bytes of its encoding (--compress); 19: a checkpoint on request (checkpoint_atom to the head and the job), the exit code a node leaves with; 18: a job's control messages and its observers' are structs (stop_request, job_started, ...); 17: a job's plan, not its options, goes to the nodes; 16: push_info and proceed say why a push was refused; shard_op

}  // namespace syncpoint::cluster
