// syncpoint status --head HOST:PORT: the head's nodes and jobs, as tables.
#include "cli/cluster_cmds.hpp"

#include "cli/options.hpp"
#include "runtime/cluster/control/head.hpp"
#include "runtime/job/devices.hpp"

#include <caf/all.hpp>

#include <cstdio>
#include <ctime>
#include <iostream>

namespace syncpoint::cli {

using namespace syncpoint::cluster;

namespace {

struct status_options {
  std::string head, token, token_file;
  bool tls = false;
  tls_files tls_paths;
  caf::actor_system_config actor_system;
  option_table table{"status"};

  status_options() {
    add_cluster_access(table, token, token_file, tls, tls_paths).add(head, "head", "HOST:PORT of the head (required)");
    table.actor_system(actor_system);
  }
  std::string parse_args(const std::vector<std::string>& args) { return table.parse_args(args); }
  bool help_printed() const { return table.help_printed(); }
};

std::string age(int64_t then_ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s ago", static_cast<double>(unix_ms() - then_ms) / 1000.0);
  return buf;
}

std::string clock_time(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return buf;
}

}  // namespace

int run_status(const std::vector<std::string>& args) {
  status_options opts;
  if (int rc = parse_command(opts, args, "status"); rc >= 0)
    return rc;
  auto at = parse_endpoint(opts.head);
  if (!at) {
    std::cerr << "syncpoint status: --head expects HOST:PORT, got '" << opts.head << "'\n";
    return 2;
  }
  auto secret = cluster_secret(opts.token, opts.token_file, "status");
  configure_cluster(opts.actor_system, cluster_tls(opts.tls, opts.tls_paths, "status"));
  caf::actor_system sys{opts.actor_system};
  auto head = reach_head(sys, *at, "status");
  caf::scoped_actor self{sys};
  int rc = 0;
  self->request(head, std::chrono::seconds(10), status_atom::value, cluster::credential{secret})
    .receive(
      [&](cluster_status& s) {
        std::printf("nodes (%zu):\n", s.nodes.size());
        std::printf("  %-20s %-16s %-14s %-22s %5s %5s %5s  %-19s  %-14s  %s\n", "NAME", "HOST", "RANK", "ADDRESS",
                    "SLOTS", "USED", "FREE", "UP SINCE", "LAST HEARTBEAT", "GPUS");
        for (auto& n : s.nodes) {
          auto gpus = gpu_names(n.gpus, ",");
          std::printf("  %-20s %-16s %-14s %-22s %5d %5d %5d  %-19s  %-14s  %s\n", n.name.c_str(),
                      n.host.empty() ? "-" : n.host.c_str(), launch_rank(n).c_str(), n.address.c_str(), n.slots,
                      n.used, n.slots - n.used, clock_time(n.up_since_ms).c_str(), age(n.last_heartbeat_ms).c_str(),
                      gpus.empty() ? "-" : gpus.c_str());
        }
        std::printf("jobs (%zu):\n", s.jobs.size());
        std::printf("  %-4s %-14s %7s %9s %9s  %-8s  %-14s  %s\n", "ID", "PROTOCOL", "WORKERS", "PROGRESS",
                    "ACCURACY", "STATE", "DEVICES", "PS SHARDS");
        for (auto& j : s.jobs) {
          char acc[16] = "-";
          if (j.accuracy >= 0)
            std::snprintf(acc, sizeof acc, "%.4f", j.accuracy);
          std::string shards;  // shard k's host, in shard order
          for (size_t k = 0; k < j.shards.size(); ++k)
            shards += (k ? ", " : "") + std::to_string(k) + ": " + j.shards[k];
          std::printf("  %-4llu %-14s %7d %8.1f%% %9s  %-8s  %-14s  %s\n", static_cast<unsigned long long>(j.id),
                      shown_protocol(j).c_str(), j.workers, 100.0 * j.progress, acc, to_string(j.state).c_str(),
                      describe_devices(j.devices).c_str(), shards.empty() ? "-" : shards.c_str());
        }
      },
      [&](caf::error& e) {
        if (e.category() == caf::atom("syncpoint")) {  // a refusal (no or wrong token): bad input
          std::fprintf(stderr, "syncpoint status: %s\n", error_words(sys, e).c_str());
          rc = 2;
          return;
        }
        std::fprintf(stderr, "syncpoint status: the head did not answer: %s\n", sys.render(e).c_str());
        rc = 1;
      });
  std::fflush(stdout);
  return rc;
}

}  // namespace syncpoint::cli
