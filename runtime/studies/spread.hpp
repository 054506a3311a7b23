// Values of one figure over seeds (or over the cells of a sweep): the mean,
// and the spread as min–max. Values that are not there (a target not
// reached, a cell not finished) are counted apart.
//
//   syncpoint::spread t;
//   for (auto& s : summaries)
//     t.add(s.time_to_target_s >= 0 ? std::optional(s.time_to_target_s) : std::nullopt);
//   std::printf("%s\n", t.str("%.2f").c_str());   // "12.31 (11.02–13.50)"
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace syncpoint {

struct spread {
  std::vector<double> xs;  // the values, in the order added
  size_t missing = 0;      // values that were not there

  void add(double x) { xs.push_back(x); }
  void add(std::optional<double> x);
  size_t n() const { return xs.size(); }
  bool empty() const { return xs.empty(); }
  double mean() const;  // 0 when empty
  double lo() const;
  double hi() const;
  /// Whether the two ranges [lo, hi] share a point: a difference within the spread.
  bool overlaps(const spread& other) const;
  /// "0.8512" for one value, "0.8512 (0.8490–0.8530)" for several, with a printf format.
  std::string str(const char* format) const;
};

}  // namespace syncpoint
