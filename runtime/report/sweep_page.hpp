// The sweep's page: DIR/index.html, self-contained like the comparison page
// (inline SVG and CSS, no script). It holds, for a chosen figure (by default
// the time to target relative to the first protocol):
// - for each pair of swept axes, a heatmap of the figure's mean over the
//   other axes and the seeds, the spread in each cell's tooltip;
// - for each numeric axis (a number, a straggler factor "3:x1.5", a
//   bandwidth "400MB/s"), a line
//   chart of the figure, one line per protocol, with a band from min to max;
// - a table per combination of the swept axes (mean and min–max over
//   seeds), and a table of every cell.
//
//   auto sweep = syncpoint::report::load_sweep("sweeps/stragglers");
//   write_text("sweeps/stragglers/index.html", sweep_report_html(sweep, default_figure(sweep)));
#pragma once

#include "runtime/report/sweep_figures.hpp"

#include <string>

namespace syncpoint::report {

std::string sweep_report_html(const sweep_result& r, sweep_figure f);

}  // namespace syncpoint::report
