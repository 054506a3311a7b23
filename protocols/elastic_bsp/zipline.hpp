// ZipLine: given each worker's predicted next R push times (a row each,
// ascending), choose one column per worker so that the span between the
// earliest and the latest chosen time is minimal — the barrier that costs the
// least waiting. Free of CAF and LibTorch so it can be tested and timed alone.
//
//   zipline_matrix m(3, 4);                      // 3 workers, look-ahead 4
//   ... m.at(i, r) = predicted time of worker i's r-th push ...
//   zipline_result z = zipline(m, zipline_variant::opt_bs);
//   // z.stops[i]: worker i stops at its column z.stops[i]; z.barrier: when the last arrives
//
// Ties (PROTOCOLS.md): smallest span, then smallest max (the barrier), then
// smallest min, then the lexicographically smallest (r_0..r_{n-1}). All three
// variants return identical results; they differ only in how they find a
// worker's previous point in the sweep window.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace syncpoint {

enum class zipline_variant {
  plain,   // "zipline": linear search for the worker's old point, O(R n^2)
  opt,     // "zipline-opt": pop the front when it is the worker's old point
  opt_bs,  // "zipline-opt-bs": old point's time from M, binary search, rows merged
};

/// Parses "zipline", "zipline-opt", "zipline-opt-bs"; throws std::invalid_argument.
zipline_variant parse_zipline_variant(const std::string& name);
std::string to_string(zipline_variant v);

/// n rows of R times, row-major. Each row must be non-decreasing.
struct zipline_matrix {
  zipline_matrix() = default;
  zipline_matrix(size_t workers, size_t lookahead)
    : n(workers), R(lookahead), t(workers * lookahead, 0.0) {}
  size_t n = 0;
  size_t R = 0;
  std::vector<double> t;
  double& at(size_t i, size_t r) { return t[i * R + r]; }
  double at(size_t i, size_t r) const { return t[i * R + r]; }
};

struct zipline_result {
  double span = 0;
  double barrier = 0;             // max_i M[i][stops[i]]
  std::vector<uint32_t> stops;    // one column per worker
};

/// Throws std::invalid_argument for an empty matrix or a row that is not ascending.
void check_zipline_matrix(const zipline_matrix& m);

/// The ZipLine choice for `m` (which must pass check_zipline_matrix).
zipline_result zipline(const zipline_matrix& m, zipline_variant variant);

/// Exhaustive search over all R^n choices with the same tie rule (tests only:
/// exponential).
zipline_result zipline_brute_force(const zipline_matrix& m);

}  // namespace syncpoint
