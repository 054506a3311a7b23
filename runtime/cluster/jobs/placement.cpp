#include "runtime/cluster/jobs/placement.hpp"
#include "runtime/job/devices.hpp"

#include <algorithm>
#include <numeric>

namespace syncpoint::cluster {

std::optional<placement> parse_placement(const std::string& s) {
  if (s == "spread")
    return placement::spread;
  if (s == "pack")
    return placement::pack;
  return std::nullopt;
}

std::optional<std::vector<size_t>> place(const std::vector<int>& free_in, int workers,
                                         placement how) {
  std::vector<int> free = free_in;
  for (auto& f : free)
    f = std::max(f, 0);
  if (workers < 0 || std::accumulate(free.begin(), free.end(), 0LL) < workers)
    return std::nullopt;
  std::vector<size_t> out;
  out.reserve(static_cast<size_t>(workers));
  if (how == placement::spread) {
    for (int w = 0; w < workers; ++w) {
      auto best = static_cast<size_t>(std::max_element(free.begin(), free.end()) - free.begin());
      out.push_back(best);  // max_element returns the first of equals: the earliest node
      --free[best];
    }
    return out;
  }
  std::vector<size_t> order(free.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return free[a] > free[b]; });
  for (auto node : order)
    while (free[node] > 0 && static_cast<int>(out.size()) < workers) {
      out.push_back(node);
      --free[node];
    }
  return out;
}

std::optional<gpu_placement> place_on_gpus(const std::vector<int>& free_in, const std::vector<std::vector<int32_t>>& gpus,
                                           int workers, placement how, const std::string& device) {
  int wanted = cuda_index(device);  // -1: any of a node's GPUs
  auto offers = [&](size_t node) {
    if (node >= gpus.size() || gpus[node].empty())
      return false;
    return wanted < 0 || std::find(gpus[node].begin(), gpus[node].end(), wanted) != gpus[node].end();
  };
  std::vector<int> free = free_in;
  for (size_t k = 0; k < free.size(); ++k)
    if (!offers(k))
      free[k] = 0;
  auto where = place(free, workers, how);
  if (!where)
    return std::nullopt;
  gpu_placement g;
  g.nodes = *where;
  std::vector<size_t> taken(free.size(), 0);  // workers given to each node so far
  for (auto node : g.nodes) {
    auto& on = gpus[node];
    auto gpu = wanted >= 0 ? wanted : on[taken[node]++ % on.size()];
    g.devices.push_back("cuda:" + std::to_string(gpu));
  }
  return g;
}

std::optional<std::vector<std::vector<size_t>>> place_replicas(const std::vector<int32_t>& shard_hosts, size_t shards,
                                                               size_t hosts, int replicas) {
  auto r_max = static_cast<size_t>(std::max(0, replicas));
  bool on_head = shard_hosts.empty();
  if (r_max == 0)
    return std::vector<std::vector<size_t>>(shards);
  if (hosts == 0 || r_max + (on_head ? 0 : 1) > hosts)
    return std::nullopt;
  std::vector<std::vector<size_t>> out(shards);
  for (size_t k = 0; k < shards; ++k)
    for (size_t r = 1; r <= r_max; ++r)
      out[k].push_back(on_head ? (k + r - 1) % hosts : (static_cast<size_t>(shard_hosts[k]) + r) % hosts);
  return out;
}

}  // namespace syncpoint::cluster
