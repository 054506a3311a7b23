// Cells of the fidelity report (bench/fidelity.cpp): a protocol on a job,
// over several seeds, stopped as `syncpoint compare --run-to-cap` stops it
// (a shared time cap: the reference's time for the job's epochs), its runs
// read from the sweeps of bench/fidelity.sh (bench/fidelity_runs.hpp).
#pragma once

#include "bench/fidelity_runs.hpp"
#include <syncpoint/summary.hpp>
#include "runtime/studies/spread.hpp"

#include <cstdio>
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

/// Every protocol of `protocols` on the job `job` (its target set), for
/// each seed: the first runs for the job's epochs and its run time caps the
/// others, which do not stop at the target. `part` names the runs' folders.
/// Returns one cell per protocol, in order; throws pending while runs are
/// missing (the references first, then the capped runs).
inline std::vector<cell> compare_cells(fidelity_runs& runs, const std::string& part, const train_args& job,
                                       const std::vector<std::string>& protocols, const std::vector<uint64_t>& seeds) {
  auto with = [&](train_args a, const std::string& protocol, uint64_t seed) {
    return a.set("protocol", protocol).set("seed", std::to_string(seed)).set("stop-at-target", "false");
  };
  std::vector<run_request> refs, capped;
  for (auto seed : seeds)
    refs.push_back({part + " s" + std::to_string(seed), with(job, protocols[0], seed)});
  auto ref = runs.need(refs);
  for (size_t s = 0; s < seeds.size(); ++s)
    for (size_t i = 1; i < protocols.size(); ++i) {
      char cap[32];
      std::snprintf(cap, sizeof cap, "%.17g", ref[s].run_time_s);
      capped.push_back({part + " s" + std::to_string(seeds[s]) + " capped",
                        with(job, protocols[i], seeds[s]).set("epochs", "0").set("max-time", cap)});
    }
  auto rest = runs.need(capped);
  std::vector<cell> cells(protocols.size());
  for (size_t i = 0; i < protocols.size(); ++i)
    cells[i].label = protocols[i];
  for (size_t s = 0; s < seeds.size(); ++s) {
    cells[0].add(ref[s]);
    for (size_t i = 1; i < protocols.size(); ++i)
      cells[i].add(rest[s * (protocols.size() - 1) + i - 1]);
  }
  return cells;
}

}  // namespace syncpoint::bench
