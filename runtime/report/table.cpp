// The comparison page's table: one row per run, or per series of seeds with
// each figure as mean and range; the best of each column marked.
#include "runtime/report/comparison.hpp"
#include "runtime/report/page.hpp"
#include "runtime/report/parts.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace syncpoint::report::parts {

namespace {

struct column {
  std::string head;
  std::function<double(const run_record&)> value;  // NaN: no figure
  const char* format;
  int best = 0;  // +1 highest is best, -1 lowest, 0 no mark
  std::function<std::string(const run_record&, double)> show = nullptr;  // a run alone; default: format
  std::function<std::string(const series&)> show_seeds = nullptr;       // several seeds; default: mean (min–max)
};

// How the runs of a series stopped: "target ×2, cap ×1".
std::string stops_of(const series& s) {
  std::vector<std::pair<std::string, int>> counts;
  for (auto* r : s.runs) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](auto& c) { return c.first == r->provenance.stopped_by; });
    if (it == counts.end())
      counts.push_back({r->provenance.stopped_by, 1});
    else
      ++it->second;
  }
  std::string out;
  for (auto& [how, n] : counts)
    out += (out.empty() ? "" : ", ") + (how.empty() ? std::string("budget") : how) + " ×" + std::to_string(n);
  return out;
}

// The columns the runs have figures for (lr only when the runs' differ, the
// target's only when they have one, ...). Each column holds what it needs by value.
std::vector<column> columns_for(const std::vector<run_record>& runs) {
  const double nan = std::nan("");
  uint64_t n_eq = equal_samples(runs);
  bool lrs_differ = std::any_of(runs.begin(), runs.end(), [&](auto& r) { return r.summary.lr != runs[0].summary.lr; });
  bool stops = std::any_of(runs.begin(), runs.end(), [](auto& r) { return !r.provenance.stopped_by.empty(); });
  bool targets = std::any_of(runs.begin(), runs.end(), [](auto& r) { return r.summary.target_accuracy > 0; });
  std::vector<column> cols;
  if (lrs_differ)
    cols.push_back({"lr", [](auto& r) { return r.summary.lr; }, "%g", 0});
  if (targets)
    cols.push_back({"to target s", [nan](auto& r) { return r.summary.time_to_target_s >= 0 ? r.summary.time_to_target_s : nan; },
                    "%.2f", -1});
  if (stops)
    cols.push_back({"stopped", [](auto& r) { return r.summary.run_time_s; }, "%.2f", 0, [](auto& r, double v) {
                      return r.provenance.stopped_by + (r.provenance.stopped_by == "failed" ? "" : " at " + fmt("%.2f", v) + " s");
                    }, stops_of});
  if (measures_accuracy(runs)) {
    cols.push_back({"final acc", [nan](auto& r) { return r.summary.final_accuracy >= 0 ? r.summary.final_accuracy : nan; },
                    "%.4f", +1});
    cols.push_back({"acc@" + with_commas(n_eq), [nan, n_eq](auto& r) { double a = accuracy_at_samples(r.summary, n_eq); return a >= 0 ? a : nan; },
                    "%.4f", +1});
  }
  // What else the loops measured (a held-out MSE): unmarked, since whether more is better depends on the measure.
  for (auto& name : final_metric_names(runs))
    cols.push_back({"final " + name, [nan, name](auto& r) { return final_metric(r.summary, name).value_or(nan); },
                    "%.4g", 0});
  cols.push_back({"run time s", [](auto& r) { return r.summary.run_time_s; }, "%.2f", 0});
  cols.push_back({"samples", [](auto& r) { return static_cast<double>(r.summary.samples); }, "%.0f", 0,
                  [](auto&, double v) { return with_commas(static_cast<uint64_t>(v)); }});
  cols.push_back({"samples/s", [](auto& r) { return r.summary.samples_per_s; }, "%.1f", +1});
  cols.push_back({"compute ratio", [](auto& r) { return r.summary.mean_compute_ratio; }, "%.3f", +1});
  cols.push_back({"wait s", [](auto& r) { return total_wait_s(r.summary); }, "%.2f", -1});
  cols.push_back({"staleness", [](auto& r) { return r.summary.staleness_mean; }, "%.2f", -1});
  cols.push_back({"barriers", [](auto& r) { return static_cast<double>(r.summary.barriers); }, "%.0f", -1});
  return cols;
}

}  // namespace

std::string table(const std::vector<series>& all, const std::vector<run_record>& runs) {
  const double nan = std::nan("");
  bool seeded = std::any_of(all.begin(), all.end(), [](auto& s) { return s.seeded(); });
  auto cols = columns_for(runs);

  // A column's figure over a series; the mean counts for the best mark only when
  // every run has the figure and none failed.
  auto figure = [&](const series& s, const column& c) {
    return s.over([&](const run_record& r) -> std::optional<double> {
      double v = c.value(r);
      return std::isnan(v) ? std::nullopt : std::optional(v);
    });
  };
  auto rankable = [&](const series& s, const spread& v) {
    return !v.empty() && v.missing == 0 &&
           std::none_of(s.runs.begin(), s.runs.end(), [](auto* r) { return failed_run(r->summary); });
  };
  std::string out = std::string("<div class='wide'>") +
                    (seeded ? "<table class='comparison seeded'>" : "<table class='comparison'>") +
                    "<thead><tr><th>protocol</th>" + (seeded ? "<th>seeds</th>" : "");
  for (auto& c : cols)
    out += "<th>" + escape_html(c.head) + "</th>";
  out += "</tr></thead><tbody>";
  std::vector<double> best(cols.size(), nan);
  for (size_t j = 0; j < cols.size(); ++j)
    for (auto& s : all) {
      auto v = figure(s, cols[j]);
      if (cols[j].best != 0 && rankable(s, v) &&
          (std::isnan(best[j]) || (cols[j].best > 0 ? v.mean() > best[j] : v.mean() < best[j])))
        best[j] = v.mean();
    }
  for (size_t i = 0; i < all.size(); ++i) {
    auto& s = all[i];
    out += "<tr><td><i class='swatch' style='background:" + std::string(series_color(i)) + "'></i>" +
           escape_html(s.label()) + "</td>" + (seeded ? "<td>" + escape_html(s.seeds()) + "</td>" : "");
    for (size_t j = 0; j < cols.size(); ++j) {
      auto v = figure(s, cols[j]);
      bool mark = cols[j].best != 0 && all.size() > 1 && rankable(s, v) && v.mean() == best[j];
      bool target_col = cols[j].head == "to target s";
      auto number = [&](double x) { return cols[j].show ? cols[j].show(s.first(), x) : fmt(cols[j].format, x); };
      std::string html;  // over seeds: the mean, and under it the range (and how many seeds have the figure)
      if (v.empty())
        html = target_col ? "not reached" : "-";
      else if (!s.seeded())
        html = escape_html(number(v.mean()));
      else if (cols[j].show_seeds)
        html = escape_html(cols[j].show_seeds(s));
      else
        html = escape_html(number(v.mean())) + "<small class='range'>" +
               escape_html(v.n() > 1 ? number(v.lo()) + "–" + number(v.hi()) : "") +
               (v.missing > 0 ? (v.n() > 1 ? ", " : "") + std::to_string(v.n()) + " of " + std::to_string(s.runs.size())
                              : "") +
               "</small>";
      out += std::string(mark ? "<td class='best'>" : "<td>") + html + "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table></div>";
}

}  // namespace syncpoint::report::parts
