#include "runtime/studies/spread.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace syncpoint {

void spread::add(std::optional<double> x) {
  if (x)
    xs.push_back(*x);
  else
    ++missing;
}

double spread::mean() const {
  return xs.empty() ? 0 : std::accumulate(xs.begin(), xs.end(), 0.0) / static_cast<double>(xs.size());
}

double spread::lo() const { return xs.empty() ? 0 : *std::min_element(xs.begin(), xs.end()); }

double spread::hi() const { return xs.empty() ? 0 : *std::max_element(xs.begin(), xs.end()); }

bool spread::overlaps(const spread& other) const {
  return !empty() && !other.empty() && lo() <= other.hi() && other.lo() <= hi();
}

std::string spread::str(const char* format) const {
  auto text = [&](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return std::string(buf);
  };
  if (xs.size() < 2)
    return text(mean());
  return text(mean()) + " (" + text(lo()) + "–" + text(hi()) + ")";
}

}  // namespace syncpoint
