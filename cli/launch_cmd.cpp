// syncpoint launch [OPTIONS] -- TRAIN-OPTIONS: the one command every process
// of a launched job runs (srun, mpirun, torchrun-style variables, a Kubernetes
// Indexed Job; docs/launch.md). Rank 0 starts the head (a child process of
// this program), waits for the other ranks to join it as nodes, submits the
// job, writes its files and ends the head; the others are nodes.
#include "cli/launch_cmd.hpp"

#include "cli/cluster_cmds.hpp"
#include "cli/option_table.hpp"
#include "runtime/cluster/control/head.hpp"
#include "runtime/cluster/client/launch.hpp"
#include "runtime/job/devices.hpp"
#include "runtime/studies/sweep.hpp"
#include "models/data_paths.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <iostream>
#include <thread>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace syncpoint::cli {

using namespace syncpoint::cluster;

namespace {

struct launch_options {
  std::string head;        // HOST:PORT, over the launcher's
  int port = 0;            // over the launcher's (or the job id's)
  std::string slots = "auto";  // a node rank's workers (auto: from the allocation)
  std::string gpus = "auto";   // the GPUs its workers may take (auto: those the launcher gave it)
  int head_slots = 0;      // workers the head hosts
  int wait_s = 120;        // for the head to listen, and for the nodes to join
  std::string token_file;  // else SYNCPOINT_TOKEN_FILE, else SYNCPOINT_TOKEN (never the secret on a command line)
  bool tls = false;
  tls_files tls_paths;
  std::string data;
  std::string dashboard = "off";
  caf::actor_system_config actor_system;
  option_table table{"launch"};

