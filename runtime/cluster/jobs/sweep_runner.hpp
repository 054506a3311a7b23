// One sweep (`syncpoint sweep --head`), run on the head: it takes free slots
// as an elastic job does (grow), runs one cell per slot on its node, relays
// each cell's files to the submitting client chunk by chunk (each chunk
// acknowledged once the client wrote it), and gives a slot back when no cell
// waits for it. A cell whose node dies is placed again, at most
// `max_attempts` times in all. The sweep ends when every cell is done or
// failed, when the client goes away, or on (stop, head token, reason).
//
//   auto sweep = spawn_sweep(sys, {id, cells, client, head_actor{self}, control_token});
#pragma once

#include "runtime/cluster/wire/interfaces.hpp"

namespace syncpoint::cluster {

struct sweep_setup {
  uint64_t id = 0;
  std::vector<sweep_cell_order> cells;
  sweep_client_actor client;
  head_actor head;
  std::string head_token;                 // what the head accepts updates with, and sends grow/stop with
  int max_attempts = 3;
  caf::timespan relay_timeout = std::chrono::seconds(60);   // the client writing a chunk
};

sweep_actor spawn_sweep(caf::actor_system& sys, sweep_setup setup);

}  // namespace syncpoint::cluster
