// The cluster commands (docs/cluster.md):
//   syncpoint head   [--host H] --port P [--slots K] [--data DIR] [--token T | --token-file F] [--state DIR]
//   syncpoint node   --join HOST:P [--name N] [--slots K] [--data DIR] [--token T | --token-file F] [--head-wait S]
//   syncpoint submit --head HOST:P [train options] [--placement spread|pack] [--out DIR] [--token ...] [--head-wait S]
//   syncpoint status --head HOST:P [--token T | --token-file F]
//   syncpoint sweep  ... --head HOST:P [--token ...]   (a sweep's cells on the nodes: cli/sweep_cluster.cpp)
// Exit status: 0 success, 1 a job that failed or a lost head, 2 bad input or
// an unreachable or refusing head, 128+N when submit got signal N (SIGINT,
// SIGTERM): the head stopped the job and its files were written. A node that
// the head tells to leave with an exit code (launch: the job's) exits with it.
#pragma once

#include "runtime/cluster/wire/connect.hpp"
#include "runtime/cluster/client/submit.hpp"

#include <caf/scoped_actor.hpp>

#include <chrono>

#include <string>
#include <vector>

namespace syncpoint::cli {

/// The head at `at`, reached within 5 s (trying again for `patience`, a head
/// that is still starting); otherwise prints "syncpoint COMMAND: why" and ends
/// the process with status 2 (without waiting for CAF's shutdown, which a
/// timed-out connect may block).
cluster::head_actor reach_head(caf::actor_system& sys, const cluster::endpoint& at, const std::string& command,
                               std::chrono::seconds patience = std::chrono::seconds(0));

/// The variable through which `syncpoint launch` gives the head it starts the
/// secret that ends it (shutdown_atom with the job's exit code for the nodes).
inline constexpr const char* head_control_variable = "SYNCPOINT_HEAD_CONTROL";

/// This machine's name ("localhost" when it has none): a node's default name starts with it.
std::string hostname();

/// Ends the process at once with `code`: a connect that timed out may still
/// block CAF's middleman, whose orderly shutdown would then wait for it.
[[noreturn]] void leave_now(int code);

/// The cluster's token from --token or --token-file; when neither, from the file
/// SYNCPOINT_TOKEN_FILE names, else the variable SYNCPOINT_TOKEN ("" when none). Prints
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

/// What await_finished saw: as cluster::await_result, and the signal that stopped it (0: none).
struct awaited_end : cluster::awaited_result {
  int interrupted = 0;
};

/// A stop_when (cluster::await_result, submit()) for the terminal: SIGINT or
/// SIGTERM asks the head to stop `what` ("job 3", "sweep 3"; read when the
/// signal comes), and its outcome still comes; a second signal leaves at once
/// (exit 128+N). `interrupted` takes the first signal.
std::function<std::string()> stop_on_signal(signal_catcher& signals, int& interrupted, const std::string& command,
                                            const std::string& what);

/// cluster::await_result with stop_on_signal, saying on stderr what went wrong
/// (the head lost, no result within `limit`, a stop the head refused).
awaited_end await_finished(caf::scoped_actor& self, const cluster::head_actor& head, uint64_t id,
                           const std::string& stop_token, signal_catcher& signals,
                           std::chrono::seconds limit, const std::string& command, const std::string& what);

int run_head(const std::vector<std::string>& args);
int run_node(const std::vector<std::string>& args);
int run_submit(const std::vector<std::string>& args);
int run_status(const std::vector<std::string>& args);

/// Catches SIGINT, SIGTERM and SIGUSR1 for the whole process, whichever
/// thread the kernel hands them to; wait() then takes the first two, one per
/// signal, and take_usr1() the third (which then no longer ends the process).
class signal_catcher {
 public:
  signal_catcher();
  /// Waits up to `ms` milliseconds (0: only looks); the signal that arrived
  /// (SIGINT or SIGTERM), or 0.
  int wait(int ms);
  /// Whether a SIGUSR1 came since the last call (one per signal).
  bool take_usr1();
};

}  // namespace syncpoint::cli
