// `syncpoint compare`: the same job under several protocols, side by side.
#pragma once

#include <syncpoint/train.hpp>

#include <string>
#include <vector>

namespace syncpoint::cli {

struct compared_run {
  std::string label;   // protocol name (with its option, e.g. ssp(s=3))
  run_summary summary;
  double lr = 0;              // the run's learning rate (0: not shown)
  std::string stopped_by;     // compare's rule: "target", "cap" or "failed" ("": a budget)
  double acc_equal = -1;      // accuracy at the comparison's equal sample count (< 0: none)
  std::string dir;            // the run's folder ("": not written)
};

/// `x` printed with a printf format for one double: fmt("%.2f", 1.234) == "1.23".
std::string fmt(const char* format, double x);

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

}  // namespace syncpoint::cli
