#include "runtime/cluster/control/cell_host.hpp"

#include "runtime/studies/sweep.hpp"

#include <caf/blocking_actor.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

namespace syncpoint::cluster {

namespace fs = std::filesystem;

namespace {

struct watch_setup {
  pid_t pid;
  std::string dir;
  cell_order order;
  cell_sink_actor sink;
  std::shared_ptr<cell_process> process;
  std::chrono::steady_clock::time_point start;
};

// Sends one file in chunks, each acknowledged; false at the first refusal or error.
bool send_file(caf::blocking_actor* self, const watch_setup& w, const char* name) {
  std::ifstream in(w.dir + "/" + name, std::ios::binary);
  if (!in)
    return true;  // the run did not write it
  std::string bytes(max_cell_chunk, '\0');
  uint64_t offset = 0;
  bool ok = true;
  do {
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    auto got = static_cast<size_t>(in.gcount());
    if (got == 0 && offset > 0)
      break;
    cell_chunk chunk{w.order.index, w.order.attempt, name, offset, bytes.substr(0, got)};
    self->request(w.sink, std::chrono::seconds(120), cell_atom::value, w.order.key, std::move(chunk))
      .receive([&](bool accepted) { ok = accepted; }, [&](caf::error&) { ok = false; });
    offset += got;
  } while (ok && in);
  return ok;
}

// Waits for the process to end without reaping it: until it is reaped its
// pid names no other process, so the node may still kill() it.
int wait_for_end(pid_t pid) {
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  return info.si_code == CLD_EXITED ? (info.si_status & 0xff) << 8 : info.si_status & 0x7f;  // as waitpid's status
}

void watch(caf::blocking_actor* self, watch_setup w) {
  int status = wait_for_end(w.pid);
  w.process->exited.store(true);
  if (!w.process->killed.load()) {
    bool ran = WIFEXITED(status) && WEXITSTATUS(status) == 0 && fs::exists(w.dir + "/summary.json");
    bool sent = true;
    for (auto* name : cell_files)
      if (sent)
        sent = send_file(self, w, name);
    auto message = !ran ? process_error(w.dir + "/stderr.txt", status) : sent ? "" : "its files did not reach the sweep";
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - w.start).count();
    self->send(w.sink, cell_atom::value, w.order.key,
               cell_event{ran && sent ? "done" : "failed", w.order.index, w.order.attempt, "", message, seconds, 0, 0});
  }
  {
    std::lock_guard<std::mutex> guard{w.process->reaping};
    while (waitpid(w.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    w.process->reaped = true;
  }
  std::error_code ignored;
  fs::remove_all(w.dir, ignored);
}

}  // namespace

hosted_cell start_cell(caf::actor_system& sys, const cell_order& order, const cell_sink_actor& sink,
                       const std::string& train_exe, const std::string& node_name) {
  hosted_cell cell;
  cell.sweep = order.sweep;
  if (auto why = cell_args_refusal(order.args); !why.empty()) {
    cell.error = "node " + node_name + ": " + why;
    return cell;
  }
  auto base = fs::temp_directory_path() / "syncpoint-cell-XXXXXX";
  std::string dir = base.string();
  if (!mkdtemp(dir.data())) {
    cell.error = "node " + node_name + ": no temporary folder for the cell (" + std::strerror(errno) + ")";
    return cell;
  }
  cell.pid = launch_train_process(order.args, dir, dir + "/stderr.txt", train_exe, true);
  if (cell.pid <= 0) {
    fs::remove_all(dir);
    cell.error = "node " + node_name + ": could not start the cell's process";
    return cell;
  }
  cell.watch = sys.spawn<caf::detached>(watch, watch_setup{cell.pid, dir, order, sink, cell.process,
                                                           std::chrono::steady_clock::now()});
  return cell;
}

void kill_cell(hosted_cell& cell) {
  cell.process->killed.store(true);
  std::lock_guard<std::mutex> guard{cell.process->reaping};
  if (cell.pid > 0 && !cell.process->reaped)
    kill(cell.pid, SIGKILL);
}

}  // namespace syncpoint::cluster
