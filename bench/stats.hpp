// Figures the benchmarks share.
#pragma once

#include <algorithm>
#include <vector>

namespace syncpoint::bench {

/// The median of `xs` (the upper one of an even count); `xs` not empty.
inline double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs[xs.size() / 2];
}

}  // namespace syncpoint::bench
