// Ctrl-C, SIGTERM and SIGUSR1 for the cluster commands (cli/cluster_cmds.hpp,
// signal_catcher): caught by a handler that wakes a waiting thread.
#include "cli/cluster_cmds.hpp"

#include <atomic>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace syncpoint::cli {

namespace {

// A handler, not sigwait: sigwait needs the signals blocked in every thread,
// and libraries start threads before main (OpenBLAS's pthreads build starts
// its pool when it is loaded), which the kernel may then pick to take them.
std::atomic<int> last_signal{0};
std::atomic<int> pending_signals{0};
std::atomic<int> pending_usr1{0};
int wake_pipe[2] = {-1, -1};

void on_signal(int sig) {
  if (sig == SIGUSR1) {
    pending_usr1.fetch_add(1);
    return;
  }
  last_signal.store(sig);
  pending_signals.fetch_add(1);
  char c = 0;
  [[maybe_unused]] auto n = write(wake_pipe[1], &c, 1);  // async-signal-safe
}

}  // namespace

signal_catcher::signal_catcher() {
  if (wake_pipe[0] < 0 && pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    wake_pipe[0] = wake_pipe[1] = -1;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);  // its default would end the process: Slurm sends it before a time limit
}

bool signal_catcher::take_usr1() {
  int n = pending_usr1.load();
  while (n > 0 && !pending_usr1.compare_exchange_weak(n, n - 1)) {
  }
  return n > 0;
}

int signal_catcher::wait(int ms) {
  auto take = [] {
    int n = pending_signals.load();
    while (n > 0 && !pending_signals.compare_exchange_weak(n, n - 1)) {
    }
    return n > 0 ? last_signal.load() : 0;
  };
  if (int sig = take())
    return sig;
  if (ms > 0 && wake_pipe[0] >= 0) {
    pollfd p{wake_pipe[0], POLLIN, 0};
    poll(&p, 1, ms);
  }
  char drain[16];
  while (wake_pipe[0] >= 0 && read(wake_pipe[0], drain, sizeof drain) > 0) {
  }
  return take();
}

}  // namespace syncpoint::cli
