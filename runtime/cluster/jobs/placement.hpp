// Where a job's workers go, given each node's free slots.
//   spread: each worker to the node with the most free slots left (ties: the
//           node that joined first), so the load is even;
//   pack:   fill the node with the most free slots, then the next, so the
//           job uses as few nodes as possible.
//
//   auto p = place({2, 3}, 4, placement::spread);  // {1, 0, 1, 0}: node per worker
//
// A job that wants GPUs (--device cuda or cuda:N) is placed the same way on
// the slots of the nodes that offer them (node --gpus; for cuda:N, GPU N), and
// each worker takes its node's GPUs round robin, as workers of one process do:
//
//   auto g = place_on_gpus({2, 2}, {{}, {0, 1}}, 2, placement::spread, "cuda");
//   // g->nodes {1, 1}, g->devices {"cuda:0", "cuda:1"}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace syncpoint::cluster {

enum class placement { spread, pack };

/// Parses "spread" or "pack".
std::optional<placement> parse_placement(const std::string& s);

/// The node index of each of `workers` workers, or nothing if the free slots
/// do not suffice.
std::optional<std::vector<size_t>> place(const std::vector<int>& free, int workers, placement how);

/// Where each shard's `replicas` replicas go (--ps-replicas), as indices into
/// the job's `hosts` worker nodes: copy r of shard k at [k][r - 1], each on
/// another host than the shard's other copies. The primaries are on
/// `shard_hosts` (--ps-placement nodes) or, when it is empty, all on the head,
/// which is then one host more. Nothing when there are fewer hosts than copies.
///
///   place_replicas({0, 1}, 2, 2, 1);  // {{1}, {0}}: shard 0's replica on host 1, shard 1's on host 0
std::optional<std::vector<std::vector<size_t>>> place_replicas(const std::vector<int32_t>& shard_hosts, size_t shards,
                                                               size_t hosts, int replicas);

struct gpu_placement {
  std::vector<size_t> nodes;         ///< per worker: its node's index
  std::vector<std::string> devices;  ///< per worker: "cuda:N" on that node
};

/// Places `workers` workers asking for `device` ("cuda" or "cuda:N") on the
/// free slots of the nodes whose `gpus` (per node, the indices it offers) can
/// give it; nothing if they do not suffice.
std::optional<gpu_placement> place_on_gpus(const std::vector<int>& free, const std::vector<std::vector<int32_t>>& gpus,
                                           int workers, placement how, const std::string& device);

}  // namespace syncpoint::cluster
