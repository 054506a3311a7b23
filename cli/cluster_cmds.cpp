#include "cli/cluster_cmds.hpp"
#include "cli/cluster_options.hpp"

#include "cli/options.hpp"
#include "cli/head_dashboard.hpp"
#include "cli/log.hpp"
#include <syncpoint/model.hpp>
#include "runtime/cluster/wire/connect.hpp"
#include "runtime/cluster/dataplane/data_plane.hpp"
#include "runtime/cluster/control/head.hpp"
#include "runtime/cluster/control/node.hpp"
#include "runtime/job/job_parts.hpp"
#include <syncpoint/train.hpp>

#include <caf/io/middleman.hpp>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <fcntl.h>
#include <sys/file.h>
#include <cerrno>
#include <cstring>
#include <optional>

namespace syncpoint::cli {

using namespace syncpoint::cluster;


std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0)
    return "localhost";
  return buf;
}

void leave_now(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

std::string cluster_secret(const std::string& token, const std::string& token_file, const std::string& command) {
  if (!token.empty() && !token_file.empty()) {
    say(stderr, "syncpoint " + command + ": give --token or --token-file, not both");
    leave_now(2);
  }
  if (token.empty() && token_file.empty()) {  // the variables, for launchers and Kubernetes Secrets (docs/launch.md)
    if (const char* file = std::getenv("SYNCPOINT_TOKEN_FILE"); file && *file)
      return cluster_secret("", file, command);
    const char* secret = std::getenv("SYNCPOINT_TOKEN");
    return secret ? secret : "";
  }
  if (token_file.empty())
    return token;
  std::ifstream in(token_file);
  std::string line;
  if (!in || !std::getline(in, line)) {
    say(stderr, "syncpoint " + command + ": cannot read the token file '" + token_file + "'");
    leave_now(2);
  }
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
    line.pop_back();
  if (line.empty()) {
    say(stderr, "syncpoint " + command + ": the token file '" + token_file + "' is empty");
    leave_now(2);
  }
  return line;
}

cluster::tls_files cluster_tls(bool tls, const cluster::tls_files& files, const std::string& command) {
  if (!tls) {
    if (files.enabled()) {
      say(stderr, "syncpoint " + command + ": --cert, --key and --ca need --tls");
      leave_now(2);
    }
    return {};
  }
  if (auto why = cluster::check_tls(files); !why.empty()) {
    say(stderr, "syncpoint " + command + ": " + why);
    leave_now(2);
  }
  return files;
}

cluster::head_actor reach_head(caf::actor_system& sys, const endpoint& at, const std::string& command,
                               std::chrono::seconds patience) {
  auto deadline = std::chrono::steady_clock::now() + patience;
  auto head = connect_head(sys, at, std::chrono::seconds(5));
  while (!head && std::chrono::steady_clock::now() < deadline) {  // a head that is still starting
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    head = connect_head(sys, at, std::chrono::seconds(5));
  }
  if (!head) {
    say(stderr, "syncpoint " + command + ": " + error_words(sys, head.error()) +
                  (patience.count() > 0 ? " (tried for " + std::to_string(patience.count()) + " s)" : ""));
    leave_now(2);
  }
  return *head;
}

int head_refusal(caf::actor_system& sys, const caf::error& e, const std::string& command) {
  std::fprintf(stderr, "syncpoint %s: %s\n", command.c_str(), error_words(sys, e).c_str());
  return e.category() == caf::atom("syncpoint") ? 2 : 1;
}

std::function<std::string()> stop_on_signal(signal_catcher& signals, int& interrupted, const std::string& command,
                                            const std::string& what) {
  return [&signals, &interrupted, command, &what]() -> std::string {
    int sig = signals.wait(0);
    if (!sig)
      return "";
    if (interrupted) {
      std::fprintf(stderr, "syncpoint %s: interrupted again: leaving without %s's outcome\n", command.c_str(),
                   what.c_str());
      leave_now(128 + sig);
    }
    interrupted = sig;
    std::fprintf(stderr, "syncpoint %s: stopping %s (its outcome and files follow; interrupt again to leave at once)\n",
                 command.c_str(), what.c_str());
    return std::string("its submitter was interrupted (") + (sig == SIGINT ? "SIGINT" : "SIGTERM") + ")";
  };
}

awaited_end await_finished(caf::scoped_actor& self, const cluster::head_actor& head, uint64_t id,
                           const std::string& stop_token, signal_catcher& signals,
                           std::chrono::seconds limit, const std::string& command, const std::string& what) {
  awaited_end out;
  static_cast<cluster::awaited_result&>(out) =
    await_result(self, head, id, stop_token, stop_on_signal(signals, out.interrupted, command, what), limit,
                 [&](const std::string& why) {
                   std::fprintf(stderr, "syncpoint %s: the head did not stop %s: %s\n", command.c_str(), what.c_str(),
                                why.c_str());
                 });
  if (out.lost)
    std::fprintf(stderr, "syncpoint %s: lost the connection to the head\n", command.c_str());
  else if (!out.got)
    std::fprintf(stderr, "syncpoint %s: no result within the time limit\n", command.c_str());
  return out;
}

namespace {

// head --state DIR: the folder is this head's alone (a lock held while the
// process lives, dropped by the kernel when it dies), and its journal is read
// (a bad one refused, left as it is) and written back with one more start.
head_journal open_state(caf::actor_system& sys, const std::string& dir) {
  std::error_code ec;
  // A folder made here is the owner's alone (the journal holds stop tokens); one given keeps its
  // mode, and the journal file itself is 0600.
  if (std::filesystem::create_directories(dir, ec))
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
  if (ec)
    throw config_error("--state " + dir + ": cannot create the folder: " + ec.message());
  auto lock = (std::filesystem::path(dir) / "lock").string();
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    throw config_error("--state " + dir + ": cannot open " + lock + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {  // the descriptor stays open: the lock lasts as long as the process
    if (errno == EWOULDBLOCK)
      throw config_error("--state " + dir + " is in use by another head (it holds " + lock + ")");
    throw config_error("--state " + dir + ": cannot lock " + lock + ": " + std::strerror(errno) +
                       " (a file system without locks, as some NFS mounts are: give a folder whose locks work, so "
                       "that two heads never share it)");
  }
  auto j = read_journal(sys, dir).value_or(head_journal{});
  ++j.epoch;
  write_journal(sys, dir, j);
  return j;
}

void declare_head_options(cluster_options& opts) {
  opts.with_token()
    .add(opts.host, "host", "address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every interface)")
    .add(opts.port, "port", "port to listen on (required; 0 picks a free one)")
    .add(opts.slots, "slots", "workers the head itself may host (default 0)")
    .add(opts.head_ends_it, "stay-on-signal", "SIGINT and SIGTERM do not stop the head: the process that started "
                                              "it ends it (syncpoint launch, where the job's every process gets "
                                              "the signal and rank 0 stops the job; started by hand, only "
                                              "SIGKILL ends it)")
    .group("data")
    .add(opts.data, "data", "Fashion-MNIST folder for evaluation (default " + std::string(default_fashion_mnist_dir) + ")")
    .group("output")
    .add(opts.dashboard, "dashboard", std::string("the live dashboard and /metrics on this port of --host (default ") +
                                        default_dashboard_port + "; 'any': a free port; 'off' or 0: none)")
    .add(opts.runs, "runs", "where the dashboard keeps finished jobs' files (default: a new folder under the temp dir)")
    .group("recovery")
    .add(opts.state, "state", "a folder for the head's journal (its jobs, their plans and placement, the nodes): a "
                              "head started again on it after a crash carries every job on from its newest "
                              "checkpoint, and its nodes and submitters wait for it (--head-wait). Default none: "
                              "a lost head ends its jobs (docs/cluster.md, \"The head dies unexpectedly\")")
    .add(opts.rejoin_wait, "rejoin-wait", "with --state: seconds the jobs a restarted head carries on wait for "
                                          "their nodes to join again, before going on with the nodes there are "
                                          "(default 120)")
    .add(opts.log_level, "log-level", std::string("the lowest level of the head's log on stderr: ") + log_level_words +
                                        " (default info)");
}

// What is wrong with the head's options, or "".
std::string head_refusal(const cluster_options& opts) {
  if (!start_log("head", opts.log_level))
    return "--log-level must be " + std::string(log_level_words) + ", got '" + opts.log_level + "'";
  try {
    dashboard_port(opts.dashboard.empty() ? default_dashboard_port : opts.dashboard);
  } catch (const config_error& e) {
    return e.what();
  }
  if (opts.port < 0 || opts.port > 65535)
    return "--port P is required (0..65535; 0 picks a free port)";
  if (opts.slots > 4096)
    return "--slots must be in 0..4096";
  if (opts.rejoin_wait < 0 || opts.rejoin_wait > 86400)
    return "--rejoin-wait must be in 0..86400 seconds";
  return {};
}

// Where the head listens, how nodes join it, and a warning when anyone may.
void announce(const cluster_options& opts, uint16_t port, const std::string& shown, const std::string& secret,
              const tls_files& tls, uint16_t bulk_port, const std::string& url) {
  bool loopback = is_loopback(opts.host);
  say(stdout, "syncpoint head listening on " + opts.host + ":" + std::to_string(port) +
                (loopback ? " (this machine only; --host 0.0.0.0 to accept nodes from other machines)" : "") +
                (tls.enabled() ? ", TLS: peers need a certificate signed by " + tls.ca : std::string()) +
                (secret.empty() ? (tls.enabled() ? std::string()
                                                 : std::string(", no token: anyone who can connect may join and submit "
                                                               "(see --token, --tls)"))
                                : std::string(", token required")));
  say(stdout, "join with: syncpoint node --join " + shown + ":" + std::to_string(port) +
                (secret.empty() ? "" : " --token-file FILE") +
                (tls.enabled() ? " --tls --cert NODE.pem --key NODE.key --ca " + tls.ca : ""));
  say(stdout, "bulk channel on " + bulk_endpoint(bulk_host(opts.host), bulk_port));
  if (!loopback && secret.empty() && !tls.enabled())
    log_line(log_level::warn, "syncpoint head: WARNING: listening on " + (opts.host.empty() ? std::string("0.0.0.0") : opts.host) +
                  ", beyond this machine, with no token and no TLS: anyone who can reach port " +
                  std::to_string(port) + " (nodes), " + std::to_string(bulk_port) + " (the bulk channel)" +
                  (url.empty() ? std::string() : " or the dashboard") +
                  " may join, submit and stop jobs, push gradients and read the model. Give the cluster a secret: "
                  "--token-file FILE on the head and every node (and --tls)");
  if (!url.empty())
    say(stdout, "dashboard: " + url + (secret.empty() ? "" : " (the token logs in)") + "; metrics: " + url +
                  "metrics; finished jobs' files: " + opts.runs +
                  (secret.empty() && tls.enabled() ? "; no token: anyone who reaches the dashboard may read it "
                                                     "(it asks no certificate; see --token)"
                                                   : ""));
}

// The head's config from the options; `syncpoint launch` owns a head by
// giving it the secret that ends it (in the environment, never on a command
// line) and ends it with the job's exit code for the nodes.
head_config make_head_config(const cluster_options& opts, std::optional<head_journal> journal,
                             std::shared_ptr<data_plane> plane, const std::string& secret) {
  head_config hc;
  hc.state_dir = opts.state;
  hc.journal = std::move(journal);
  hc.rejoin_wait = std::chrono::seconds(opts.rejoin_wait);
  hc.plane = std::move(plane);
  hc.data_dir = opts.data;
  hc.secret = secret;
  hc.log = [](const std::string& line) { log_line(log_level::info, "[head] " + line); };
  if (const char* given = std::getenv(head_control_variable); given && *given) {
    hc.control_token = given;
    unsetenv(head_control_variable);
  }
  return hc;
}

// Until a signal (or the launcher's shutdown): 0, or 1 if the head died on its own.
int serve_head(caf::actor_system& sys, head_actor head, const std::atomic<bool>& shut_down, signal_catcher& signals,
               bool stay_on_signal) {
  caf::scoped_actor self{sys};
  self->monitor(head);
  bool head_died = false;
  while (!shut_down) {
    if (signals.wait(500) && !stay_on_signal)
      break;
    self->receive([&](caf::down_msg&) { head_died = true; }, caf::after(std::chrono::seconds(0)) >> [] {});
    if (head_died) {
      log_line(log_level::error, "syncpoint head: the cluster manager stopped unexpectedly");
      return 1;
    }
  }
  return 0;
}

// Ends the running jobs, tells the nodes, and stops the head (and its own node).
void stop_head(caf::actor_system& sys, head_actor head, node_actor local, const std::string& control,
               const std::string& secret) {
  caf::scoped_actor self{sys};
  log_line(log_level::info, "[head] stopping: ending running jobs and telling the nodes");
  self->request(head, std::chrono::seconds(20), shutdown_atom::value, cluster::credential{control}, int32_t{0})  // (a code given first stays)
    .receive([](bool) {}, [&](caf::error& e) {
      log_line(log_level::warn, "[head] not every job ended in time (" + sys.render(e) + ")");
    });
  // The leave messages (with the exit code a launched job's nodes take) go out before this
  // process ends: wait until the head lists no node that is still there, 10 s at most.
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       std::chrono::steady_clock::now() < until;) {
    size_t left = 1;
    self->request(head, std::chrono::seconds(2), status_atom::value, cluster::credential{secret})
      .receive([&](const cluster_status& s) { left = s.nodes.size(); }, [&](caf::error&) { left = 0; });
    if (left == 0)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  self->send_exit(head, caf::exit_reason::user_shutdown);
  if (local)
    self->send_exit(local, caf::exit_reason::user_shutdown);
  log_line(log_level::info, "[head] stopped");
}

}  // namespace

int run_head(const std::vector<std::string>& args) {
  signal_catcher signals;
  cluster_options opts("head");
  declare_head_options(opts);
  if (int rc = parse_command(opts, args, "head"); rc >= 0)
    return rc;
  if (auto why = head_refusal(opts); !why.empty()) {
    std::cerr << "syncpoint head: " << why << "\n";
    return 2;
  }
  auto secret = cluster_secret(opts.token, opts.token_file, "head");
  auto tls = cluster_tls(opts.tls, opts.tls_paths, "head");
  configure_cluster(opts.actor_system, tls);
  caf::actor_system sys{opts.actor_system};
  std::optional<head_journal> journal;
  if (!opts.state.empty()) {
    try {
      journal = open_state(sys, opts.state);
    } catch (const config_error& e) {
      std::cerr << "syncpoint head: " << e.what() << "\n";
      leave_now(2);
    }
    if (journal->epoch > 1)
      log_line(log_level::info, "[head] --state " + opts.state + ": start " + std::to_string(journal->epoch) +
                                    " on this journal; " + std::to_string(journal->jobs.size()) + " jobs in it");
  }
  set_torch_threads(1);  // the evaluator and any worker here: one core each, as on a node
  auto plane = std::make_shared<data_plane>(sys, bulk_security{secret, tls},
                                            [](const std::string& line) { log_line(log_level::info, "[head] " + line); },
                                            bulk_host(opts.host));
  if (opts.runs.empty())
    opts.runs = (std::filesystem::temp_directory_path() / ("syncpoint-head-" + std::to_string(getpid()))).string();
  head_dashboard dashboard(sys, opts.dashboard.empty() ? default_dashboard_port : opts.dashboard,
                           !opts.dashboard.empty(), std::filesystem::absolute(opts.runs).string(), secret);
  auto shown = opts.host == "0.0.0.0" || opts.host.empty() ? hostname() : opts.host;
  std::string url;
  try {
    url = dashboard.listen(opts.host.empty() ? "0.0.0.0" : opts.host, shown, tls,
                           [](const std::string& line) { log_line(log_level::info, "[head] dashboard: " + line); });
  } catch (const std::exception& e) {
    std::cerr << "syncpoint head: " << e.what() << "\n";
    return 2;
  }
  auto hc = make_head_config(opts, std::move(journal), plane, secret);
  hc.dashboard = dashboard.link();
  auto shut_down = std::make_shared<std::atomic<bool>>(false);
  hc.on_shut_down = [shut_down] { *shut_down = true; };
  auto control = hc.control_token;
  auto head = spawn_head(sys, std::move(hc));
  auto port = publish_head(sys, head, static_cast<uint16_t>(opts.port), opts.host);
  if (!port) {
    std::cerr << "syncpoint head: cannot listen on " << opts.host << ":" << opts.port << ": "
              << sys.render(port.error()) << "\n";
    caf::anon_send_exit(head, caf::exit_reason::user_shutdown);
    return 2;
  }
  dashboard.attach(head);
  announce(opts, *port, shown, secret, tls, plane->port(), url);
  node_actor local;
  if (opts.slots > 0) {
    node_config here{"head", opts.slots, opts.data, head, std::chrono::seconds(10),
                     std::chrono::seconds(1), nullptr, nullptr, secret, plane, "127.0.0.1"};
    here.host = hostname();
    local = spawn_node(sys, std::move(here));
  }
  if (int died = serve_head(sys, head, *shut_down, signals, opts.head_ends_it))
    return died;
  stop_head(sys, head, local, control, secret);
  return 0;
}

}  // namespace syncpoint::cli
