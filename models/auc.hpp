// The area under the ROC curve of scored binary labels: what ctr's
// evaluation reports and what clicks_best_auc states. Not part of the API.
//
//   double a = syncpoint::auc_of({{0.9, 1}, {0.2, 0}, {0.4, 1}});  // 1.0
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace syncpoint {

/// The share of (positive, negative) pairs whose scores are in the right
/// order, ties counting half; 0.5 when either class is missing.
inline double auc_of(std::vector<std::pair<double, int64_t>> scored) {
  std::sort(scored.begin(), scored.end());
  double positives = 0, negatives = 0, right = 0;
  for (size_t i = 0; i < scored.size();) {
    size_t j = i;
    double pos = 0, neg = 0;
    for (; j < scored.size() && scored[j].first == scored[i].first; ++j)
      (scored[j].second == 1 ? pos : neg) += 1;
    right += pos * negatives + 0.5 * pos * neg;  // every negative scored lower, half of the tied ones
    positives += pos;
    negatives += neg;
    i = j;
  }
  return positives > 0 && negatives > 0 ? right / (positives * negatives) : 0.5;
}

}  // namespace syncpoint
