// The cluster commands (docs/cluster.md):
//   syncpoint head   [--host H] --port P [--slots K] [--data DIR] [--token T | --token-file F]
//   syncpoint node   --join HOST:P [--name N] [--slots K] [--data DIR] [--token T | --token-file F]
//   syncpoint submit --head HOST:P [train options] [--placement spread|pack] [--out DIR] [--token ...]
//   syncpoint status --head HOST:P [--token T | --token-file F]
//   syncpoint sweep  ... --head HOST:P [--token ...]   (a sweep's cells on the nodes: cli/sweep_cluster.cpp)
// Exit status: 0 success, 1 a job that failed or a lost head, 2 bad input or
// an unreachable or refusing head, 128+N when submit got signal N (SIGINT,
// SIGTERM): the head stopped the job and its files were written.
#pragma once

#include "runtime/cluster/connect.hpp"

#include <caf/scoped_actor.hpp>

#include <string>
#include <vector>

namespace syncpoint::cli {

/// The head at `at`, reached within 5 s; otherwise prints "syncpoint
/// COMMAND: why" and ends the process with status 2 (without waiting for
/// CAF's shutdown, which a timed-out connect may block).
cluster::head_actor reach_head(caf::actor_system& sys, const cluster::endpoint& at,
                               const std::string& command);

/// The cluster's token from --token or --token-file ("" when neither). Prints
/// "syncpoint COMMAND: why" and ends with status 2 when both are given or the
/// file cannot be read or is empty.
std::string cluster_secret(const std::string& token, const std::string& token_file, const std::string& command);

/// The TLS files of --tls --cert --key --ca (none without --tls). Prints
/// "syncpoint COMMAND: why" and ends with status 2 when a file is missing or
/// unreadable, or --cert/--key/--ca come without --tls.
cluster::tls_files cluster_tls(bool tls, const cluster::tls_files& files, const std::string& command);

class signal_catcher;

/// A head's refusal (of a job, a sweep): prints "syncpoint COMMAND: why"
/// and returns the exit status, 2 for what the head refused by its rules
/// (bad input, no token), 1 for anything else (a lost connection).
int head_refusal(caf::actor_system& sys, const caf::error& e, const std::string& command);

/// What await_finished saw: the job's (or sweep's) result, a lost head, or neither in time.
struct awaited_result {
  bool got = false, lost = false;
  int interrupted = 0;  // the signal that stopped it (0: none)
  cluster::job_result result;
};

/// Waits until `self` receives the job_result its client hands on, the head
/// goes away (`self` monitors it) or `limit` passes. SIGINT or SIGTERM asks
/// the head to stop `what` ("job 3", "sweep 3") with its stop token, and its
/// outcome still comes; a second signal leaves at once (exit 128+N).
awaited_result await_finished(caf::scoped_actor& self, caf::actor_system& sys, const cluster::head_actor& head,
                              uint64_t id, const std::string& stop_token, signal_catcher& signals,
                              std::chrono::seconds limit, const std::string& command, const std::string& what);

int run_head(const std::vector<std::string>& args);
int run_node(const std::vector<std::string>& args);
int run_submit(const std::vector<std::string>& args);
int run_status(const std::vector<std::string>& args);

/// Catches SIGINT and SIGTERM for the whole process, whichever thread the
/// kernel hands them to; wait() then takes them, one per signal.
class signal_catcher {
 public:
  signal_catcher();
  /// Waits up to `ms` milliseconds (0: only looks); the signal that arrived
  /// (SIGINT or SIGTERM), or 0.
  int wait(int ms);
};

}  // namespace syncpoint::cli
