// `syncpoint compare`: the same job under several protocols, side by side.
#pragma once

#include "runtime/job.hpp"

#include <string>
#include <vector>

namespace syncpoint::cli {

struct compared_run {
  std::string label;   // protocol name (with its option, e.g. ssp(s=3))
  run_summary summary;
};

/// One run's summary as lines of text (protocol, times, accuracy, per worker).
void print_summary(const run_summary& s);

/// A fixed-width table: time to target, final accuracy, samples/s, compute ratio, ...
std::string comparison_table(const std::vector<compared_run>& runs);

/// Writes DIR/comparison.md and DIR/report.html (accuracy vs time, SVG).
void write_report(const std::string& dir, const std::vector<compared_run>& runs);

}  // namespace syncpoint::cli
