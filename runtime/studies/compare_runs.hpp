// `syncpoint compare`'s rule: every protocol stops the same way, when it
// reaches the target accuracy or at a shared time cap, whichever comes first;
// each is then also read at an equal number of samples. With several learning
// rates, every protocol runs at each and is reported at its best.
//
//   syncpoint::comparison_plan plan{job, {"bsp", "asp"}, {0.02, 0.05, 0.1}};
//   auto c = syncpoint::run_comparison(plan);
//   std::printf("%s", syncpoint::report::comparison_table(c.runs).c_str());  // runtime/report/comparison.hpp
#pragma once

#include <syncpoint/train.hpp>
#include "runtime/studies/sweep.hpp"

#include <functional>
#include <string>
#include <vector>

namespace syncpoint {

/// One run of a comparison: its label and summary, and how compare stopped and read it.
struct compared_run {
  std::string label;   // protocol name (with its option, e.g. ssp(s=3))
  run_summary summary;
  double lr = 0;              // the run's learning rate (0: not shown)
  std::string stopped_by;     // compare's rule: "target", "cap" or "failed" ("": a budget)
  double acc_equal = -1;      // accuracy at the comparison's equal sample count (< 0: none)
  std::string dir;            // the run's folder ("": not written)
};

/// A protocol of compare's list with values of its own, e.g. "diloco(H=10)" or
/// "streaming-diloco(H=50,F=4,compress=int4)": options by their name or short
/// name, and the job's compressor (the axes of a comparison of local updates).
struct protocol_variant {
  std::string protocol;
  std::vector<std::pair<std::string, std::string>> options;  // by their full names
  std::string compress;                                       // "": the job's
};
/// Parses one entry; throws std::invalid_argument naming what is wrong (an
/// option the protocol does not declare, no '=', an unclosed parenthesis).
protocol_variant parse_variant(const std::string& spec);
/// The entry as a folder name: "diloco(H=10,compress=int4)" -> "diloco-H10-compressint4".
std::string variant_folder(const std::string& spec);

struct comparison_plan {
  job_config base;                     // the shared job; its --lr is the shared lr
  std::vector<std::string> protocols;  // the first is the reference for the default cap
  std::vector<double> lrs;             // --tune-lr; empty: the shared lr only
  bool run_to_cap = false;             // the target does not stop a run (still timed)
  std::vector<uint64_t> seeds;         // --seeds: every run once per seed (empty: base.seed alone)
  std::string command;                 // recorded in each run's run.json
  /// Whether the command line gave job option NAME: each protocol's job
  /// defaults (DiLoCo's outer step) fill in the others for its runs.
  std::function<bool(const std::string&)> given;
  /// Called before each run: its label, its number (1-based) and how many there are.
  std::function<void(const std::string&, int, int)> on_run;
  /// Passed to train() for each run (none: the job's own progress lines).
  progress_fn on_progress;
  /// After the reference, this many runs at once, each in a child process
  /// that `spawn` starts (virtual clock only: real-clock runs would share the
  /// cores they time). The child calls run_one(plan, index, cap_s, out_dir)
  /// with this same plan, its stderr into `log`; returns its pid.
  int jobs = 1;
  std::function<pid_t(size_t index, double cap_s, const std::string& out_dir, const std::string& log)> spawn;
  /// With jobs > 1: each run's start and end, as the sweep's pool reports them.
  std::function<void(const sweep_progress&, const cell_outcome*)> on_cells;
};

struct comparison {
  double cap_s = 0;
  std::string cap_source;              // how the cap was chosen, for the reader
  std::string rule;                    // the stop rule in words
  uint64_t equal_samples = 0;          // the fewest samples a reported run processed
  std::vector<compared_run> runs;      // per protocol (at its best lr when tuning), one per seed
  std::vector<compared_run> grid;      // tuning: every protocol at every lr, one per seed
  std::vector<std::string> failures;   // lines to print (lost workers, failed runs)
  std::vector<std::string> failed;     // reported runs that lost every worker ("bsp", "bsp seed 2")
};

/// Runs the plan. The cap is --max-time when given; otherwise the reference
/// (the first protocol at the shared lr, at the first seed) runs for --epochs
/// (1 if unset), not stopping at the target, and its run time is the cap,
/// shared by every seed.
comparison run_comparison(const comparison_plan& plan);

/// In a child of `compare --jobs`: run number `index` of the plan (protocol,
/// then lr, then seed) under the time cap `cap_s`, its files into `out_dir`;
/// the failures it lists (lost workers) on stderr. Returns the exit status.
int run_one(const comparison_plan& plan, size_t index, double cap_s, const std::string& out_dir);

/// The better of two runs of one protocol: reached the target sooner; else
/// (neither reached it) the higher final accuracy.
bool better_run(const run_summary& a, const run_summary& b);

/// The better of two sets of runs of one protocol, one run per seed: fewer
/// failed; then more reached the target; then the lower mean time to it;
/// then the higher mean final accuracy. For one run each, better_run.
bool better_runs(const std::vector<compared_run>& a, const std::vector<compared_run>& b);

}  // namespace syncpoint
