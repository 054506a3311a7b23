// A node: joins the head, beats every second, and hosts up to `slots`
// workers, each spawned on request of a job running on the head, or sweep
// cells, each a `syncpoint train` process (runtime/cluster/control/cell_host.hpp). A
// worker reads its shard from this node's data folder.
//
//   auto node = spawn_node(sys, {"gpu-box-1", 8, "/data/fashion-mnist", head});
//
// The node quits with an error if the head refuses it (name taken, another
// schema), cannot be reached or is lost, and normally when the head tells it
// to leave; its workers and shards go with it. A node process whose head keeps
// a journal starts another node actor once the head is back (node --head-wait):
// every job's coordinator lives on the head, so nothing of a job outlives it;
// the data set the process loaded does (node_config::loaded).
#pragma once

#include "runtime/cluster/dataplane/data_plane.hpp"
#include "runtime/cluster/wire/interfaces.hpp"

#include <syncpoint/dataset.hpp>

#include <functional>
#include <memory>

namespace syncpoint::cluster {

/// The training set a node process loaded last. It outlives the node actor: one started again
/// after its head's loss (node --head-wait) finds it loaded. One node actor at a time uses it.
struct loaded_data {
  std::string key;  // data_key of the job config it was loaded for
  std::shared_ptr<const dataset> train;
};

struct node_config {
  std::string name;
  int slots = 1;
  std::string data_dir;          // Fashion-MNIST here (the job's own data_dir is the head's)
  head_actor head;
  caf::timespan register_timeout = std::chrono::seconds(10);
  caf::timespan heartbeat = std::chrono::seconds(1);
  /// Told once the head accepted the node (the name, and whether the head
  /// keeps a journal: head --state), and when the node leaves: why, and the
  /// exit code the head asked it to leave with (0 when it did not).
  std::function<void(const std::string&, bool)> on_joined;
  std::function<void(const std::string&, int32_t)> on_leave;
  std::string secret;            // the cluster's token, if the head requires one
  // The process's data plane (runtime/cluster/dataplane/data_plane.hpp; null: none),
  // and the host this process reaches the head at (for the head's shards).
  std::shared_ptr<data_plane> plane;
  std::string head_host;
  /// The syncpoint binary that runs a sweep's cells (`EXE train ...`; empty: this_program()).
  std::string train_exe;
  /// Told what the node decided on its own (a worker's shard left on CAF, and why).
  std::function<void(const std::string&)> on_note;
  std::vector<int32_t> gpus;     // CUDA devices its workers may take (--gpus; checked by the command)
  std::string host;              // this machine's name (status and the dashboard show it)
  std::string launcher;          // syncpoint launch: the launcher that started it ("": by hand)
  int32_t rank = -1;             // and its rank in that job (-1: none)
  std::shared_ptr<loaded_data> loaded = std::make_shared<loaded_data>();  // (shared by copies of this config)
};

node_actor spawn_node(caf::actor_system& sys, node_config cfg);

/// Why a node leaves when it loses the connection to its head (on_leave).
inline constexpr const char* head_lost = "lost the connection to the head";

}  // namespace syncpoint::cluster
