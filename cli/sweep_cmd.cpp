#include "cli/sweep_cmd.hpp"

#include "runtime/report/comparison.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "runtime/report/sweep_page.hpp"
#include "cli/sweep_spec.hpp"
#include <syncpoint/train.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

namespace syncpoint::cli {

namespace {

// Each cell's options must make a virtual-clock train run whose files the
// sweep places: checked for every cell before the first starts.
void check_cell(const sweep_cell& c) {
  options opts(false);
  auto err = opts.parse_args(c.args);
  auto where = "cell '" + c.name + "'";
  if (!err.empty())
    throw config_error(where + ": " + err);
  const auto& job = opts.job();
  if (job.clock != clock_kind::virtual_time)
    throw config_error(where + ": sweep cells run on the virtual clock (drop --clock)");
  if (!job.out_dir.empty() || !job.resume_dir.empty() || !job.checkpoint_dir.empty() || !opts.save_model.empty())
    throw config_error(where + ": the sweep places each cell's files itself (drop --out, --resume, "
                               "--checkpoint-dir and --save-model; the sweep's folder is sweep --out)");
  if (auto misfit = check_options_fit(job, {job.protocol}); !misfit.empty())
    throw config_error(where + ": " + misfit);
  try {
    validate(job);
  } catch (const config_error& e) {
    throw config_error(where + ": " + e.what());
  }
}

// The table of every cell, in the grid's order: markdown, for the terminal and DIR/sweep.md.
std::string cell_table(const report::sweep_result& r, const std::vector<cell_outcome>& outcomes) {
  std::string out = "|";
  for (auto& a : r.grid.axes)
    out += " " + a.name + " |";
  out += " final acc | to target s | run time s | samples/s |\n|";
  for (size_t i = 0; i < r.grid.axes.size() + 4; ++i)
    out += "---|";
  out += "\n";
  for (auto& c : r.cells) {
    out += "|";
    for (auto& v : c.values)
      out += " " + v.second + " |";
    auto& s = r.summaries[c.index];
    if (!s) {
      std::string why = "not run";
      for (auto& o : outcomes)
        if (o.cell->folder == c.folder && !o.ok)
          why = "failed: " + o.error;
      out += " " + why + " | | | |\n";
      continue;
    }
    out += " " + (s->final_accuracy >= 0 ? fmt("%.4f", s->final_accuracy) : "-") + " | " + report::time_to_target_text(*s) + " | " + fmt("%.2f", s->run_time_s) +
           " | " + fmt("%.1f", s->samples_per_s) + " |\n";
  }
  return out;
}

}  // namespace

int finish_sweep(const sweep_request& req, const std::vector<sweep_cell>& cells,
                 const std::vector<cell_outcome>& outcomes) {
  auto result = report::load_sweep(req.out);
  std::string table;
  if (result.grid.parts.empty())
    table = cell_table(result, outcomes);
  auto parts = report::parts_of(result);
  for (size_t p = 0; p < result.grid.parts.size(); ++p)
    table += (p ? "\n" : "") + std::string("## ") + result.grid.parts[p].name + "\n\n" + cell_table(parts[p], outcomes);
  std::ofstream(req.out + "/sweep.md", std::ios::binary) << "# Sweep " << req.out << "\n\n" << table;
  report::write_text(req.out + "/index.html", report::sweep_report_html(result, report::default_figure(result)));
  std::printf("%s\nwrote %s/sweep.md and one folder per cell in %s/cells\nreport: %s/index.html (open it in a browser)\n",
              table.c_str(), req.out.c_str(), req.out.c_str(), req.out.c_str());
  size_t failed = 0;
  for (auto& o : outcomes)
    failed += !o.ok;
  if (failed > 0) {
    std::fprintf(stderr, "syncpoint sweep: %zu of %zu cells failed; run the same command again to retry them\n",
                 failed, cells.size());
    return 1;
  }
  return 0;
}

int run_sweep(const std::vector<std::string>& args) {
  auto req = parse_sweep_args(args);
  if (req.help) {
    std::printf("%s", sweep_help);
    return 0;
  }
  auto cells = cells_of(req.grid);
  auto all_axes = req.grid.axes;
  for (auto& part : req.grid.parts)
    all_axes.insert(all_axes.end(), part.axes.begin(), part.axes.end());
  for (auto& a : all_axes) {  // named as an axis, not as one cell's option
    options probe(false);
    if (probe.parse_args({"--" + a.name + "=" + a.values.front()}).rfind("unknown option", 0) == 0)
      throw config_error("grid axis '" + a.name + "' is not an option of train (see syncpoint train --help)");
  }
  for (auto& c : cells)
    check_cell(c);
  int jobs = req.jobs > 0 ? req.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  claim_sweep_dir(req.out, req.grid);
  if (!req.head.empty())
    return run_cluster_sweep(req, cells);

  auto launch = [](const sweep_cell& c, const std::string& out_dir, const std::string& log) {
    return launch_train_process(c.args, out_dir, log);
  };
  sweep_display shown(jobs);
  auto outcomes = run_sweep_cells(req.out, cells, jobs, launch,
                                  [&](const sweep_progress& p, const cell_outcome* o) { shown.event(p, o); });
  shown.end();
  return finish_sweep(req, cells, outcomes);
}

}  // namespace syncpoint::cli
