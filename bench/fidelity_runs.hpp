// The runs behind docs/fidelity.md, as the sweeps of bench/fidelity.sh.
//
// A claim needs runs that depend on other runs: a protocol is capped at the
// reference's run time, and a Sync-Switch search picks each share from the
// last run's accuracy. So the runs go in stages. Each stage is a sweep file
// DIR/stage-N.toml, run by `syncpoint sweep` into DIR/stage-N/ (on every core,
// or on a cluster's slots). The claims are computed from what the stages hold;
// a run not there yet is noted for the next stage, and the claim waits.
//
//   fidelity_runs runs("build/fidelity-quick");
//   train_args job;
//   job.set("workers", "4").set("protocol", "bsp").set("seed", "1");
//   bool ready = attempt([&] {
//     auto ref = runs.need({"mlp s1", job});   // throws pending when not there
//     ...                                      // runs that depend on ref
//   });
//   if (!ready)                                // its missing runs are noted
//     std::puts(runs.write_next_stage("stage of ...").c_str());   // bench/fidelity.sh sweeps it
#pragma once

#include <syncpoint/summary.hpp>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace syncpoint::bench {

/// Train options as "--name=value", in order; set() replaces an option's value.
struct train_args {
  std::vector<std::pair<std::string, std::string>> items;
  train_args& set(const std::string& name, const std::string& value);
  std::vector<std::string> text() const;  // "--name=value" each
};

/// One run: its options (the protocol and seed among them), and the part of
/// a stage's sweep it goes in, which names its folder ("wbsp 400MBps s1").
struct run_request {
  std::string part;
  train_args args;
};

/// Thrown when a claim needs a run that is not there yet.
struct pending {};

/// Runs `f`; false when it threw pending (its missing runs are noted), so
/// that the claims after it still ask for theirs.
template <class F>
bool attempt(F&& f) {
  try {
    f();
    return true;
  } catch (const pending&) {
    return false;
  }
}

class fidelity_runs {
 public:
  /// Reads every finished cell of DIR/stage-N/ (sweep folders, runtime/studies/sweep.hpp).
  explicit fidelity_runs(std::string dir);

  /// The summaries of `rs`, in order. Runs not there are noted for the next
  /// stage, and then pending is thrown.
  std::vector<run_summary> need(const std::vector<run_request>& rs);
  run_summary need(const run_request& r) { return need(std::vector<run_request>{r})[0]; }
  /// Notes the runs of `rs` that are not there, without throwing: for runs
  /// needed later that need nothing first, so that they share a stage.
  void want(const std::vector<run_request>& rs);

  /// The runs noted missing, in the order first asked.
  const std::vector<run_request>& missing() const { return missing_; }
  /// DIR/stage-N.toml of a stage whose sweep has cells not finished, else "".
  const std::string& unfinished_stage() const { return unfinished_; }
  /// Writes the missing runs as DIR/stage-N.toml (the next N): a part per
  /// part name and options, the protocols as its axis. Returns the path.
  /// Throws std::runtime_error when a missing run was planned in a stage
  /// that finished without it (its cell stored other options: planning it
  /// again would never end).
  std::string write_next_stage(const std::string& header) const;

 private:
  std::string dir_;
  std::map<std::string, run_summary> done_;  // by the run's options, sorted
  std::set<std::string> planned_;            // the runs of every stage file, the same way
  std::vector<run_request> missing_;
  std::set<std::string> missing_keys_;
  int stages_ = 0;
  std::string unfinished_;
};

/// What makes the runs on this machine: a hash of the `syncpoint` command
/// and its library, beside this program. Runs of another build may differ.
std::string build_fingerprint();

/// The build DIR's runs were made by (DIR/build.txt), "" if none is noted.
std::string runs_build(const std::string& dir);

/// Notes `build` as DIR's; when DIR's runs were made by another build,
/// first removes its stages. Returns whether it removed any.
bool keep_runs_of(const std::string& dir, const std::string& build);

}  // namespace syncpoint::bench
