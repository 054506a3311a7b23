// The papers' claims of docs/fidelity.md, each computed from the runs of
// bench/fidelity.sh's sweeps (bench/fidelity_runs.hpp). A claim whose runs
// are not all there throws pending; its missing runs are noted in `runs`.
// With `timing` false (planning a stage), the figures that time code on this
// machine are left out.
#pragma once

#include "bench/fidelity_runs.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace syncpoint::bench {

struct claim {
  std::string paper, claim, scenario, ours, verdict, why;
};

struct claims_report {
  std::vector<claim> claims;
  std::string details;  // the tables behind the claims
};

struct fidelity_mode {
  bool quick = false;
  bool timing = true;
  std::vector<uint64_t> seeds;
};

/// bench/paper_job.hpp's job as train options: `paper_workers` workers, the
/// MLP on Fashion-MNIST, 2 epochs, `paper_iter_cost_ms` per iteration.
inline constexpr int paper_workers = 8;
inline constexpr double paper_iter_cost_ms = 10;
train_args paper_job_args();

void sync_switch_claims(claims_report& rep, fidelity_runs& runs, const fidelity_mode& mode);

}  // namespace syncpoint::bench
