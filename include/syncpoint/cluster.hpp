/// \file
/// A job on a cluster (`syncpoint head` and its `syncpoint node`s), submitted
/// from a program's own actor system, with actors of the program following it
/// from this machine: the same job_observer_actor a one-process job takes
/// (<syncpoint/job.hpp>). They hear the run's evaluations, progress and
/// phase changes as the head relays them, in the coordinator's order, and
/// their stop, evaluation and mark requests go to the job through the head,
/// with the job's stop token (CAF does not authenticate senders, so nothing
/// here talks to the job's actors directly).
///
/// ```cpp
/// syncpoint::submit_options opts;
/// opts.head = "10.0.0.5:4242";
/// opts.token = cluster_token;                      // if the head has one (--token)
/// caf::actor_system_config sys_cfg;
/// syncpoint::configure_submitter(sys_cfg, opts);   // the middleman, TLS, messages
/// caf::actor_system sys{sys_cfg};
/// opts.observers = {sys.spawn(my_observer)};       // a job_observer_actor, as for job::spawn
/// cfg.clock = syncpoint::clock_kind::real;         // a cluster job runs in wall time
/// syncpoint::cluster_run r = syncpoint::submit(sys, cfg, opts);  // writes cfg.out_dir as train() does
/// std::cout << r.state << " " << (r.ran ? r.result.summary.final_accuracy : 0.0) << "\n";
/// opts.observers.clear();  // `sys` waits for the actors it has handles to when it ends
/// ```
#pragma once

#include <syncpoint/interfaces.hpp>
#include <syncpoint/train.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace syncpoint {

/// Where and how to submit a job, and who follows it here.
struct submit_options {
  std::string head;   ///< the head's "HOST:PORT" ("[::1]:4242" for IPv6)
  std::string token;  ///< the cluster's token (the head's --token); "" for a head without one
  /// For a head that runs TLS (--tls): this machine's certificate (PEM). The
  /// three TLS files are given all three, or none.
  std::string tls_cert;
  std::string tls_key;  ///< this machine's private key (PEM)
  std::string tls_ca;   ///< the CA the cluster's certificates are signed by (PEM)
  /// Told of the run as a one-process job tells them (job_observer_actor):
  /// start (with a handle whose stop, eval, mark and checkpoint go through the head),
  /// every evaluation, progress report and phase change, and why it ended.
  /// They may live in any actor system of this process. One that fails
  /// stops the job; the result then says "failed" with user_actor_failed.
  /// An evaluation or mark asked for before the run started (or while the
  /// head restarts it after a lost shard) is dropped.
  std::vector<job_observer_actor> observers;
  /// Each progress line, when cfg.progress (called on an actor's thread);
  /// unset: printed on stderr.
  std::function<void(const std::string&)> on_line;
  /// Polled about every 100 ms while the job runs; a non-empty reason stops
  /// the job with it (what `syncpoint submit` does on Ctrl-C). Its result
  /// still comes, "stopped" with that reason.
  std::function<std::string()> stop_when;
  /// Polled with stop_when; a non-empty reason asks the job for a checkpoint
  /// now (checkpoint_request: with a checkpoint folder, it is written there,
  /// as the periodic ones are). `syncpoint submit` does this on SIGUSR1.
  std::function<std::string()> checkpoint_when;
  /// Called once the head has taken the job, with the head's number for it.
  std::function<void(uint64_t)> on_accepted;
  std::chrono::seconds connect_timeout{5};  ///< to reach the head
  /// A head that keeps a journal (head --state) and is lost while the job
  /// runs is waited for this long: once it is back, the job (carried on from
  /// its newest checkpoint) reports here again: its lines and its result,
  /// not the observers' events. 0: fail at once, as with a head without a
  /// journal.
  std::chrono::seconds head_wait{120};
};

/// What a submitted job came to.
struct cluster_run {
  uint64_t id = 0;      ///< the head's number for the job
  std::string state;    ///< "done", "stopped" (a stop's reason in `message`), or "failed"
  std::string message;  ///< why it stopped or failed ("" when done)
  bool ran = false;     ///< whether `result` holds the run (false: it failed before its end)
  run_result result;    ///< as train() gives it: summary, trace, final model
  int head_returns = 0; ///< how often the head was lost and came back while the job ran
};

/// What submit() could not do.
class cluster_error : public std::runtime_error {
 public:
  /// Which step failed.
  enum class kind {
    /// No head answered at submit_options::head in time. For an address that
    /// does not answer at all, ending the actor system may then wait until
    /// the operating system gives up connecting.
    unreachable,
    refused,      ///< the head refused the job (its words say why: a token, a misfit, no free slots)
    lost,         ///< the connection to the head was lost, or no result came in cfg.max_time_s * 2 + 600 s
  };
  /// An error of kind `k` that says `what`.
  cluster_error(kind k, const std::string& what) : std::runtime_error(what), kind_(k) {}
  /// Which step failed.
  kind which() const { return kind_; }

 private:
  kind kind_;
};

/// Sets up `sys_cfg` for reaching a cluster: CAF's middleman (and its
/// OpenSSL manager with the TLS files), heartbeats that notice a lost head,
/// the cluster's messages and schema. Throws config_error for TLS files that
/// are missing or unreadable, or not all three.
void configure_submitter(caf::actor_system_config& sys_cfg, const submit_options& opts);

/// Sends `cfg` (its clock must be clock_kind::real) to the head, follows the job until it ends and
/// returns its result. Checks `cfg` first (throws config_error); throws
/// cluster_error when the head cannot be reached, refuses the job, or is lost.
/// Checkpoint folders are made absolute (the head reads and writes them).
/// Writes trace.jsonl and summary.json to cfg.out_dir, when set and the job ran.
cluster_run submit(caf::actor_system& sys, const job_config& cfg, const submit_options& opts);

}  // namespace syncpoint
