#include "cli/report_cmd.hpp"

#include "runtime/report/comparison.hpp"
#include "cli/option_table.hpp"
#include "runtime/report/page.hpp"
#include "runtime/report/sweep_page.hpp"
#include "runtime/records/run_files.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace syncpoint::cli {

namespace fs = std::filesystem;

namespace {

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// "d" + "/" + name, as compare builds a run's folder: the page then names it the same way.
std::string join(const std::string& dir, const std::string& name) {
  return dir + (dir.empty() || dir.back() == '/' ? "" : "/") + name;
}

}  // namespace

std::vector<std::string> runs_in(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw config_error("'" + dir + "' is not a folder" + (ec ? " (" + ec.message() + ")" : std::string()));
  if (is_file(fs::path(dir) / "summary.json"))
    return {dir};
  std::vector<std::string> out;
  if (is_file(fs::path(dir) / "runs.json")) {
    for (auto& name : read_run_list(dir))
      out.push_back(join(dir, name));
    return out;
  }
  fs::directory_iterator it(dir, ec);
  if (ec)
    throw config_error("cannot read folder '" + dir + "': " + ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec)
      throw config_error("cannot read folder '" + dir + "': " + ec.message());
    if (is_file(it->path() / "summary.json"))
      out.push_back(join(dir, it->path().filename().string()));
  }
  if (out.empty())
    throw config_error("'" + dir + "' has no summary.json, nor sub-folders with one");
  std::sort(out.begin(), out.end());
  return out;
}

int run_report(const std::vector<std::string>& args) {
  std::string out, figure;
  std::vector<std::string> dirs;
  option_table table{"report"};
  table.about("usage: syncpoint report RUN_DIR... [--out FILE]\n"
              "       syncpoint report SWEEP_DIR [--figure relative-time-to-target|time-to-target|final-accuracy|samples-per-s]\n"
              "  builds the comparison page (HTML) of the runs in the folders given, each written by\n"
              "  train --out or compare --out (a compare folder stands for its runs, in compare's order).\n"
              "  A sweep's folder (with sweep.json) gets the sweep's page, DIR/index.html (docs/sweeps.md).\n\n")
    .operands(dirs)
    .group("output")
    .add(out, "out", "where to write the page (default: DIR/index.html for one compare folder, else report.html)")
    .add(figure, "figure", "a sweep's headline figure: relative-time-to-target, time-to-target, final-accuracy or samples-per-s")
    .expects("out", "a file name");
  if (int rc = parse_command(table, args, "report"); rc >= 0)
    return rc;
  if (dirs.empty()) {
    std::cerr << "syncpoint report: name at least one run folder (see syncpoint report --help)\n";
    return 2;
  }
  if (dirs.size() == 1 && is_file(fs::path(dirs[0]) / "sweep.json")) {  // a sweep's folder: the sweep's page
    auto sweep = report::load_sweep(dirs[0]);
    auto f = figure.empty() ? report::default_figure(sweep) : report::parse_figure(figure);
    if (out.empty())
      out = join(dirs[0], "index.html");
    report::write_text(out, report::sweep_report_html(sweep, f));
    std::printf("report: %s (a sweep of %zu cells)\n", out.c_str(), sweep.cells.size());
    return 0;
  }
  if (!figure.empty()) {
    std::cerr << "syncpoint report: --figure is for a sweep's folder (one that holds sweep.json)\n";
    return 2;
  }
  std::vector<run_record> records;
  for (auto& d : dirs) {
    auto runs = runs_in(d);
    if (out.empty() && dirs.size() == 1 && !(runs.size() == 1 && runs.front() == d))
      out = join(d, "index.html");
    for (auto& r : runs)
      records.push_back(load_run(r));
  }
  if (out.empty())
    out = "report.html";
  report::write_text(out, report::report_html(records));
  std::printf("report: %s (%zu run%s)\n", out.c_str(), records.size(), records.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace syncpoint::cli
