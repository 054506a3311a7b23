// Where a job's workers go, given each node's free slots.
//   spread: each worker to the node with the most free slots left (ties: the
//           node that joined first), so the load is even;
//   pack:   fill the node with the most free slots, then the next, so the
//           job uses as few nodes as possible.
//
//   auto p = place({2, 3}, 4, placement::spread);  // {1, 0, 1, 0}: node per worker
#pragma once

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

}  // namespace syncpoint::cluster
