// What the cluster commands' files share (cli/cluster_cmds.cpp: head and
// the common helpers; cli/node_cmd.cpp: node). Internal to cli/.
#pragma once

#include "cli/options.hpp"
#include "runtime/cluster/net/tls_files.hpp"
#include "models/data_paths.hpp"

#include <caf/actor_system_config.hpp>

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace syncpoint::cli {

// Where a process's bulk channel listens: on the interface its CAF port does.
inline std::string bulk_host(const std::string& host) {
  if (host.empty() || host == "0.0.0.0")
    return "0.0.0.0";
  return host == "localhost" ? "127.0.0.1" : host;
}

// Lines from actor threads and the main thread, never interleaved.
inline void say(FILE* to, const std::string& line) {
  static std::mutex m;
  std::lock_guard<std::mutex> guard{m};
  std::fprintf(to, "%s\n", line.c_str());
  std::fflush(to);
}

// The options of a cluster command: ours, and CAF's own (--middleman.* ...) for its actor system.
struct cluster_options {
  std::string host = "127.0.0.1";
  std::string token;
  std::string token_file;
  bool tls = false;
  cluster::tls_files tls_paths;
  int port = -1;
  int slots = -1;
  std::string join;
  std::string name;
  std::string head;
  std::string data = default_fashion_mnist_dir;
  std::string dashboard;  // head: "" is the default port
  std::string runs;       // head: where finished jobs' files go ("" a new folder under the temp dir)
  std::string listen;     // node: where its bulk channel listens ("" the interface that reaches the head)
  std::string gpus;       // node: the CUDA devices its workers may take ("0,1"; "" none)
  std::string log_level = "info";  // head, node: the lowest level their log shows
  int wait_for_head = 0;  // node: seconds to keep trying to reach a head that is still starting
  int rank = -1;          // node: its rank in a launched job (launch sets it; status shows it)
  std::string launcher;   // node: the launcher of that job
  bool head_ends_it = false;  // head, node: SIGINT/SIGTERM do not end it (launch: rank 0 ends the job, then the head)
  std::string state;      // head: the folder of its journal ("" none: a lost head ends its jobs)
  int rejoin_wait = 120;  // head: seconds the jobs it carries on wait for their nodes
  int head_wait = 120;    // node: seconds a lost head that keeps a journal is waited for
  caf::actor_system_config actor_system;
  option_table table;

  explicit cluster_options(const std::string& command) : table(command) { table.actor_system(actor_system); }
  std::string parse_args(const std::vector<std::string>& args) { return table.parse_args(args); }
  bool help_printed() const { return table.help_printed(); }

  // --token and --token-file, and --tls --cert --key --ca, on every cluster command.
  option_table& with_token() { return add_cluster_access(table, token, token_file, tls, tls_paths); }
};

}  // namespace syncpoint::cli
