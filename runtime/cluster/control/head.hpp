// The head: the cluster manager that `syncpoint head` publishes. It keeps the
// table of nodes (joined by name, watched by heartbeats and CAF monitors),
// places each submitted job's workers on free slots, and runs the job's PS
// side in its own process (runtime/cluster/jobs/job_runner.hpp).
//
//   auto head = spawn_head(sys, {"/usr/share/datasets/fashion-mnist", log});
//   sys.middleman().publish(head, 4242, "0.0.0.0");
#pragma once

#include "runtime/cluster/dataplane/data_plane.hpp"
#include "runtime/cluster/control/head_journal.hpp"
#include "runtime/cluster/wire/interfaces.hpp"
#include "runtime/cluster/jobs/placement.hpp"
#include "runtime/cluster/jobs/watch.hpp"

#include <functional>
#include <optional>

namespace syncpoint::cluster {

struct head_config {
  std::string data_dir;                        // the head's Fashion-MNIST (for evaluation)
  std::string control_token = make_token();    // shutdown_atom must carry it (in-process, or launch's rank 0)
  std::function<void()> on_shut_down;          // the nodes were told to leave (on the head's thread)
  std::string secret;                          // nodes, submits and status requests must carry it ("": none)
  placement default_placement = placement::spread;
  std::function<void(const std::string&)> log; // one line per event (node joined, job ended, ...)
  std::shared_ptr<data_plane> plane;           // the bulk channel for shards here (null: none)
  dashboard_link dashboard;                    // the dashboard's hub and where finished jobs' files go (none: no hub)
  // head --state DIR: the folder and the journal read from it (its epoch
  // already counted: the command wrote it back before the head started).
  // The jobs it lists as running go on from their newest checkpoints once
  // their nodes are back, or after `rejoin_wait` with the nodes there are.
  std::string state_dir;
  std::optional<head_journal> journal;
  caf::timespan rejoin_wait = std::chrono::seconds(120);
};

head_actor spawn_head(caf::actor_system& sys, head_config cfg);

}  // namespace syncpoint::cluster
