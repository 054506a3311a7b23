// Straggler emulation: which worker is slower, by how much, and when.
//
// SPEC is a ';'-separated list of items:
//   W:xF          worker W computes F times slower (F >= 1 not required; 0.5 is faster)
//   W:xF@T1-T2    ... only for iterations that start between T1 and T2 seconds
//   W:+Dms        worker W takes D milliseconds more per iteration (also Ds, Dus)
//   W:+Dms@T1-T2  ... only in that window
// Example: "3:x4" or "1:x2;3:x3" or "0:x3@10-20;2:+50ms".
// Items for one worker that overlap in time combine: factors multiply, delays
// add. F and the product of overlapping factors are in [1e-6, 1e6]; a delay and
// the sum of overlapping delays are at most 1e6 s.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace syncpoint {

struct straggler_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct straggler_item {
  int worker = 0;
  double factor = 1.0;    // multiplies the compute time
  double extra_s = 0.0;   // added after it
  double from_s = 0.0;    // active for iterations starting in [from_s, to_s)
  double to_s = -1.0;     // < 0: no end
};

class straggler_plan {
 public:
  straggler_plan() = default;
  /// Parses SPEC; throws straggler_error naming the offending item.
  static straggler_plan parse(const std::string& spec);

  /// Throws straggler_error if an item names a worker outside 0..n-1.
  void check_workers(int n) const;

  /// Slowdown factor for worker `w` starting an iteration at `t_s` seconds.
  double factor(int w, double t_s) const;
  /// Extra seconds for worker `w` starting an iteration at `t_s` seconds.
  double extra_s(int w, double t_s) const;

  const std::vector<straggler_item>& items() const { return items_; }
  bool empty() const { return items_.empty(); }

 private:
  std::vector<straggler_item> items_;
};

}  // namespace syncpoint
