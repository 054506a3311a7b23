#include "runtime/cluster/placement.hpp"

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

}  // namespace syncpoint::cluster
