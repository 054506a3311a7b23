// The comparison page's parts, shared by page.cpp (the charts and the page),
// table.cpp, measures.cpp, bytes.cpp, verdict.cpp (who won and why) and
// words.cpp (settings, provenance). Users call report_html() (page.hpp).
#pragma once

#include "runtime/records/run_files.hpp"
#include "runtime/report/svg_chart.hpp"
#include "runtime/studies/spread.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace syncpoint::report::parts {

/// Runs that differ only in their seed, shown as one: a line with a band,
/// table cells as mean (min–max). A run with no such twins is a series of one.
struct series {
  std::vector<const run_record*> runs;  // one per seed, in the order given
  const run_record& first() const { return *runs.front(); }
  const std::string& label() const { return first().provenance.label; }
  bool seeded() const { return runs.size() > 1; }
  /// A figure over the runs (nullopt: the run has none, e.g. no target reached).
  spread over(const std::function<std::optional<double>(const run_record&)>& figure) const;
  /// "1, 2, 3".
  std::string seeds() const;
};

/// `runs` grouped into series, in the order of each series' first run.
std::vector<series> by_seed(const std::vector<run_record>& runs);

/// A series' accuracy curve (against time or samples) as mean and min–max
/// over its runs, where every run has data: from the latest first
/// evaluation to the earliest end, at every run's evaluation times.
struct band_point {
  double x, mean, lo, hi;
};
std::vector<band_point> accuracy_band(const series& s, bool by_samples);

/// The x axis of a chart over runs: ticks from 0 to `x_max`, labelled in samples (with
/// commas) or run-clock seconds, and the axis's name.
void run_x_axis(svg_chart& c, double x_max, bool by_samples);

/// Whether some run's loop measures accuracy (else the page shows what it measured instead).
bool measures_accuracy(const std::vector<run_record>& runs);
/// The names of what the runs' final evaluations measured besides accuracy, in order of first appearance.
std::vector<std::string> final_metric_names(const std::vector<run_record>& runs);
/// A run's final value of the measure `name` (nothing: its loop did not measure it).
std::optional<double> final_metric(const run_summary& s, const std::string& name);
/// For runs whose loop measures no accuracy: each held-out measure (the
/// trace's "metric" events of the evaluator) and the workers' training loss,
/// against time and against samples, `width` pixels a chart.
std::string measures_section(const std::vector<series>& all, const std::vector<run_record>& runs, int width);

/// Bytes moved against final quality (the held-out loss, else the accuracy),
/// a point per run and a box over seeds (bytes.cpp); empty when no run moved any.
std::string communication_section(const std::vector<series>& all, const std::vector<run_record>& runs, int width);

/// The value at `x` of a curve of (x, value) sorted by x and not empty,
/// linear between its points (its first or last value outside them).
double value_at(const std::vector<std::pair<double, double>>& c, double x);

/// The evaluations and the final one, as (x, accuracy).
std::vector<std::pair<double, double>> accuracy_curve(const run_summary& s, bool by_samples);

std::string with_commas(uint64_t v);
/// The fewest samples any run that did not fail processed.
uint64_t equal_samples(const std::vector<run_record>& runs);
/// The target every run had (0 when none had one, or they differ).
double shared_target(const std::vector<run_record>& runs);

/// Who won on each count, why, and what each run spent its time on; over
/// seeds, by the means, saying when a difference is within the spread.
/// `all` is by_seed(runs).
std::string verdict(const std::vector<series>& all, const std::vector<run_record>& runs);
/// The comparison table: a row per series, each column's best marked.
std::string table(const std::vector<series>& all, const std::vector<run_record>& runs);
/// The settings all runs share, and a table of those that differ (one row
/// per series: the seed column lists its seeds).
std::string settings(const std::vector<series>& all);
/// The command(s), versions, machine and run folders.
std::string provenance(const std::vector<run_record>& runs);

}  // namespace syncpoint::report::parts
