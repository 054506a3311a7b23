// A finished (or partly finished) sweep read back from its folder, and the
// figures its page shows: per cell, and over the cells that share some
// axes' values, as mean and min–max. Read by the sweep's page (sweep_page.cpp),
// the tests and the fidelity benchmark.
#pragma once

#include "runtime/studies/spread.hpp"
#include <syncpoint/summary.hpp>
#include "runtime/studies/sweep.hpp"

#include <optional>
#include <string>
#include <vector>

namespace syncpoint::report {

struct sweep_result {
  std::string dir;
  sweep_grid grid;
  std::vector<sweep_cell> cells;
  std::vector<std::optional<run_summary>> summaries;  // per cell; empty: not finished
};

/// Reads DIR/sweep.json and every finished cell's summary. Throws config_error naming the file.
sweep_result load_sweep(const std::string& dir);

/// A sweep of several parts as one result per part, each a grid of its own
/// (part_grid) with its cells numbered from 0; a sweep of one grid as itself.
std::vector<sweep_result> parts_of(const sweep_result& r);

/// "1.25" seconds, "not reached", or "-" for a run without a target: as the tables show it.
std::string time_to_target_text(const run_summary& s);

enum class sweep_figure {
  relative_time_to_target,  // a cell's time to the target / the first protocol's, same other values and seed
  time_to_target,
  final_accuracy,
  samples_per_s,
};

/// "relative-time-to-target", "time-to-target", "final-accuracy", "samples-per-s".
std::string figure_name(sweep_figure f);
/// The inverse; throws config_error listing the names.
sweep_figure parse_figure(const std::string& name);
/// Words for a page: "time to target / bsp's".
std::string figure_words(const sweep_result& r, sweep_figure f);
/// Whether a lower value is better (times) or a higher one (accuracy, throughput).
bool lower_is_better(sweep_figure f);
/// The relative time when the sweep has a protocol axis and a target, else the
/// time to target when it has a target, else the final accuracy.
sweep_figure default_figure(const sweep_result& r);

/// The figure of cell `i`; nullopt when it is not finished, never reached the
/// target, or (relative) its first-protocol cell did not.
std::optional<double> figure_of(const sweep_result& r, size_t i, sweep_figure f);

/// The figure over the cells whose values match `fixed` (axis, value) on those axes.
spread aggregate(const sweep_result& r, sweep_figure f,
                 const std::vector<std::pair<std::string, std::string>>& fixed);

/// The axis's values as numbers, for a line chart: "0.05" -> 0.05, a
/// straggler "3:x1.5" -> 1.5 (every value naming the same worker), a
/// ps-bandwidth "400MB/s" -> 4e8. Empty when some value is not such a number.
std::vector<double> numeric_values(const sweep_axis& a);

}  // namespace syncpoint::report
