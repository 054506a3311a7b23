// A sweep's cell on a node: `syncpoint train` in a process of its own,
// writing into a temporary folder, and a watch that waits for it, sends its
// files to the sweep chunk by chunk (each acknowledged before the next) and
// then its end, done or failed, and removes the folder. A cell the node
// kills (the sweep stopped, the node left) is not reported.
//
//   auto cell = start_cell(sys, order, sink, "/proc/self/exe");  // on a node's cell request
//   if (!cell.error.empty()) ...;                                // refused: why
#pragma once

#include "runtime/cluster/wire/interfaces.hpp"

#include <atomic>
#include <mutex>
#include <memory>
#include <sys/types.h>

namespace syncpoint::cluster {

/// What a cell's watch and its node share about its process.
struct cell_process {
  std::mutex reaping;         // kill() only before the pid is reaped (then it may name another process)
  bool reaped = false;
  std::atomic<bool> killed{false};   // by the node: the watch reports nothing
  // Set once the process ended, before its files are sent: its slot is free
  // when the sweep hears the cell's end (its watch may still be finishing).
  std::atomic<bool> exited{false};
};

struct hosted_cell {
  std::string error;     // why it did not start ("": it runs)
  pid_t pid = -1;
  uint64_t sweep = 0;
  caf::actor watch;      // ends once the cell was reported (or killed)
  std::shared_ptr<cell_process> process = std::make_shared<cell_process>();
};

/// Whether the cell still takes its slot.
inline bool takes_slot(const hosted_cell& cell) { return !cell.process->exited.load(); }

/// Starts `order`'s cell with `train_exe` (a syncpoint binary) and its watch.
hosted_cell start_cell(caf::actor_system& sys, const cell_order& order, const cell_sink_actor& sink,
                       const std::string& train_exe, const std::string& node_name);

/// Kills the cell's process; its watch then ends without a report.
void kill_cell(hosted_cell& cell);

}  // namespace syncpoint::cluster
