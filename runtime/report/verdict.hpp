// Who won a comparison, as data: decide() reads the runs (over seeds, by the
// means) and says who was soonest to the target, most accurate at equal
// samples and fastest, whether the seeds settle it, and where each protocol's
// workers spent their time. verdict() (parts.hpp) renders it in words.
//
//   auto all = parts::by_seed(runs);
//   auto facts = parts::decide(all, runs);
//   if (facts.soonest.who) std::printf("%s\n", facts.soonest.who->label().c_str());
#pragma once

#include "runtime/report/parts.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace syncpoint::report::parts {

/// A series and one of its figures over its seeds (no series: nobody).
struct ranked {
  const series* who = nullptr;
  spread value;
};

struct verdict_facts {
  double target = 0;  ///< the target every run had (0: none)
  /// The lowest mean time to the target among the series that reached it on every seed.
  ranked soonest;
  int soonest_seeds_won = 0;           ///< on how many seeds it was the soonest of all (runs paired by seed)
  std::vector<ranked> others;          ///< every other series' time to the target (empty: never reached)
  std::vector<ranked> within_spread;   ///< those whose times overlap the soonest's over seeds
  bool reached_on_some_seed = false;   ///< whether any series reached the target at all
  /// Why the soonest beat the first series (when it is not the first): its samples/s, its
  /// workers' waiting, the samples each needed, their staleness; means over seeds.
  struct why_sooner {
    const series* ref = nullptr;  ///< nobody: the soonest is the first series
    double rate_ratio = 0;        ///< the soonest's samples/s over the reference's
    double wait = 0, ref_wait = 0;  ///< shares of worker time spent waiting
    spread samples, ref_samples;  ///< samples when each first reached the target
    double stale = 0, ref_stale = 0;
  } why;
  uint64_t equal_samples = 0;            ///< the fewest samples any run that did not fail processed
  ranked most_accurate, next_accurate;   ///< at equal samples
  struct measure {
    std::string name;
    std::vector<ranked> values;  ///< a series each that measured it
  };
  std::vector<measure> final_measures;  ///< what the loops measured besides accuracy: listed, not ranked
  ranked fastest, next_fastest;         ///< by samples/s
  const series* slowest = nullptr;
  double slowest_rate = 0;
  struct time_use {
    const series* who;
    double compute, comm, wait;  ///< shares of worker time
    double barriers, staleness;
  };
  std::vector<time_use> time_spent;  ///< a series each, in order
};

/// The facts of `all` (by_seed(runs)).
verdict_facts decide(const std::vector<series>& all, const std::vector<run_record>& runs);

/// The share of the workers' time the series' runs spent waiting (mean over seeds).
double wait_share(const series& s);

}  // namespace syncpoint::report::parts
