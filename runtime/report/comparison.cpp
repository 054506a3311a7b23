#include "runtime/report/comparison.hpp"

#include "runtime/report/page.hpp"
#include "runtime/studies/spread.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>

namespace syncpoint::report {


namespace {

// Code points, not bytes: "–" is one column wide.
size_t text_width(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// Runs of one label (one per seed), in the order of their first run.
std::vector<std::vector<const compared_run*>> by_label(const std::vector<compared_run>& runs) {
  std::vector<std::vector<const compared_run*>> out;
  for (auto& r : runs) {
    auto it = std::find_if(out.begin(), out.end(), [&](auto& g) { return g.front()->label == r.label; });
    if (it == out.end())
      out.push_back({&r});
    else
      it->push_back(&r);
  }
  return out;
}

// The table over seeds: each figure as mean (min–max) over a protocol's runs.
std::string seeds_table(const std::vector<std::vector<const compared_run*>>& groups, uint64_t equal_samples) {
  using figure = std::function<std::optional<double>(const compared_run&)>;
  struct column {
    std::string head;
    const char* format;
    figure value;
  };
  std::vector<column> cols{
    {"to target s", "%.2f", [](auto& r) { return r.summary.time_to_target_s >= 0 ? std::optional(r.summary.time_to_target_s) : std::nullopt; }},
    {"final acc", "%.4f", [](auto& r) { return r.summary.final_accuracy >= 0 ? std::optional(r.summary.final_accuracy) : std::nullopt; }},
    {"acc@" + std::to_string(equal_samples), "%.4f", [](auto& r) { return r.acc_equal >= 0 ? std::optional(r.acc_equal) : std::nullopt; }},
    {"samples/s", "%.1f", [](auto& r) { return std::optional(r.summary.samples_per_s); }},
    {"compute", "%.3f", [](auto& r) { return std::optional(r.summary.mean_compute_ratio); }},
    {"stale", "%.2f", [](auto& r) { return std::optional(r.summary.staleness_mean); }},
  };
  if (equal_samples == 0)
    cols.erase(cols.begin() + 2);
  bool targets = std::any_of(groups.begin(), groups.end(), [](auto& g) { return g.front()->summary.target_accuracy > 0; });
  if (!targets)
    cols.erase(cols.begin());
  std::vector<std::vector<std::string>> rows{{"protocol", "seeds"}};
  for (auto& c : cols)
    rows[0].push_back(c.head);
  for (auto& g : groups) {
    std::string seeds;
    for (auto* r : g)
      seeds += (seeds.empty() ? "" : ",") + std::to_string(r->summary.seed);
    rows.push_back({g.front()->label, seeds});
    for (auto& c : cols) {
      spread v;
      for (auto* r : g)
        v.add(failed_run(r->summary) ? std::nullopt : c.value(*r));
      std::string text = v.empty() ? (targets && &c == &cols.front() ? "not reached" : "-") : v.str(c.format);
      if (!v.empty() && v.missing > 0)
        text += ", " + std::to_string(v.n()) + " of " + std::to_string(g.size());
      rows.back().push_back(text);
    }
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (auto& row : rows)
    for (size_t j = 0; j < row.size(); ++j)
      width[j] = std::max(width[j], text_width(row[j]));
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t j = 0; j < rows[i].size(); ++j) {
      std::string gap(width[j] - text_width(rows[i][j]), ' ');
      out += "| " + (j < 2 ? rows[i][j] + gap : gap + rows[i][j]) + " ";
    }
    out += "|\n";
    if (i == 0) {
      for (size_t j = 0; j < width.size(); ++j)
        out += "|" + std::string(width[j] + 2, '-');
      out += "|\n";
    }
  }
  return out;
}

}  // namespace

std::string comparison_table(const std::vector<compared_run>& runs, uint64_t equal_samples) {
  auto groups = by_label(runs);
  if (groups.size() < runs.size())
    return seeds_table(groups, equal_samples);
  bool show_lr = std::any_of(runs.begin(), runs.end(), [&](auto& r) { return r.lr != runs.front().lr; });
  bool show_stop = std::any_of(runs.begin(), runs.end(), [](auto& r) { return !r.stopped_by.empty(); });
  std::string eq_head = "acc@" + std::to_string(equal_samples);
  std::string out, rule;
  int label_width = 14;
  for (auto& r : runs)
    label_width = std::max(label_width, static_cast<int>(r.label.size()));
  auto cell = [&](const std::string& text, int width, bool left = false) {
    char buf[128];
    std::snprintf(buf, sizeof buf, left ? "| %-*s " : "| %*s ", width, text.c_str());
    out += buf;
    rule += "|" + std::string(static_cast<size_t>(width) + 2, '-');
  };
  auto row = [&](const std::vector<std::string>& cells, bool head) {
    size_t i = 0;
    cell(cells[i++], label_width, true);
    if (show_lr)
      cell(cells[i], 6);
    ++i;
    cell(cells[i++], 10);
    if (show_stop)
      cell(cells[i], 13);
    ++i;
    cell(cells[i++], 9);
    if (equal_samples > 0)
      cell(cells[i], 11);
    ++i;
    for (int w : {10, 10, 7, 7, 7, 8})
      cell(cells[i++], w);
    out += "|\n";
    if (head) {
      out += rule + "|\n";
    }
    rule.clear();
  };
  row({"protocol", "lr", "to target", "stopped at", "final acc", eq_head, "run time s", "samples/s",
       "compute", "wait s", "stale", "barriers"},
      true);
  for (auto& r : runs) {
    auto& s = r.summary;
    std::string stopped = r.stopped_by.empty() ? "" : r.stopped_by + (r.stopped_by == "failed" ? "" : " " + fmt("%.2f", s.run_time_s));
    row({r.label, fmt("%g", r.lr), s.time_to_target_s >= 0 ? fmt("%.2f", s.time_to_target_s) : "not reached",
         stopped, s.final_accuracy >= 0 ? fmt("%.4f", s.final_accuracy) : "-", r.acc_equal >= 0 ? fmt("%.4f", r.acc_equal) : "-",
         fmt("%.2f", s.run_time_s), fmt("%.1f", s.samples_per_s), fmt("%.3f", s.mean_compute_ratio),
         fmt("%.1f", total_wait_s(s)), fmt("%.2f", s.staleness_mean), std::to_string(s.barriers)},
        false);
  }
  return out;
}

void write_report(const std::string& dir, const std::vector<compared_run>& runs,
                  const std::string& rule, uint64_t equal_samples, const std::vector<compared_run>& grid) {
  if (runs.empty())
    return;
  auto& first = runs.front().summary;
  std::ofstream md(dir + "/comparison.md");
  std::string seeds;
  for (auto& r : runs)
    if (r.label == runs.front().label)
      seeds += (seeds.empty() ? "" : ", ") + std::to_string(r.summary.seed);
  md << "# Protocol comparison\n\n"
     << "model " << first.model << ", " << first.workers << " workers, " << first.clock
     << " clock, seed" << (seeds.find(',') == std::string::npos ? " " : "s ") << seeds << ", straggler '" << first.straggler << "'";
  if (first.target_accuracy > 0)
    md << ", target accuracy " << first.target_accuracy;
  md << "\n\n";
  if (!rule.empty())
    md << rule << "\n\n";
  if (!grid.empty())
    md << "Every protocol at every learning rate:\n\n" << comparison_table(grid, equal_samples)
       << "\nEach protocol at its best learning rate (soonest to the target, else most accurate):\n\n";
  md << comparison_table(runs, equal_samples) << "\n";
  if (seeds.find(',') != std::string::npos)
    md << "Each figure is the mean over the seeds and, in brackets, the lowest and highest; \"2 of 3\" = the"
          " figure exists for 2 seeds of 3 (the others did not reach the target).\n";
  md << "stopped at = what ended the run (target or the time cap) and when; final acc = accuracy when"
        " it stopped (at the cap for runs the cap stopped); compute = mean compute ratio (compute time /"
        " run time); wait s = waiting summed over workers; stale = mean staleness of applied gradients.\n";

  md.close();
  if (!md)
    throw config_error("cannot write '" + dir + "/comparison.md'");
  std::vector<run_record> records;
  std::vector<std::string> names;
  for (auto& r : runs)
    if (!r.dir.empty()) {
      records.push_back(load_run(r.dir));
      names.push_back(std::filesystem::path(r.dir).filename().string());
    }
  write_run_list(dir, names);  // so that `syncpoint report DIR` shows the runs in this order
  write_text(dir + "/index.html", report_html(records));
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out)
    throw config_error("cannot write '" + path + "'");
}