  launch_options() {
    table.about("syncpoint launch [OPTIONS] -- TRAIN-OPTIONS\n\nRun by every process of a job a launcher starts "
                "(srun, mpirun, mpiexec, torchrun-style RANK/WORLD_SIZE, a Kubernetes Indexed Job): rank 0 "
                "becomes the head and submits the job given after --, the other ranks join it as nodes. Each "
                "process exits with the job's outcome (docs/launch.md).")
      .add(head, "head", "HOST:PORT of the head (default: MASTER_ADDR:MASTER_PORT, else the first host of "
                         "Slurm's node list, with a port derived from the job's id)")
      .add(port, "port", "the head's port (default: MASTER_PORT, else derived from the job's id)")
      .add(slots, "slots", "workers each node rank hosts: N, or auto (default): one per GPU the launcher gave the "
                           "rank, else SLURM_CPUS_PER_TASK, else 1")
      .add(gpus, "gpus", "the GPUs a node rank's workers may take: a list like 0,1, none, or auto (default): "
                         "CUDA_VISIBLE_DEVICES, else SLURM_GPUS_ON_NODE, where this build has CUDA")
      .add(head_slots, "head-slots", "workers the head (rank 0) hosts too (default 0)")
      .add(wait_s, "wait", "seconds a node waits to reach the head, and the head for the nodes (default 120)")
      .add(token_file, "token-file", "a file holding the cluster's token (default: SYNCPOINT_TOKEN_FILE, else "
                                     "the variable SYNCPOINT_TOKEN)")
      .add(tls, "tls", "TLS between the ranks (then --cert, --key, --ca)")
      .add(tls_paths.cert, "cert", "this process's certificate (PEM)")
      .add(tls_paths.key, "key", "its private key (PEM)")
      .add(tls_paths.ca, "ca", "the CA that signed the peers' certificates (PEM)")
      .add(data, "data", "the Fashion-MNIST folder of every rank (default " + std::string(default_fashion_mnist_dir) + ")")
      .add(dashboard, "dashboard", "the head's dashboard port ('any': a free one; default off)")
      .actor_system(actor_system);
  }
  std::string parse_args(const std::vector<std::string>& args) { return table.parse_args(args); }
  bool help_printed() const { return table.help_printed(); }
};

// The arguments every part of the job shares: the token (by file) and TLS.
std::vector<std::string> access_args(const launch_options& o) {
  std::vector<std::string> out;
  if (!o.token_file.empty())
    out.insert(out.end(), {"--token-file", o.token_file});
  if (o.tls)
    out.insert(out.end(), {"--tls", "--cert", o.tls_paths.cert, "--key", o.tls_paths.key, "--ca", o.tls_paths.ca});
  return out;
}

// Whether the job's options ask for the virtual clock (it runs in one process: rank 0's).
bool virtual_clock(const std::vector<std::string>& job) {
  for (size_t i = 0; i < job.size(); ++i)
    if (job[i] == "--clock=virtual" || (job[i] == "--clock" && i + 1 < job.size() && job[i + 1] == "virtual"))
      return true;
  return false;
}

// Replaces this process with this program running `args` (a child of the launcher still).
[[noreturn]] void become(std::vector<std::string> args) {
  auto program = this_program();  // this executable, or the interpreter's command (python3 -m syncpoint)
  if (program.size() == 1)
    program.front() = "syncpoint";
  args.insert(args.begin(), program.begin(), program.end());
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  auto exe = this_program().front();
  std::fflush(stdout);
  std::fflush(stderr);
  execv(exe.c_str(), argv.data());
  std::fprintf(stderr, "syncpoint launch: cannot run this program again (%s): %s\n", exe.c_str(), std::strerror(errno));
  _exit(2);
}

// A node rank's slots and GPUs (--gpus's list, "" none), from the options and the allocation.
struct node_placement {
  int slots = 1;
  std::string gpus;
  std::string error;  // a bad --slots or --gpus, in words
  std::string note;   // GPUs the launcher gave that this build cannot use
};

node_placement placement_of(const launch_options& o, const launch_env& env) {
  node_placement out;
  std::vector<int> gpus;
  if (o.gpus == "auto") {
    // The launcher's GPUs, where this build can use them (a CPU-only LibTorch offers none).
    auto here = this_machine();
    for (int g : env.gpus)
      if (here.cuda && g < here.gpus)
        gpus.push_back(g);
    if (gpus.size() < env.gpus.size())
      out.note = "the launcher gave this rank " + std::to_string(env.gpus.size()) + " GPU(s), and this build sees " +
                 (here.cuda ? std::to_string(here.gpus) : std::string("none (a LibTorch without CUDA)")) +
                 ": the node offers " + std::to_string(gpus.size());
  } else if (o.gpus != "none") {
    try {
      for (int g : parse_gpu_list(o.gpus, this_machine()))
        gpus.push_back(g);
    } catch (const config_error& e) {
      out.error = e.what();
      return out;
    }
  }
  for (size_t i = 0; i < gpus.size(); ++i)
    out.gpus += (i ? "," : "") + std::to_string(gpus[i]);
  if (o.slots == "auto") {
    out.slots = !gpus.empty() ? static_cast<int>(gpus.size()) : env.cpus_per_task > 0 ? env.cpus_per_task : 1;
    out.slots = std::min(out.slots, 4096);
    return out;
  }
  try {
    size_t used = 0;
    out.slots = std::stoi(o.slots, &used);
    if (used != o.slots.size() || out.slots < 1 || out.slots > 4096)
      throw std::invalid_argument(o.slots);
  } catch (const std::exception&) {
    out.error = "--slots must be auto or a number in 1..4096, got '" + o.slots + "'";
  }
  return out;
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Starts this program as the head, in a child process (a signal to the job
// reaches it as it would a head started by hand). Its pid, or -1.
pid_t start_head(const launch_options& o, int port, const std::string& listen, const std::string& control) {
  std::vector<std::string> args{"head", "--port", std::to_string(port), "--host", listen, "--slots",
                                std::to_string(o.head_slots), "--dashboard", o.dashboard, "--stay-on-signal"};
  if (!o.data.empty())
    args.insert(args.end(), {"--data", o.data});
  args = joined(args, access_args(o));
  setenv(head_control_variable, control.c_str(), 1);  // before the fork: the child only execs
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // rank 0 killed outright: its head goes too (it stays on SIGTERM)
    signal(SIGUSR1, SIG_IGN);          // ignored across the exec, until the head's own catcher takes it
    become(args);
  }
  unsetenv(head_control_variable);
  return pid;
}

// Waits until the head at `at` lists `nodes` nodes, or the deadline, or a
// SIGINT/SIGTERM (`interrupted` takes it); "" or why not. A SIGUSR1 waits in
// `signals` for the job (a checkpoint once it runs).
std::string await_nodes(const launch_options& o, const endpoint& at, size_t nodes, pid_t head,
                        const std::string& secret, signal_catcher& signals, int& interrupted, bool& head_gone) {
  caf::actor_system_config cfg;
  configure_cluster(cfg, cluster_tls(o.tls, o.tls_paths, "launch"));
  caf::actor_system sys{cfg};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.wait_s);
  std::string last = "the head did not listen";
  caf::scoped_actor self{sys};
  std::optional<head_actor> h;
  while (std::chrono::steady_clock::now() < deadline) {
    if ((interrupted = signals.wait(0)) != 0)
      return std::string("interrupted (") + (interrupted == SIGINT ? "SIGINT" : "SIGTERM") + ") before the job started";
    if ((head_gone = waitpid(head, nullptr, WNOHANG) == head))
      return "the head ended before the job started (its messages are above)";
    if (!h) {
      auto c = connect_head(sys, at, std::chrono::seconds(2));
      if (c)
        h = *c;
      else
        last = sys.render(c.error());
    }
    if (h) {
      size_t seen = 0;
      self->request(*h, std::chrono::seconds(5), status_atom::value, cluster::credential{secret})
        .receive([&](cluster_status& s) { seen = s.nodes.size(); },
                 [&](caf::error& e) { last = sys.render(e); });
      if (seen >= nodes)
        return "";
      last = std::to_string(seen) + " of " + std::to_string(nodes) + " nodes joined";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return "not ready within --wait " + std::to_string(o.wait_s) + " s: " + last;
}

// Whether `pid` ended within `limit` (reaped).
bool ended_within(pid_t pid, std::chrono::seconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto r = waitpid(pid, nullptr, WNOHANG); r == pid || (r < 0 && errno == ECHILD))
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Ends the head: asked with its control secret, so that it tells the nodes
// to leave with the job's exit code `rc`; killed if it cannot be asked or
// does not end (it stays on SIGTERM).
void end_head(const launch_options& o, pid_t head, const endpoint& local, const std::string& control, int rc) {
  bool asked = false;
  {
    caf::actor_system_config cfg;
    configure_cluster(cfg, cluster_tls(o.tls, o.tls_paths, "launch"));
    caf::actor_system sys{cfg};
    if (auto h = connect_head(sys, local, std::chrono::seconds(5))) {
      caf::scoped_actor self{sys};
      self->request(*h, std::chrono::seconds(30), shutdown_atom::value, cluster::credential{control}, static_cast<int32_t>(rc))
        .receive([&](bool) { asked = true; }, [&](caf::error& e) {
          std::cerr << "syncpoint launch: the head did not end as asked: " << sys.render(e) << "\n";
        });
    }
  }
  if (asked && ended_within(head, std::chrono::seconds(30)))
    return;
  kill(head, SIGKILL);  // it stays on SIGTERM (--stay-on-signal)
  waitpid(head, nullptr, 0);
}

int run_rank0(const launch_options& o, const launch_env& env, const endpoint& at, const std::vector<std::string>& job) {
  // A head named by a loopback address (every rank here): it listens there only; else on every
  // interface, since the nodes come from other hosts.
  std::string listen = resolves_to_loopback(at.host) ? "127.0.0.1" : "0.0.0.0";
  signal_catcher signals;  // from here on, run_submit's catcher takes over what comes
  auto control = make_token();
  pid_t head = start_head(o, at.port, listen, control);
  if (head < 0) {
    std::cerr << "syncpoint launch: cannot start the head: " << std::strerror(errno) << "\n";
    return 2;
  }
  auto secret = cluster_secret("", o.token_file, "launch");  // (or SYNCPOINT_TOKEN_FILE, SYNCPOINT_TOKEN)
  endpoint local{"127.0.0.1", at.port};
  int interrupted = 0;
  bool head_gone = false;
  if (auto why = await_nodes(o, local, static_cast<size_t>(env.world - 1), head, secret, signals, interrupted,
                             head_gone);
      !why.empty()) {
    std::cerr << "syncpoint launch: rank 0 (the head, " << at.host << ":" << at.port << "): " << why << "\n";
    int rc = interrupted ? 128 + interrupted : 1;
    if (!head_gone)
      end_head(o, head, local, control, rc);
    return rc;
  }
  int rc = run_submit(joined(joined({"--head", "127.0.0.1:" + std::to_string(at.port)}, access_args(o)), job));
  end_head(o, head, local, control, rc);  // every rank exits with the job's outcome
  return rc;
}

}  // namespace

int run_launch(const std::vector<std::string>& args) {
  // Slurm's warning (--signal=USR1@T) goes to every task of the job, and its default would end
  // the process: until a part of the job takes it (rank 0's submit), it changes nothing.
  signal(SIGUSR1, SIG_IGN);
  auto dashes = std::find(args.begin(), args.end(), "--");
  std::vector<std::string> own(args.begin(), dashes);
  std::vector<std::string> job(dashes == args.end() ? dashes : dashes + 1, args.end());
  launch_options o;
  if (int rc = parse_command(o, own, "launch"); rc >= 0)
    return rc;
  launch_env env;
  try {
    env = read_launch_env(process_env());
  } catch (const config_error& e) {
    std::cerr << "syncpoint launch: " << e.what() << "\n";
    return 2;
  }
  // The head's address: --head, else the launcher's; --port over either.
  endpoint at{env.head_host, static_cast<uint16_t>(env.head_port)};
  if (!o.head.empty()) {
    auto given = parse_endpoint(o.head);
    if (!given) {
      std::cerr << "syncpoint launch: --head expects HOST:PORT, got '" << o.head << "'\n";
      return 2;
    }
    at = *given;
  }
  if (o.port != 0) {
    if (o.port < 1 || o.port > 65535) {
      std::cerr << "syncpoint launch: --port must be in 1..65535\n";
      return 2;
    }
    at.port = static_cast<uint16_t>(o.port);
  }
  if (at.host.empty() || at.port == 0) {
    std::cerr << "syncpoint launch: rank " << env.rank << " of " << env.world << " (" << env.launcher
              << ") does not know where the head is: " << (at.host.empty() ? "no host" : "no port")
              << " (set MASTER_ADDR and MASTER_PORT, or give --head HOST:PORT)\n";
    return 2;
  }
  if (o.head_slots < 0 || o.head_slots > 4096 || o.wait_s < 1) {
    std::cerr << "syncpoint launch: --head-slots must be in 0..4096 and --wait >= 1\n";
    return 2;
  }
  auto placed = placement_of(o, env);
  if (!placed.error.empty()) {
    std::cerr << "syncpoint launch: " << placed.error << "\n";
    return 2;
  }
  if (!placed.note.empty() && env.rank != 0)
    std::cerr << "syncpoint launch: rank " << env.rank << ": " << placed.note << "\n";
  if (env.world == 1 && o.head_slots == 0)
    o.head_slots = 1;  // a job of one rank: the head hosts it
  if (virtual_clock(job)) {  // virtual time runs in one process: rank 0 trains, the others have nothing to do
    if (env.rank != 0) {
      std::printf("syncpoint launch: rank %d: the virtual clock runs the whole job in rank 0\n", env.rank);
      return 0;
    }
    signal(SIGUSR1, SIG_IGN);  // a real-clock checkpoint's signal: the virtual clock has no use for it
    become(joined({"train"}, job));
  }
  if (env.rank == 0)
    return run_rank0(o, env, at, job);
  std::vector<std::string> node{"--join", at.host + ":" + std::to_string(at.port), "--name",
                                hostname() + "-rank" + std::to_string(env.rank), "--slots", std::to_string(placed.slots),
                                "--wait-for-head", std::to_string(o.wait_s), "--stay-on-signal", "--rank",
                                std::to_string(env.rank), "--launcher", env.launcher};
  if (!placed.gpus.empty())
    node.insert(node.end(), {"--gpus", placed.gpus});
  if (!o.data.empty())
    node.insert(node.end(), {"--data", o.data});
  return run_node(joined(node, access_args(o)));
}

}  // namespace syncpoint::cli
