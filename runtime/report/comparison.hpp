// A comparison as text and files: a run's summary as lines, the runs side by
// side as a table, and comparison.md with the comparison page (page.hpp).
//
//   auto c = syncpoint::run_comparison(plan);             // runtime/studies/compare_runs.hpp
//   syncpoint::report::write_report("results", c.runs, c.rule, c.equal_samples);
#pragma once

#include "core/text.hpp"
#include "runtime/studies/compare_runs.hpp"
#include <syncpoint/train.hpp>

#include <string>
#include <vector>

namespace syncpoint::report {

/// One run's summary as lines of text (protocol, times, accuracy, per worker).
void print_summary(const run_summary& s);
/// What the final evaluation measured: "final accuracy 0.8612", with what else
/// the loop measured ("final accuracy 0.8612, mse 0.194"), or "final mse 0.194"
/// for a loop that measures no accuracy.
std::string final_measures(const run_summary& s);

/// A fixed-width table: time to target, how the run stopped, accuracy at the
/// stop and at `equal_samples` (0: no such column), samples/s, compute ratio, ...
std::string comparison_table(const std::vector<compared_run>& runs, uint64_t equal_samples = 0);

/// Writes DIR/comparison.md (the tables as text; `rule` says how the runs
/// stopped, `grid` lists every run when tuning) and DIR/index.html, the
/// report_html page of the runs' folders. Throws config_error if a folder
/// cannot be read back.
void write_report(const std::string& dir, const std::vector<compared_run>& runs,
                  const std::string& rule = "", uint64_t equal_samples = 0,
                  const std::vector<compared_run>& grid = {});

/// Writes `text` to `path`; throws config_error naming the file if it cannot.
void write_text(const std::string& path, const std::string& text);

}  // namespace syncpoint::report
