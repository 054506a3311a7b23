// The comparison page: one self-contained HTML file (inline SVG and CSS; no
// script, nothing loaded from the network) built from run folders, so
// `syncpoint compare --out DIR` and `syncpoint report DIR/*` give the same page.
//
//   std::vector<syncpoint::run_record> runs{syncpoint::load_run("results/bsp"),
//                                           syncpoint::load_run("results/asp")};
//   std::ofstream("results/index.html") << syncpoint::report::report_html(runs);
//
// It holds: which protocol won and why, in words; the settings (and what
// differs between runs); the comparison table with each column's best marked;
// test accuracy against time and against samples; a per-worker timeline per
// run; and the command, versions and machine that made the runs.
#pragma once

#include "core/html.hpp"
#include "runtime/records/run_files.hpp"
#include "runtime/report/svg_chart.hpp"  // nice_ticks, series_color

#include <string>
#include <vector>

namespace syncpoint::report {

std::string report_html(const std::vector<run_record>& runs);

/// One run's per-worker timeline as an SVG element `width` pixels wide, time
/// 0..t_max cut into 250 columns: compute, communication and waiting per
/// worker as stacked shares of each column's time slice, barriers as ticks
/// above, protocol switches and lost workers marked.
std::string timeline_svg(const run_record& run, double t_max, int width);

/// The pages' style sheet (the comparison page's; the sweep's page shares it).
const char* report_css();

using syncpoint::escape_html;  // core/html.hpp

}  // namespace syncpoint::report
