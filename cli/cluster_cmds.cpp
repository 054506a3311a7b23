#include "cli/cluster_cmds.hpp"

#include "cli/options.hpp"
#include "cli/head_dashboard.hpp"
#include "cli/log.hpp"
#include <syncpoint/model.hpp>
#include "runtime/cluster/connect.hpp"
#include "runtime/cluster/transport/data_plane.hpp"
#include "runtime/cluster/head.hpp"
#include "runtime/cluster/node.hpp"
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

namespace syncpoint::cli {

using namespace syncpoint::cluster;

namespace {

// Where a process's bulk channel listens: on the interface its CAF port does.
std::string bulk_host(const std::string& host) {
  if (host.empty() || host == "0.0.0.0")
    return "0.0.0.0";
  return host == "localhost" ? "127.0.0.1" : host;
}

const std::string default_data = "/usr/share/datasets/fashion-mnist";

// Lines from actor threads and the main thread, never interleaved.
void say(FILE* to, const std::string& line) {
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
  tls_files tls_paths;
  int port = -1;
  int slots = -1;
  std::string join;
  std::string name;
  std::string head;
  std::string data = default_data;
  std::string dashboard;  // head: "" is the default port
  std::string runs;       // head: where finished jobs' files go ("" a new folder under the temp dir)
  std::string listen;     // node: where its bulk channel listens ("" the interface that reaches the head)
  std::string gpus;       // node: the CUDA devices its workers may take ("0,1"; "" none)
  std::string log_level = "info";  // head, node: the lowest level their log shows
  int wait_for_head = 0;  // node: seconds to keep trying to reach a head that is still starting
  int rank = -1;          // node: its rank in a launched job (launch sets it; status shows it)
  std::string launcher;   // node: the launcher of that job
  bool head_ends_it = false;  // head, node: SIGINT/SIGTERM do not end it (launch: rank 0 ends the job, then the head)
  caf::actor_system_config actor_system;
  option_table table;

  explicit cluster_options(const std::string& command) : table(command) { table.actor_system(actor_system); }
  std::string parse_args(const std::vector<std::string>& args) { return table.parse_args(args); }
  bool help_printed() const { return table.help_printed(); }

  // --token and --token-file, and --tls --cert --key --ca, on every cluster command.
  option_table& with_token() { return add_cluster_access(table, token, token_file, tls, tls_paths); }
};

}  // namespace

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

int run_head(const std::vector<std::string>& args) {
  signal_catcher signals;
  cluster_options opts("head");
  opts.with_token()
    .add(opts.host, "host", "address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every interface)")
    .add(opts.port, "port", "port to listen on (required; 0 picks a free one)")
    .add(opts.slots, "slots", "workers the head itself may host (default 0)")
    .add(opts.head_ends_it, "stay-on-signal", "SIGINT and SIGTERM do not stop the head: the process that started "
                                              "it ends it (syncpoint launch, where the job's every process gets "
                                              "the signal and rank 0 stops the job; started by hand, only "
                                              "SIGKILL ends it)")
    .group("data")
    .add(opts.data, "data", "Fashion-MNIST folder for evaluation (default " + default_data + ")")
    .group("output")
    .add(opts.dashboard, "dashboard", std::string("the live dashboard and /metrics on this port of --host (default ") +
                                        default_dashboard_port + "; 'any': a free port; 'off' or 0: none)")
    .add(opts.runs, "runs", "where the dashboard keeps finished jobs' files (default: a new folder under the temp dir)")
    .add(opts.log_level, "log-level", std::string("the lowest level of the head's log on stderr: ") + log_level_words +
                                        " (default info)");
  if (int rc = parse_command(opts, args, "head"); rc >= 0)
    return rc;
  if (!start_log("head", opts.log_level)) {
    std::cerr << "syncpoint head: --log-level must be " << log_level_words << ", got '" << opts.log_level << "'\n";
    return 2;
  }
  try {
    dashboard_port(opts.dashboard.empty() ? default_dashboard_port : opts.dashboard);
  } catch (const config_error& e) {
    std::cerr << "syncpoint head: " << e.what() << "\n";
    return 2;
  }
  if (opts.port < 0 || opts.port > 65535) {
    std::cerr << "syncpoint head: --port P is required (0..65535; 0 picks a free port)\n";
    return 2;
  }
  if (opts.slots > 4096) {
    std::cerr << "syncpoint head: --slots must be in 0..4096\n";
    return 2;
  }
  auto secret = cluster_secret(opts.token, opts.token_file, "head");
  auto tls = cluster_tls(opts.tls, opts.tls_paths, "head");
  configure_cluster(opts.actor_system, tls);
  caf::actor_system sys{opts.actor_system};
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
  head_config hc;
  hc.dashboard = dashboard.link();
  hc.plane = plane;
  hc.data_dir = opts.data;
  hc.secret = secret;
  hc.log = [](const std::string& line) { log_line(log_level::info, "[head] " + line); };
  // `syncpoint launch` owns this head: it gives it the secret that ends it (in the environment,
  // never on a command line) and ends it with the job's exit code for the nodes.
  if (const char* given = std::getenv(head_control_variable); given && *given) {
    hc.control_token = given;
    unsetenv(head_control_variable);
  }
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
  bool loopback = is_loopback(opts.host);
  say(stdout, "syncpoint head listening on " + opts.host + ":" + std::to_string(*port) +
                (loopback ? " (this machine only; --host 0.0.0.0 to accept nodes from other machines)" : "") +
                (tls.enabled() ? ", TLS: peers need a certificate signed by " + tls.ca : std::string()) +
                (secret.empty() ? (tls.enabled() ? std::string()
                                                 : std::string(", no token: anyone who can connect may join and submit "
                                                               "(see --token, --tls)"))
                                : std::string(", token required")));
  say(stdout, "join with: syncpoint node --join " + shown + ":" + std::to_string(*port) +
                (secret.empty() ? "" : " --token-file FILE") +
                (tls.enabled() ? " --tls --cert NODE.pem --key NODE.key --ca " + tls.ca : ""));
  say(stdout, "bulk channel on " + bulk_endpoint(bulk_host(opts.host), plane->port()));
  if (!loopback && secret.empty() && !tls.enabled())
    log_line(log_level::warn, "syncpoint head: WARNING: listening on " + (opts.host.empty() ? std::string("0.0.0.0") : opts.host) +
                  ", beyond this machine, with no token and no TLS: anyone who can reach port " +
                  std::to_string(*port) + " (nodes), " + std::to_string(plane->port()) + " (the bulk channel)" +
                  (url.empty() ? std::string() : " or the dashboard") +
                  " may join, submit and stop jobs, push gradients and read the model. Give the cluster a secret: "
                  "--token-file FILE on the head and every node (and --tls)");
  if (!url.empty())
    say(stdout, "dashboard: " + url + (secret.empty() ? "" : " (the token logs in)") + "; metrics: " + url +
                  "metrics; finished jobs' files: " + opts.runs +
                  (secret.empty() && tls.enabled() ? "; no token: anyone who reaches the dashboard may read it "
                                                     "(it asks no certificate; see --token)"
                                                   : ""));
  node_actor local;
  if (opts.slots > 0) {
    node_config here{"head", opts.slots, opts.data, head, std::chrono::seconds(10),
                     std::chrono::seconds(1), nullptr, nullptr, secret, plane, "127.0.0.1"};
    here.host = hostname();
    local = spawn_node(sys, std::move(here));
  }
  caf::scoped_actor self{sys};
  self->monitor(head);
  bool head_died = false;
  while (!*shut_down) {
    if (signals.wait(500) && !opts.head_ends_it)
      break;
    self->receive([&](caf::down_msg&) { head_died = true; }, caf::after(std::chrono::seconds(0)) >> [] {});
    if (head_died) {
      log_line(log_level::error, "syncpoint head: the cluster manager stopped unexpectedly");
      return 1;
    }
  }
  log_line(log_level::info, "[head] stopping: ending running jobs and telling the nodes");
  self->request(head, std::chrono::seconds(20), shutdown_atom::value, control, int32_t{0})  // (a code given first stays)
    .receive([](bool) {}, [&](caf::error& e) {
      log_line(log_level::warn, "[head] not every job ended in time (" + sys.render(e) + ")");
    });
  // The leave messages (with the exit code a launched job's nodes take) go out before this
  // process ends: wait until the head lists no node that is still there, 10 s at most.
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       std::chrono::steady_clock::now() < until;) {
    size_t left = 1;
    self->request(head, std::chrono::seconds(2), status_atom::value, secret)
      .receive([&](const cluster_status& s) { left = s.nodes.size(); }, [&](caf::error&) { left = 0; });
    if (left == 0)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  self->send_exit(head, caf::exit_reason::user_shutdown);
  if (local)
    self->send_exit(local, caf::exit_reason::user_shutdown);
  log_line(log_level::info, "[head] stopped");
  return 0;
}

int run_node(const std::vector<std::string>& args) {
  signal_catcher signals;
  cluster_options opts("node");
  opts.name = hostname() + "-" + std::to_string(getpid());
  opts.slots = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  opts.with_token()
    .add(opts.join, "join", "HOST:PORT of the head (required)")
    .add(opts.name, "name", "this node's name, unique in the cluster (default HOSTNAME-PID)")
    .add(opts.wait_for_head, "wait-for-head", "seconds to keep trying to reach the head (default 0: one try)")
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
    .add(opts.data, "data", "Fashion-MNIST folder the workers read (default " + default_data + ")")
    .group("output")
    .add(opts.log_level, "log-level", std::string("the lowest level of the node's log on stderr: ") + log_level_words +
                                        " (default info)");
  if (int rc = parse_command(opts, args, "node"); rc >= 0)
    return rc;
  if (!start_log("node", opts.log_level)) {
    std::cerr << "syncpoint node: --log-level must be " << log_level_words << ", got '" << opts.log_level << "'\n";
    return 2;
  }
  auto at = parse_endpoint(opts.join);
  if (!at) {
    std::cerr << "syncpoint node: --join expects HOST:PORT, got '" << opts.join << "'\n";
    return 2;
  }
  if (opts.slots < 1 || opts.slots > 4096) {
    std::cerr << "syncpoint node: --slots must be in 1..4096\n";
    return 2;
  }
  if (!valid_node_name(opts.name)) {
    std::cerr << "syncpoint node: --name must be 1 to " << max_node_name << " printable characters\n";
    return 2;
  }
  if (opts.rank < -1 || (!opts.launcher.empty() && !valid_node_name(opts.launcher))) {
    std::cerr << "syncpoint node: --rank must be >= 0 and --launcher 1 to " << max_node_name
              << " printable characters\n";
    return 2;
  }
  std::vector<int32_t> gpus;
  try {
    gpus = parse_gpu_list(opts.gpus, this_machine());
  } catch (const config_error& e) {
    std::cerr << "syncpoint node: " << e.what() << "\n";
    return 2;
  }
  auto secret = cluster_secret(opts.token, opts.token_file, "node");
  // A thread per worker slot, up to the cores (a worker is busy one core).
  auto tls = cluster_tls(opts.tls, opts.tls_paths, "node");
  configure_cluster(opts.actor_system, tls, scheduler_threads(opts.slots));
  caf::actor_system sys{opts.actor_system};
  auto head = reach_head(sys, *at, "node", std::chrono::seconds(std::max(0, opts.wait_for_head)));
  std::atomic<bool> joined{false};
  auto why = std::make_shared<std::string>();
  auto why_mutex = std::make_shared<std::mutex>();
  auto code = std::make_shared<int32_t>(0);
  node_config cfg;
  cfg.name = opts.name;
  cfg.slots = opts.slots;
  cfg.gpus = gpus;
  cfg.host = hostname();
  cfg.rank = opts.rank;
  cfg.launcher = opts.rank >= 0 && opts.launcher.empty() ? "launch" : opts.launcher;
  cfg.data_dir = opts.data;
  cfg.head = head;
  cfg.register_timeout = std::chrono::seconds(5);
  cfg.secret = secret;
  // The bulk channel listens where the head is reached from (a head on this
  // machine: loopback), unless --host says otherwise.
  auto listen = opts.listen;
  if (listen.empty()) {
    listen = is_loopback(at->host) ? "127.0.0.1" : local_address_towards(at->host, at->port);
    if (listen.empty()) {
      log_line(log_level::warn, "syncpoint node: no interface of this machine routes to " + at->host +
                    ": the bulk channel listens on every interface (--host ADDR chooses one)");
      listen = "0.0.0.0";
    }
  }
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
  cfg.on_joined = [&, at](const std::string& name) {
    joined = true;
    say(stdout, "node '" + name + "' joined the head at " + opts.join + " with " +
                  std::to_string(opts.slots) + (opts.slots == 1 ? " slot" : " slots"));
  };
  cfg.on_leave = [why, why_mutex, code](const std::string& reason, int32_t asked) {
    std::lock_guard<std::mutex> guard{*why_mutex};
    *why = reason;
    *code = asked;
  };
  auto node = spawn_node(sys, std::move(cfg));
  caf::scoped_actor self{sys};
  self->monitor(node);
  caf::error ended;
  bool down = false;
  while (!down) {
    if (signals.wait(200) && !opts.head_ends_it) {
      self->send_exit(node, caf::exit_reason::user_shutdown);
      self->receive([&](caf::down_msg&) {}, caf::after(std::chrono::seconds(5)) >> [] {});
      log_line(log_level::info, "syncpoint node: leaving the cluster");
      return 0;
    }
    self->receive([&](caf::down_msg& dm) { down = true; ended = dm.reason; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
  }
  std::string reason;
  int32_t asked = 0;
  {
    std::lock_guard<std::mutex> guard{*why_mutex};
    reason = *why;
    asked = *code;
  }
  if (!joined) {
    log_line(log_level::error, "syncpoint node: the head refused this node: " + reason);
    leave_now(2);
  }
  bool failed = ended && ended != caf::exit_reason::normal;
  log_line(failed ? log_level::error : log_level::info, "syncpoint node: " + reason);
  if (!failed && asked != 0)  // launch: every process exits with the job's outcome
    log_line(log_level::info, "syncpoint node: the job's exit code is " + std::to_string(asked));
  return failed ? 1 : asked;
}

}  // namespace syncpoint::cli
