// Progress of long commands (train, compare, tune-switch) on stderr: on a
// terminal, one bar per run redrawn in place with the time left; otherwise
// (a log, CI) the coordinator's plain lines.
//
//   cli::progress_display shown(job.progress);
//   shown.begin("asp", 2, 8);                 // run 2 of 8
//   train(job, shown.callback());
//   shown.end();
//
// Reports come from the run's coordinator, on a scheduler thread of the run's
// actor system while the caller waits in train(); that system's threads are
// joined before train() returns, so calls never overlap. One display serves
// one train() at a time.
#pragma once

#include "core/messages.hpp"
#include "runtime/studies/sweep.hpp"

#include <chrono>
#include <string>

namespace syncpoint::cli {

/// "4:05", or "1:02:03" from an hour on; "--" for no time or over 99 hours.
std::string duration(double seconds);

class progress_display {
 public:
  /// `enabled` false shows nothing; `as_bar` defaults to whether stderr is a terminal.
  explicit progress_display(bool enabled);
  progress_display(bool enabled, bool as_bar);
  ~progress_display();

  /// A new run: `index` of `total` (0: a run outside the count, e.g. a reference).
  void begin(const std::string& label, int index = 1, int total = 1);
  void update(const progress_report& r);
  /// Ends the current run's bar (its line stays, at its final state).
  void end();
  /// What to pass to train(): calls update; empty when not enabled.
  progress_fn callback();

  /// The bar's text for a run `fraction` done after `elapsed_s` seconds (a run
  /// with no budget stays at fraction 0: then `samples` says how far it is).
  static std::string bar_line(const std::string& prefix, double fraction, double accuracy, double elapsed_s,
                              bool finished, uint64_t samples = 0);

 private:
  bool enabled_, bar_;
  bool open_ = false;
  std::string prefix_;
  double fraction_ = 0, accuracy_ = -1;
  uint64_t samples_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
  void draw(bool finished);
};

/// A sweep's progress on stderr. On a terminal: one bar for the whole sweep,
/// redrawn in place as cells start and end (done, running, failed, time
/// left), with each failed cell's error printed above it. Otherwise (a log,
/// CI): one line per cell that ends.
///
///   cli::sweep_display shown(jobs);
///   run_sweep_cells(dir, cells, jobs, launch, [&](auto& p, auto* ended) { shown.event(p, ended); });
///   shown.end();
class sweep_display {
 public:
  /// `as_bar` defaults to whether stderr is a terminal; `name` and `unit`
  /// word the lines ("sweep", "cells"; compare --jobs: "compare", "runs").
  /// `jobs` 0: as many at once as a cluster has free slots.
  explicit sweep_display(int jobs, const std::string& name = "sweep", const std::string& unit = "cells");
  sweep_display(int jobs, bool as_bar, const std::string& name = "sweep", const std::string& unit = "cells");
  ~sweep_display() { end(); }

  void event(const sweep_progress& p, const cell_outcome* ended);
  /// A line about one cell ("NAME started on node 'a'"), above the bar on a terminal.
  void note(const std::string& line);
  /// Ends the bar (its line stays, at its final state).
  void end();

  /// "sweep [#######---------------------]  7/18 done, 2 running, 1 failed, about 0:33 left":
  /// `elapsed_s` since the first cell started; the time left from the pace of the cells that ended.
  static std::string bar_line(const sweep_progress& p, double elapsed_s, const std::string& name = "sweep");

 private:
  int jobs_;
  std::string name_, unit_;
  bool bar_, open_ = false, started_ = false;
  sweep_progress last_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace syncpoint::cli