std::string final_measures(const run_summary& s) {
  std::string out = s.final_accuracy >= 0 ? fmt("final accuracy %.4f", s.final_accuracy) : "final";
  bool first = s.final_accuracy < 0;
  for (auto& m : s.final_metrics) {
    out += (first ? " " : ", ") + m.name + " " + fmt("%.4g", m.value);
    first = false;
  }
  return first ? "final: the loop measured nothing (it has no evaluation)" : out;
}

void print_summary(const run_summary& s) {
  std::printf("protocol %s: %d workers, %s clock, run time %.2f s, %llu samples (%.1f/s)\n",
              s.protocol.c_str(), s.workers, s.clock.c_str(), s.run_time_s,
              static_cast<unsigned long long>(s.samples), s.samples_per_s);
  if (!s.resumed_from.empty())
    std::printf("  resumed from %s (t = %.3f s on the run clock)\n", s.resumed_from.c_str(), s.resumed_at_s);
  std::printf("  %s", final_measures(s).c_str());
  if (s.target_accuracy > 0) {
    if (s.time_to_target_s >= 0)
      std::printf(", reached %.3f at %.2f s", s.target_accuracy, s.time_to_target_s);
    else
      std::printf(", target %.3f not reached", s.target_accuracy);
  }
  std::printf("\n  mean compute ratio %.3f, staleness mean %.2f max %llu, barriers %llu\n",
              s.mean_compute_ratio, s.staleness_mean, static_cast<unsigned long long>(s.staleness_max),
              static_cast<unsigned long long>(s.barriers));
  for (auto& j : s.joins)
    std::printf("  worker %d joined at %.2f s%s\n", j.worker, j.t_s, j.reason.empty() ? "" : (" (" + j.reason + ")").c_str());
  for (auto& ph : s.phases)
    std::printf("  phase %s (%s): %llu samples in %.2f s from %.2f s, accuracy at its end %.4f\n",
                ph.protocol.c_str(), ph.reason.c_str(), static_cast<unsigned long long>(ph.samples), ph.time_s,
                ph.start_s, ph.accuracy_at_end);
  for (auto& w : s.per_worker)
    std::printf("  worker %d: %llu iterations, compute %.2f s, comm %.2f s, wait %.2f s, ratio %.3f\n",
                w.id, static_cast<unsigned long long>(w.iterations), w.compute_s, w.comm_s, w.wait_s,
                w.compute_ratio);
}

}  // namespace syncpoint::report
