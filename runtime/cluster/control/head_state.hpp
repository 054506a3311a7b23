// The head's state and the helpers its parts share (head.cpp: nodes and
// jobs; head_slots.cpp: who holds which slots; head_sweep.cpp: sweeps).
// Internal to runtime/cluster.
#pragma once

#include <syncpoint/dataset.hpp>
#include "runtime/cluster/control/head.hpp"
#include "runtime/cluster/jobs/job_runner.hpp"
#include "runtime/cluster/jobs/submitter_relay.hpp"

#include <algorithm>
#include <future>
#include <map>
#include <memory>
#include <optional>

namespace syncpoint::cluster::head_detail {

struct node_entry {
  node_status status;
  node_actor handle;
  std::string token;  // the node accepts job requests with it
  uint16_t bulk_port = 0;  // where its shards take bulk connections (0: none)
  std::vector<std::string> loops;   // what its program registers: a job's workers go only where their loop is
  std::vector<std::string> models;
};

/// The node's slots neither used nor offered to a job.
inline int32_t free_slots(const node_entry& n) { return std::max(0, n.status.slots - n.status.used); }

struct job_entry {
  job_status status;
  managed_actor handle;  // a training job (job_runner) or a sweep (sweep_runner)
  job_actor runner;      // the same, when a training job
  client_actor client;
  std::string stop_token;  // the submitter stops its job with it
  // Slots held on each node (by its actor, not its name: a node that died and
  // joined again under the same name starts afresh), until the job ends.
  std::map<caf::actor_addr, int> held;
  bool elastic = false;
  std::string loop, model;  // a training job's: its later workers go only to nodes whose program has both
  submitter_relay_actor relay;  // a training job's: what its runner reports to (the client is then the relay)
  bool handle_ended = false;  // its runner's down came (a sweep's ends once its client read the outcome)
};

/// A job of the journal that was running when the head was lost: it goes on
/// from its newest checkpoint once its nodes are back, or at the rejoin deadline.
struct restoring_job {
  journal_job journal;
  submitter_relay_actor relay;  // its submitter reattaches here
};

/// What the head keeps of a job's data set: the count of training examples, and the test set.
struct head_data {
  int64_t train_size = 0;
  std::shared_ptr<const dataset> test;
};

struct head_state {
  head_config cfg;
  std::vector<node_entry> nodes;    // in the order they joined
  std::map<uint64_t, job_entry> jobs;
  uint64_t next_job = 1;
  bool shutting_down = false;
  int32_t leave_code = 0;  // the exit code the nodes are told to leave with (the first shutdown's)
  // The last data set loaded for a job (a recurring job does not reload it).
  std::string data_key;
  int64_t train_size = 0;
  std::shared_ptr<const dataset> test;
  // A restored job's data set, loaded on another thread while its nodes join
  // again (its key as data_key's above): its start need not wait for it.
  std::string preload_key;
  std::shared_future<head_data> preload;
  std::vector<caf::typed_response_promise<bool>> shutdown_waiters;
  std::optional<head_journal> journal;  // head --state: what the journal holds (none: no journal)
  std::map<uint64_t, restoring_job> restoring;
  int64_t rejoin_deadline_ms = 0;  // the restored jobs wait for their nodes until then
  static inline const char* name = "head";
};

using head_ptr = head_actor::stateful_pointer<head_state>;

void log(head_ptr self, const std::string& line);

/// A peer's words for a log line: printable ASCII only, at most 64 characters.
std::string printable(const std::string& s);

/// Without the cluster's token a request is refused, and the head logs who tried.
caf::error check_secret(head_ptr self, const std::string& given, const std::string& what);

/// What a job or a sweep ("job", "sweep") needs before the head takes it:
/// the cluster's token, a head not shutting down, a client to report to.
caf::error check_submission(head_ptr self, const std::string& secret, const std::string& kind, bool has_client);

node_entry* find_node(head_ptr self, const std::string& name);
/// Where a job's workers reach node n's bulk channel: on the host the head
/// sees it at (empty: no bulk channel, or the node's address not known yet).
std::string bulk_endpoint_of(head_ptr self, const node_entry& n);

/// What a node's program lacks of a job's code (its loop, then its model), in
/// words that name both; "" when it registers both.
std::string lacks_code(const node_entry& n, const std::string& loop, const std::string& model);

/// "job 3" or "sweep 4", for log lines.
inline std::string job_name(uint64_t id, const job_entry& job) {
  return (job.status.kind == job_kind::sweep ? "sweep " : "job ") + std::to_string(id);
}

/// `cfg` reading its data set where this head keeps it (--data, for Fashion-MNIST).
job_config on_head_data(head_ptr self, job_config cfg);

/// The key of the data set a job of `cfg` needs on this head (as start_job loads it).
std::string head_data_key(head_ptr self, const job_config& cfg);

/// Loads the data set of a job of `cfg`, on another thread, so that its start
/// does not wait for it (a restored job's, while its nodes join again).
void preload_data(head_ptr self, const job_config& cfg);

/// The job's slots go back to their nodes.
void release_slots(head_ptr self, job_entry& job);

/// Shutting down: once no job runs, tell the nodes and answer the waiters.
void maybe_done_shutting_down(head_ptr self);

/// A node's free slots go to the running elastic jobs (and sweeps) short of
/// them, one after the other (each answers how many it took).
void offer_slots(head_ptr self, const std::string& node_name, std::vector<uint64_t> jobs);

/// The running elastic jobs and sweeps, in the order they were submitted.
std::vector<uint64_t> elastic_jobs(head_ptr self);

/// Slots freed: they go to the elastic jobs and sweeps short of them (but
/// `except`, a sweep that gave them back because none of its cells waits).
void offer_freed_slots(head_ptr self, uint64_t except = 0);

/// A job accepted: placed, its runner spawned (`restored`: the journal's job
/// going on from its newest checkpoint, with its id, stop token and relay).
struct started_job {
  uint64_t id = 0;
  std::string stop_token;
};
caf::expected<started_job> start_job(head_ptr self, job_config cfg, client_actor client, follower_actor follower,
                                     restoring_job* restored = nullptr);

// The journal (head_restore.cpp). Each does nothing without --state.

/// Writes the journal as the head's state now has it (a failure is logged: the jobs go on).
void save_journal(head_ptr self);

/// The nodes changed: the journal lists the ones registered now.
void journal_nodes(head_ptr self);

/// Job `id` started (or went on from a checkpoint) with this setup.
void journal_started(head_ptr self, uint64_t id, const job_setup& setup, const std::string& stop_token,
                     const restoring_job* restored);

/// Job `id` is now at `state`; `outcome`, when given, says how it ended.
void journal_state(head_ptr self, uint64_t id, job_stage state, const std::string* outcome = nullptr);

/// At the start of a head with a journal: the jobs that were running wait
/// for their nodes (or fail, with no checkpoint to go on from).
void restore_jobs(head_ptr self);

/// The restored jobs whose nodes are back (or whose wait is over) go on.
void try_restore(head_ptr self);

/// A restored job that will not go on (stopped, failed, or its submitter
/// gone) ends where it stood: the journal says how, and its relay hands the
/// outcome to a submitter that listens, then ends (a later reattach gets the
/// journal's words). The caller takes it out of `restoring`.
void end_unrestored(head_ptr self, uint64_t id, const submitter_relay_actor& relay, job_stage state,
                    const std::string& why);

/// A submitter that lost the head reattaches to job `id`.
caf::result<bool> on_reattach(head_ptr self, uint64_t id, const std::string& token, client_actor& client);

/// `syncpoint sweep --head`: runs the cells on free slots (head_sweep.cpp).
caf::result<uint64_t, credential> on_sweep(head_ptr self, std::vector<sweep_cell_order>& cells,
                                            sweep_client_actor& client, const std::string& secret);

/// A sweep gives back `n` slots of `node`, offered to the other jobs (n = 0:
/// offers the free slots again, to the sweep too).
void on_slots(head_ptr self, const std::string& token, uint64_t id, const node_actor& node, int32_t n);

}  // namespace syncpoint::cluster::head_detail
