#include "runtime/report/sweep_page.hpp"

#include "runtime/report/comparison.hpp"
#include "runtime/report/page.hpp"

#include <algorithm>
#include <cmath>

namespace syncpoint::report {

namespace {

using values = std::vector<std::pair<std::string, std::string>>;

// The axes a page draws: all but the seed, with two values or more.
std::vector<const sweep_axis*> swept(const sweep_result& r) {
  std::vector<const sweep_axis*> out;
  for (auto& a : r.grid.axes)
    if (a.name != "seed" && a.values.size() > 1)
      out.push_back(&a);
  return out;
}

std::string number(sweep_figure f, double v) {
  switch (f) {
    case sweep_figure::relative_time_to_target: return fmt("%.2f", v) + "×";
    case sweep_figure::time_to_target: return fmt("%.2f", v);
    case sweep_figure::final_accuracy: return fmt("%.4f", v);
    case sweep_figure::samples_per_s: return fmt("%.0f", v);
  }
  return fmt("%g", v);
}

// "0.85 (0.83–0.87) over 3 cells, 1 without a value".
std::string spread_words(sweep_figure f, const spread& s) {
  if (s.n() == 0)
    return "no value (" + std::to_string(s.missing) + " cells did not reach the target or did not finish)";
  std::string out = number(f, s.mean());
  if (s.n() > 1)
    out += " (" + number(f, s.lo()) + "–" + number(f, s.hi()) + ")";
  out += " over " + std::to_string(s.n()) + " cell" + (s.n() == 1 ? "" : "s");
  if (s.missing)
    out += ", " + std::to_string(s.missing) + " without a value";
  return out;
}

// A background from green (best) through yellow to red (worst); `t` in [0, 1], 0 best.
std::string heat_color(double t) {
  t = std::clamp(t, 0.0, 1.0);
  return "hsl(" + fmt("%.0f", 120 * (1 - t)) + ",65%,78%)";
}

std::string heatmap(const sweep_result& r, sweep_figure f, const sweep_axis& rows, const sweep_axis& cols) {
  std::vector<std::vector<spread>> grid;
  double lo = 1e300, hi = -1e300;
  for (auto& a : rows.values) {
    grid.emplace_back();
    for (auto& b : cols.values) {
      grid.back().push_back(aggregate(r, f, {{rows.name, a}, {cols.name, b}}));
      if (grid.back().back().n()) {
        lo = std::min(lo, grid.back().back().mean());
        hi = std::max(hi, grid.back().back().mean());
      }
    }
  }
  std::string out = "<table class='heat' data-rows='" + escape_html(rows.name) + "' data-cols='" + escape_html(cols.name) +
                    "'><thead><tr><th>" + escape_html(rows.name) + " \\ " + escape_html(cols.name) + "</th>";
  for (auto& b : cols.values)
    out += "<th>" + escape_html(b) + "</th>";
  out += "</tr></thead><tbody>";
  for (size_t i = 0; i < rows.values.size(); ++i) {
    out += "<tr><th>" + escape_html(rows.values[i]) + "</th>";
    for (auto& s : grid[i]) {
      if (s.n() == 0) {
        out += "<td class='none' title='" + escape_html(spread_words(f, s)) + "'>–</td>";
        continue;
      }
      double t = hi > lo ? (s.mean() - lo) / (hi - lo) : 0.5;
      if (!lower_is_better(f))
        t = 1 - t;
      out += "<td style='background:" + heat_color(t) + "' title='" + escape_html(spread_words(f, s)) + "'>" +
             number(f, s.mean()) + (s.hi() > s.lo() ? "<small>" + number(f, s.lo()) + "–" + number(f, s.hi()) + "</small>" : "") +
             (s.missing ? "<small>" + std::to_string(s.missing) + " without</small>" : "") + "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

// The figure against a numeric axis: one line per protocol (or one), a band from min to max.
std::string line_chart(const sweep_result& r, sweep_figure f, const sweep_axis& x_axis, const std::vector<double>& xs) {
  const double W = 560, H = 300, L = 64, R = 20, T = 14, B = 40;
  const sweep_axis* series = nullptr;
  for (auto& a : r.grid.axes)
    if (a.name == "protocol" && &a != &x_axis)
      series = &a;
  std::vector<std::string> names = series ? series->values : std::vector<std::string>{""};
  struct pt {
    double x;
    spread s;
  };
  std::vector<std::vector<pt>> lines;
  double x_lo = *std::min_element(xs.begin(), xs.end()), x_hi = *std::max_element(xs.begin(), xs.end());
  double y_lo = 1e300, y_hi = -1e300;
  for (auto& n : names) {
    lines.emplace_back();
    for (size_t k = 0; k < xs.size(); ++k) {
      values fixed{{x_axis.name, x_axis.values[k]}};
      if (series)
        fixed.push_back({series->name, n});
      auto s = aggregate(r, f, fixed);
      if (s.n() == 0)
        continue;
      lines.back().push_back({xs[k], s});
      y_lo = std::min(y_lo, s.lo());
      y_hi = std::max(y_hi, s.hi());
    }
    std::sort(lines.back().begin(), lines.back().end(), [](auto& a, auto& b) { return a.x < b.x; });
  }
  if (y_lo > y_hi)
    return "<p class='note'>No values to draw against " + escape_html(x_axis.name) + ".</p>";
  double pad = (y_hi - y_lo) * 0.08 + 1e-9;
  y_lo -= pad;
  y_hi += pad;
  if (x_hi <= x_lo)
    x_hi = x_lo + 1;
  svg_chart chart("chart sweep-line", names.size(), {W, H, L, R, T, B}, scale::linear(x_lo, x_hi),
                  scale::linear(y_lo, y_hi));
  chart.frame().y_grid(nice_ticks(y_lo, y_hi, 5), [&](double v) { return number(f, v); });
  for (size_t k = 0; k < xs.size(); ++k)  // a tick at each of the axis's values, named as given
    chart.x_ticks({xs[k]}, [&](double) { return x_axis.values[k]; });
  chart.x_name(x_axis.name);
  for (size_t i = 0; i < lines.size(); ++i) {
    auto& l = lines[i];
    if (l.empty())
      continue;
    points upper, lower, mean;
    for (auto& p : l) {
      upper.push_back({p.x, p.s.hi()});
      lower.push_back({p.x, p.s.lo()});
      mean.push_back({p.x, p.s.mean()});
    }
    const char* c = series_color(i);
    chart.band(upper, lower, c, 0.15).line(mean, c, "stroke-width='2'", names[i]);
    for (auto& p : l)
      chart.dot(p.x, p.s.mean(), 3, c, "", (names[i].empty() ? "" : names[i] + ", ") + spread_words(f, p.s));
  }
  std::string svg = chart.str();
  std::string legend;
  if (series) {
    legend = "<p class='legend'>";
    for (size_t i = 0; i < names.size(); ++i)
      legend += "<span><i class='swatch' style='background:" + std::string(series_color(i)) + "'></i>" +
                escape_html(names[i]) + "</span>";
    legend += "</p>";
  }
  return legend + svg;
}

std::string stats_cell(sweep_figure f, const spread& s) {
  if (s.n() == 0)
    return "<td>–</td>";
  return "<td>" + number(f, s.mean()) + (s.hi() > s.lo() ? " <small>(" + number(f, s.lo()) + "–" + number(f, s.hi()) + ")</small>" : "") +
         (s.missing ? " <small>" + std::to_string(s.missing) + " without</small>" : "") + "</td>";
}

// One row per combination of the swept axes: mean (min–max) over the seeds.
std::string group_table(const sweep_result& r, sweep_figure f) {
  auto axes = swept(r);
  std::vector<sweep_figure> shown{f};
  for (auto g : {sweep_figure::time_to_target, sweep_figure::final_accuracy, sweep_figure::samples_per_s})
    if (g != f)
      shown.push_back(g);
  std::string out = "<table class='groups'><thead><tr>";
  for (auto* a : axes)
    out += "<th>" + escape_html(a->name) + "</th>";
  for (auto g : shown)
    out += "<th>" + escape_html(figure_words(r, g)) + "</th>";
  out += "</tr></thead><tbody>";
  size_t n = 1;
  for (auto* a : axes)
    n *= a->values.size();
  for (size_t i = 0; i < n; ++i) {
    values fixed;
    size_t rest = i, stride = n;
    for (auto* a : axes) {
      stride /= a->values.size();
      fixed.push_back({a->name, a->values[rest / stride]});
      rest %= stride;
    }
    out += "<tr>";
    for (auto& v : fixed)
      out += "<td>" + escape_html(v.second) + "</td>";
    for (auto g : shown)
      out += stats_cell(g, aggregate(r, g, fixed));
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

std::string cell_table(const sweep_result& r) {
  std::string out = "<table class='cells'><thead><tr>";
  for (auto& a : r.grid.axes)
    out += "<th>" + escape_html(a.name) + "</th>";
  out += "<th>final acc</th><th>to target s</th><th>run time s</th><th>samples/s</th><th>folder</th></tr></thead><tbody>";
  for (auto& c : r.cells) {
    out += "<tr>";
    for (auto& v : c.values)
      out += "<td>" + escape_html(v.second) + "</td>";
    auto& s = r.summaries[c.index];
    if (!s) {
      out += "<td colspan='4'>not finished</td><td>" + escape_html("cells/" + c.folder) + "</td></tr>";
      continue;
    }
    out += "<td>" + (s->final_accuracy >= 0 ? fmt("%.4f", s->final_accuracy) : "-") + "</td><td>" + time_to_target_text(*s) + "</td><td>" + fmt("%.2f", s->run_time_s) + "</td><td>" + fmt("%.1f", s->samples_per_s) + "</td><td>" +
           escape_html("cells/" + c.folder) + "</td></tr>";
  }
  return out + "</tbody></table>";
}

const char* sweep_css =
  "table.heat td{text-align:center;min-width:70px;font-weight:600}table.heat td small{display:block;font-weight:"
  "normal;color:#444;font-size:11px}table.heat td.none{color:#999}table.heat th{text-align:center}"
  "table.groups td small,table.cells td small{color:#555}"
  "table.cells td:last-child{white-space:normal;word-break:break-all;font-size:12px;min-width:180px}";  // long folder names wrap on a narrow window

}  // namespace

namespace {

std::string heading(int level, const std::string& text) {
  auto h = std::to_string(level);
  return "<h" + h + ">" + text + "</h" + h + ">";
}

// The figures of one grid: heatmaps, line charts and tables, under headings of `level`.
std::string grid_sections(const sweep_result& r, sweep_figure f, int level) {
  std::string page;
  auto axes = swept(r);
  if (axes.size() >= 2) {
    page += heading(level, "Heatmaps");
    for (size_t i = 0; i < axes.size(); ++i)
      for (size_t j = i + 1; j < axes.size(); ++j)
        page += heading(level + 1, escape_html(axes[i]->name) + " against " + escape_html(axes[j]->name)) +
                heatmap(r, f, *axes[i], *axes[j]);
  }
  std::string charts;
  for (auto* a : axes) {
    auto xs = numeric_values(*a);
    if (xs.size() > 1)
      charts += "<div>" + heading(level + 1, "against " + escape_html(a->name)) + line_chart(r, f, *a, xs) + "</div>";
  }
  if (!charts.empty())
    page += heading(level, escape_html(figure_words(r, f)) + " against each numeric axis") +
            "<p class='note'>The line is the mean, the band the range (min–max) over the seeds and the other "
            "axes.</p><div class='charts'>" + charts + "</div>";
  return page + heading(level, "Per combination") + group_table(r, f) + heading(level, "Every cell") + cell_table(r);
}

std::string options_text(const std::vector<std::string>& base) {
  std::string out;
  for (auto& b : base)
    out += (out.empty() ? "" : " ") + b;
  return escape_html(out.empty() ? "(none)" : out);
}

std::string dims_text(const sweep_grid& g) {
  std::string dims;
  for (auto& a : g.axes)
    dims += (dims.empty() ? "" : " × ") + escape_html(a.name) + " (" + std::to_string(a.values.size()) + ")";
  return dims;
}

}  // namespace

std::string sweep_report_html(const sweep_result& r, sweep_figure f) {
  size_t finished = 0;
  for (auto& s : r.summaries)
    finished += s.has_value();
  std::string page = "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>syncpoint: sweep " +
                     escape_html(r.dir) + "</title><style>" + report_css() + sweep_css + "</style></head><body>";
  auto parts = parts_of(r);
  auto shape = r.grid.parts.empty() ? dims_text(r.grid) : std::to_string(r.grid.parts.size()) + " parts";
  page += "<h1>Sweep</h1><p class='sub'>" + escape_html(r.dir) + ": " + shape + " = " + std::to_string(r.cells.size()) +
          " cells, " + std::to_string(finished) + " finished. Shared options: <code>" + options_text(r.grid.base) +
          "</code></p>";
  page += "<p>Figure: <b>" + escape_html(figure_words(r, f)) + "</b> (" + (lower_is_better(f) ? "lower" : "higher") +
          " is better), mean over the seeds and the axes not shown, with the range (min–max) below each value and in "
          "its tooltip. A cell has no value when its run did not reach the target or did not finish" +
          (f == sweep_figure::relative_time_to_target ? ", or its first protocol's did not" : std::string()) +
          ". <code>syncpoint report " + escape_html(r.dir) + " --figure " + figure_name(f == sweep_figure::final_accuracy ? sweep_figure::samples_per_s : sweep_figure::final_accuracy) +
          "</code> draws another figure.</p>";
  if (r.grid.parts.empty())
    return page + grid_sections(r, f, 2) + "</body></html>\n";
  for (size_t p = 0; p < parts.size(); ++p) {
    auto& part = r.grid.parts[p];
    page += heading(2, "Part " + escape_html(part.name)) + "<p class='sub'>" + dims_text(parts[p].grid) +
            ". Its own options: <code>" + options_text(part.base) + "</code></p>" + grid_sections(parts[p], f, 3);
  }
  return page + "</body></html>\n";
}

}  // namespace syncpoint::report
