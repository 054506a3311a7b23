// syncpoint node: joins the head and hosts the workers (and shards) it is
// given. A node whose head keeps a journal (head --state) outlives the head's
// loss: it waits --head-wait s for a head at the same address and joins it
// again, this process unchanged.
#include "cli/cluster_cmds.hpp"
#include "cli/cluster_options.hpp"
#include "cli/log.hpp"
#include <syncpoint/model.hpp>
#include "runtime/cluster/wire/connect.hpp"
#include "runtime/cluster/control/node.hpp"
#include "runtime/cluster/dataplane/data_plane.hpp"
#include "runtime/job/devices.hpp"
#include "runtime/job/job_parts.hpp"

#include <atomic>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unistd.h>

namespace syncpoint::cli {

using namespace syncpoint::cluster;

namespace {

// A head at `at`, until `until`; none if none answered, or a signal asked the
// node to leave meanwhile (`signalled`). It may be the lost head's process (a
// connection that broke while the head lived, or the middleman's cached proxy
// of a dead one): registering tells, and a refusal brings the node back here.
std::optional<head_actor> wait_for_head(caf::actor_system& sys, const endpoint& at,
                                        std::chrono::steady_clock::time_point until, signal_catcher& signals,
                                        bool stay_on_signal, bool& signalled) {
  while (std::chrono::steady_clock::now() < until) {
    if (signals.wait(0) && !stay_on_signal) {
      signalled = true;
      return std::nullopt;
    }
    if (auto head = connect_head(sys, at, std::chrono::seconds(5)))
      return *head;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return std::nullopt;
}

void declare_options(cluster_options& opts) {
  opts.name = hostname() + "-" + std::to_string(getpid());
  opts.slots = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  opts.with_token()
    .add(opts.join, "join", "HOST:PORT of the head (required)")
    .add(opts.name, "name", "this node's name, unique in the cluster (default HOSTNAME-PID)")
    .add(opts.wait_for_head, "wait-for-head", "seconds to keep trying to reach the head (default 0: one try)")
    .add(opts.head_wait, "head-wait", "seconds to wait for a lost head that keeps a journal (head --state) to come "
                                      "back, then join it again (default 120; 0: leave at once, as with a head "
                                      "without one)")
    .add(opts.head_ends_it, "stay-on-signal", "SIGINT and SIGTERM do not make the node leave: it waits for the head "
                                              "to end the job and tell it (syncpoint launch, where the job's every "
                                              "process gets the signal)")
    .add(opts.slots, "slots", "workers this node may host (default: its cores)")
    .add(opts.rank, "rank", "its rank in a launched job, shown by status and the dashboard (syncpoint launch "
                            "sets it; default none)")
    .add(opts.launcher, "launcher", "what launched that job: slurm, openmpi, mpich, torchrun, kubernetes (with --rank)")
    .add(opts.gpus, "gpus", "CUDA devices this node's workers may take, e.g. 0,1: a job with --device cuda is "
                            "placed only on nodes that offer GPUs (default none; docs/gpu.md)")
    .add(opts.listen, "host", "address the node's bulk channel listens on (default: the one it reaches the head from; "
                              "0.0.0.0: every interface)")
    .group("data")
    .add(opts.data, "data", "Fashion-MNIST folder the workers read (default " + std::string(default_fashion_mnist_dir) + ")")
    .group("output")
    .add(opts.log_level, "log-level", std::string("the lowest level of the node's log on stderr: ") + log_level_words +
                                        " (default info)");
}

// What is wrong with the options ("" if nothing), the head's address and the GPUs read on the way.
std::string refusal(const cluster_options& opts, std::optional<endpoint>& at, std::vector<int32_t>& gpus) {
  if (!start_log("node", opts.log_level))
    return "--log-level must be " + std::string(log_level_words) + ", got '" + opts.log_level + "'";
  at = parse_endpoint(opts.join);
  if (!at)
    return "--join expects HOST:PORT, got '" + opts.join + "'";
  if (opts.slots < 1 || opts.slots > 4096)
    return "--slots must be in 1..4096";
  if (!valid_node_name(opts.name))
    return "--name must be 1 to " + std::to_string(max_node_name) + " printable characters";
  if (opts.head_wait < 0 || opts.head_wait > 86400)
    return "--head-wait must be in 0..86400 seconds, got " + std::to_string(opts.head_wait);
  if (opts.rank < -1 || (!opts.launcher.empty() && !valid_node_name(opts.launcher)))
    return "--rank must be >= 0 and --launcher 1 to " + std::to_string(max_node_name) + " printable characters";
  try {
    gpus = parse_gpu_list(opts.gpus, this_machine());
  } catch (const config_error& e) {
    return e.what();
  }
  return {};
}

// The bulk channel listens where the head is reached from (a head on this
// machine: loopback), unless --host says otherwise.
std::string listen_address(const cluster_options& opts, const endpoint& at) {
  if (!opts.listen.empty())
    return opts.listen;
  auto listen = is_loopback(at.host) ? "127.0.0.1" : local_address_towards(at.host, at.port);
  if (listen.empty()) {
    log_line(log_level::warn, "syncpoint node: no interface of this machine routes to " + at.host +
                                ": the bulk channel listens on every interface (--host ADDR chooses one)");
    listen = "0.0.0.0";
  }
  return listen;
}

// What the node actor's callbacks tell the loop that runs it.
struct node_news {
  std::atomic<bool> joined{false}, journaled{false};
  std::mutex mutex;
  std::string why;   // why it left
  int32_t code = 0;  // the exit code the head asked for
};

// Spawns the node and waits for its end: the reason, or none when a signal made it leave.
std::optional<caf::error> run_once(caf::actor_system& sys, caf::scoped_actor& self, const node_config& cfg,
                                   signal_catcher& signals, bool stay_on_signal) {
  auto node = spawn_node(sys, cfg);
  self->monitor(node);
  caf::error ended;
  bool down = false;
  while (!down) {
    if (signals.wait(200) && !stay_on_signal) {
      self->send_exit(node, caf::exit_reason::user_shutdown);
      self->receive([&](caf::down_msg&) {}, caf::after(std::chrono::seconds(5)) >> [] {});
      return std::nullopt;
    }
    self->receive([&](caf::down_msg& dm) { down = true; ended = dm.reason; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
  }
  return ended;
}

// The node's life: joined, and joined again each time a head with a journal
// comes back after a loss. Returns the process's exit code.
int serve(caf::actor_system& sys, node_config cfg, const cluster_options& opts, const endpoint& at,
          signal_catcher& signals, node_news& news) {
  caf::scoped_actor self{sys};
  bool rejoining = false;  // the head was lost and came back: this node joins it again
  auto rejoin_until = std::chrono::steady_clock::time_point{};
  for (;;) {
    news.joined = false;
    auto ended = run_once(sys, self, cfg, signals, opts.head_ends_it);
    if (!ended) {
      log_line(log_level::info, "syncpoint node: leaving the cluster");
      return 0;
    }
    std::string reason;
    int32_t asked = 0;
    {
      std::lock_guard<std::mutex> guard{news.mutex};
      reason = news.why;
      asked = news.code;
    }
    bool lost = news.joined && reason == head_lost;
    bool refused_again = rejoining && !news.joined;  // e.g. its old name not yet freed: try again
    if ((lost && news.journaled && opts.head_wait > 0) ||
        (refused_again && std::chrono::steady_clock::now() < rejoin_until)) {
      if (lost) {
        log_line(log_level::warn, "syncpoint node: lost the connection to the head; its jobs' workers and shards "
                                  "here are gone with it. Waiting up to " + std::to_string(opts.head_wait) +
                                  " s for it to come back (it keeps a journal)");
        rejoin_until = std::chrono::steady_clock::now() + std::chrono::seconds(opts.head_wait);
      } else {
        log_line(log_level::info, "syncpoint node: the head refused this node for now (" + reason + "); trying again");
        std::this_thread::sleep_for(std::chrono::seconds(1));
      }
      bool signalled = false;
      auto back = wait_for_head(sys, at, rejoin_until, signals, opts.head_ends_it, signalled);
      if (signalled) {
        log_line(log_level::info, "syncpoint node: leaving the cluster (it was waiting for the head)");
        return 0;
      }
      if (!back) {
        log_line(log_level::error, "syncpoint node: the head did not come back within " +
                                     std::to_string(opts.head_wait) + " s" +
                                     (refused_again ? " (it last refused this node: " + reason + ")" : std::string()));
        return 1;
      }
      cfg.head = *back;
      rejoining = true;
      continue;
    }
    if (!news.joined) {
      log_line(log_level::error, "syncpoint node: the head refused this node: " + reason);
      leave_now(2);
    }
    bool failed = *ended && *ended != caf::exit_reason::normal;
    log_line(failed ? log_level::error : log_level::info, "syncpoint node: " + reason);
    if (!failed && asked != 0)  // launch: every process exits with the job's outcome
      log_line(log_level::info, "syncpoint node: the job's exit code is " + std::to_string(asked));
    return failed ? 1 : asked;
  }
}

}  // namespace

int run_node(const std::vector<std::string>& args) {
  signal_catcher signals;
  cluster_options opts("node");
  declare_options(opts);
  if (int rc = parse_command(opts, args, "node"); rc >= 0)
    return rc;
  std::optional<endpoint> at;
  std::vector<int32_t> gpus;
  if (auto why = refusal(opts, at, gpus); !why.empty()) {
    std::cerr << "syncpoint node: " << why << "\n";
    return 2;
  }
  auto secret = cluster_secret(opts.token, opts.token_file, "node");
  // A thread per worker slot, up to the cores (a worker is busy one core).
  auto tls = cluster_tls(opts.tls, opts.tls_paths, "node");
  configure_cluster(opts.actor_system, tls, scheduler_threads(opts.slots));
  caf::actor_system sys{opts.actor_system};
  node_config cfg;
  cfg.name = opts.name;
  cfg.slots = opts.slots;
  cfg.gpus = gpus;
  cfg.host = hostname();
  cfg.rank = opts.rank;
  cfg.launcher = opts.rank >= 0 && opts.launcher.empty() ? "launch" : opts.launcher;
  cfg.data_dir = opts.data;
  cfg.head = reach_head(sys, *at, "node", std::chrono::seconds(std::max(0, opts.wait_for_head)));
  cfg.register_timeout = std::chrono::seconds(5);
  cfg.secret = secret;
  auto listen = listen_address(opts, *at);
  try {
    cfg.plane = std::make_shared<data_plane>(sys, bulk_security{secret, tls},
                                             [](const std::string& line) { log_line(log_level::info, line); },
                                             bulk_host(listen));
  } catch (const std::exception& e) {
    std::cerr << "syncpoint node: the bulk channel cannot listen on '" << listen << "': " << e.what() << "\n";
    return 2;
  }
  say(stdout, "bulk channel on " + bulk_endpoint(bulk_host(listen), cfg.plane->port()));
  if (!is_loopback(bulk_host(listen)) && secret.empty() && !tls.enabled())
    log_line(log_level::warn, "syncpoint node: WARNING: the bulk channel listens on " + bulk_host(listen) +
                  ", beyond this machine, with no token and no TLS: anyone who can reach port " +
                  std::to_string(cfg.plane->port()) +
                  " may talk to its shards. Give the cluster a secret: --token-file FILE on the head and every "
                  "node (and --tls)");
  cfg.head_host = at->host;
  cfg.on_note = [](const std::string& line) { log_line(log_level::info, "syncpoint node: " + line); };
  auto news = std::make_shared<node_news>();  // the callbacks may outlive this frame
  cfg.on_joined = [news, join = opts.join, slots = opts.slots](const std::string& name, bool journal) {
    news->joined = true;
    news->journaled = journal;
    say(stdout, "node '" + name + "' joined the head at " + join + " with " + std::to_string(slots) +
                  (slots == 1 ? " slot" : " slots") +
                  (journal ? " (it keeps a journal: this node waits for it if it is lost)" : ""));
  };
  cfg.on_leave = [news](const std::string& reason, int32_t asked) {
    std::lock_guard<std::mutex> guard{news->mutex};
    news->why = reason;
    news->code = asked;
  };
  return serve(sys, cfg, opts, *at, signals, *news);
}

}  // namespace syncpoint::cli
