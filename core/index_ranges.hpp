// Sets of positions as ascending, disjoint [begin, end) pairs in one flat
// vector: a fragment of a model (<syncpoint/local_work.hpp>), the part of it
// a round of pushes touched. Empty: none.
//
//   std::vector<uint64_t> a{0, 10, 20, 30};
//   add_ranges(a, {5, 25});        // a == {0, 30}
//   clip_ranges(a, 8, 12);         // {8, 12}: positions 8..11
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace syncpoint {

/// Whether `r` is pairs, each begin < end <= n (an empty range [b, b) is
/// allowed), in ascending order without overlap; `why` says what is wrong.
inline bool valid_ranges(const std::vector<uint64_t>& r, uint64_t n, std::string* why = nullptr) {
  auto fail = [&](std::string w) {
    if (why)
      *why = std::move(w);
    return false;
  };
  if (r.size() % 2 != 0)
    return fail("an odd number of bounds");
  for (size_t i = 0; i < r.size(); i += 2) {
    if (r[i] > r[i + 1] || r[i + 1] > n)
      return fail("range [" + std::to_string(r[i]) + ", " + std::to_string(r[i + 1]) + ") is not within [0, " +
                  std::to_string(n) + ")");
    if (i > 0 && r[i] < r[i - 1])
      return fail("ranges out of order or overlapping");
  }
  return true;
}

/// How many positions `r` covers.
inline uint64_t ranges_size(const std::vector<uint64_t>& r) {
  uint64_t n = 0;
  for (size_t i = 0; i + 1 < r.size(); i += 2)
    n += r[i + 1] - r[i];
  return n;
}

/// `into` becomes the union of itself and `more`.
inline void add_ranges(std::vector<uint64_t>& into, const std::vector<uint64_t>& more) {
  std::vector<std::pair<uint64_t, uint64_t>> all;
  for (size_t i = 0; i + 1 < into.size(); i += 2)
    all.emplace_back(into[i], into[i + 1]);
  for (size_t i = 0; i + 1 < more.size(); i += 2)
    all.emplace_back(more[i], more[i + 1]);
  std::sort(all.begin(), all.end());
  into.clear();
  for (auto [b, e] : all) {
    if (b == e)
      continue;
    if (!into.empty() && b <= into.back())
      into.back() = std::max(into.back(), e);
    else
      into.insert(into.end(), {b, e});
  }
}

/// The part of `r` within [lo, hi), shifted by -lo.
inline std::vector<uint64_t> clip_ranges(const std::vector<uint64_t>& r, uint64_t lo, uint64_t hi) {
  std::vector<uint64_t> out;
  for (size_t i = 0; i + 1 < r.size(); i += 2) {
    auto b = std::max(r[i], lo), e = std::min(r[i + 1], hi);
    if (b < e)
      out.insert(out.end(), {b - lo, e - lo});
  }
  return out;
}

/// `r` shifted by +offset.
inline std::vector<uint64_t> shift_ranges(std::vector<uint64_t> r, uint64_t offset) {
  for (auto& x : r)
    x += offset;
  return r;
}

}  // namespace syncpoint
