// Cells of the fidelity report (bench/fidelity.cpp): a protocol on a job,
// over several seeds, stopped as `syncpoint compare --run-to-cap` stops it
// (a shared time cap: the reference's time for the job's epochs).
#pragma once

#include "runtime/job.hpp"
#include "runtime/spread.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace syncpoint::bench {

struct cell {
  std::string label;
  spread to_target;    // seconds, over the runs that reached the target
  int reached = 0, runs = 0;
  spread accuracy;     // at the cap
  spread samples_per_s;
  spread compute;      // mean compute ratio
  std::string to_target_str() const {
    if (reached == 0)
      return "not reached";
    return to_target.str("%.2f") + (reached < runs ? " (" + std::to_string(reached) + "/" +
                                                       std::to_string(runs) + " reached)"
                                                   : "");
  }
  void add(const run_summary& s) {
    ++runs;
    if (s.time_to_target_s >= 0) {
      ++reached;
      to_target.add(s.time_to_target_s);
    }
    accuracy.add(s.final_accuracy);
    samples_per_s.add(s.samples_per_s);
    compute.add(s.mean_compute_ratio);
  }
};

/// Every protocol of `protocols` on `job` (its target set), for each seed:
/// the first runs for job.epochs and its run time caps the others, which do
/// not stop at the target. Returns one cell per protocol, in order.
inline std::vector<cell> compare_cells(const job_config& job, const std::vector<std::string>& protocols,
                                       const std::vector<uint64_t>& seeds, const std::string& what) {
  std::vector<cell> cells(protocols.size());
  for (size_t i = 0; i < protocols.size(); ++i)
    cells[i].label = protocols[i];
  for (auto seed : seeds) {
    double cap = 0;
    for (size_t i = 0; i < protocols.size(); ++i) {
      auto cfg = job;
      cfg.seed = seed;
      cfg.protocol = protocols[i];
      cfg.stop_at_target = false;
      if (i > 0) {
        cfg.epochs = 0;
        cfg.max_time_s = cap;
      }
      std::fprintf(stderr, "fidelity: %s: %s, seed %llu ...\n", what.c_str(), protocols[i].c_str(),
                   static_cast<unsigned long long>(seed));
      auto s = train(cfg).summary;
      if (i == 0)
        cap = s.run_time_s;
      cells[i].add(s);
    }
  }
  return cells;
}

}  // namespace syncpoint::bench
