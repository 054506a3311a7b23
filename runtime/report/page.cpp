#include "runtime/report/page.hpp"

#include "runtime/report/comparison.hpp"
#include "runtime/report/parts.hpp"
#include "core/clock.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

namespace syncpoint::report {

namespace parts {

std::string with_commas(uint64_t v) {
  auto s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<size_t>(i), ",");
  return s;
}

uint64_t equal_samples(const std::vector<run_record>& runs) {
  std::vector<const run_summary*> s;
  for (auto& r : runs)
    s.push_back(&r.summary);
  return syncpoint::equal_samples(s);
}

// The target every run had (0 when none had one, or they differ).
double shared_target(const std::vector<run_record>& runs) {
  double t = runs.empty() ? 0 : runs.front().summary.target_accuracy;
  for (auto& r : runs)
    if (r.summary.target_accuracy != t)
      return 0;
  return t;
}

void run_x_axis(svg_chart& c, double x_max, bool by_samples) {
  c.x_ticks(nice_ticks(0, x_max, 5),
            [&](double v) { return by_samples ? with_commas(static_cast<uint64_t>(v)) : fmt("%g", v); })
    .x_name(by_samples ? "samples" : "time (s, run clock)");
}

}  // namespace parts

namespace {

constexpr int page_w = 1180;

const char* const css =
  "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:24px auto;max-width:1200px;"
  "color:#222;padding:0 12px}h1{font-size:24px;margin-bottom:4px}h2{font-size:18px;margin-top:28px;"
  "border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:18px 0 4px}"
  ".sub{color:#555}.verdict{background:#f3f7fb;border-left:4px solid #4e79a7;padding:8px 14px}"
  ".verdict li{margin:3px 0}table{border-collapse:collapse;font-size:13px;margin:8px 0}"
  "th,td{padding:4px 9px;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap}"
  "th{background:#fafafa;border-bottom:2px solid #ccc}td:first-child,th:first-child{text-align:left}"
  ".wide{overflow-x:auto}table.comparison td:first-child{white-space:normal;min-width:120px;max-width:220px}"
  "td.best{font-weight:bold;background:#e3f1df}td small.range{display:block;color:#666;font-weight:normal;font-size:11px}"
  "table.seeded{font-size:12px}table.seeded th,table.seeded td{padding:3px 6px}.swatch{display:inline-block;width:11px;height:11px;"
  "margin-right:6px;vertical-align:-1px;border-radius:2px}.charts{display:flex;flex-wrap:wrap;gap:12px}"
  ".charts svg{display:block}"
  "code,pre{background:#f6f6f6;border-radius:3px}pre{padding:8px 12px;white-space:pre-wrap;"
  "word-break:break-all;font-size:12px}.legend span{margin-right:16px;font-size:13px}"
  ".note{color:#555;font-size:13px}dl{display:grid;grid-template-columns:max-content auto;gap:2px 14px;"
  "font-size:13px}dt{color:#555}dd{margin:0}";


using namespace parts;

// -- charts ----------------------------------------------------------------------

struct point {
  double x, y;
};

std::vector<point> curve(const run_summary& s, bool by_samples) {
  std::vector<point> out;
  for (auto& [x, a] : accuracy_curve(s, by_samples))
    out.push_back({x, a});
  return out;
}

// The rate the PS used, from the trace's lr events, as steps: each value holds
// until the next event, the last until the run's end.
std::vector<point> lr_steps(const run_record& r, bool by_samples) {
  std::vector<point> out;
  for (auto& e : r.trace)
    if (e.kind == "lr")
      out.push_back({by_samples ? static_cast<double>(e.iter) : to_seconds(e.t0), e.value});
  if (!out.empty())
    out.push_back({by_samples ? static_cast<double>(r.summary.samples) : r.summary.run_time_s, out.back().y});
  return out;
}

// Whether some run's rate changed (a schedule, warmup): then the page draws it.
bool scheduled(const std::vector<run_record>& runs) {
  return std::any_of(runs.begin(), runs.end(), [](auto& r) {
    auto s = lr_steps(r, false);
    return std::any_of(s.begin(), s.end(), [&](auto& p) { return p.y != s.front().y; });
  });
}

double x_extent(const std::vector<run_record>& runs, bool by_samples) {
  double x_max = 0;
  for (auto& r : runs) {
    for (auto& p : curve(r.summary, by_samples))
      x_max = std::max(x_max, p.x);
    for (auto& p : lr_steps(r, by_samples))
      x_max = std::max(x_max, p.x);
  }
  return x_max > 0 ? x_max : 1;
}

std::string accuracy_chart(const std::vector<series>& all, const std::vector<run_record>& runs, bool by_samples,
                           int width) {
  const double W = width, H = 330, L = 56, R = 28, T = 14, B = 40;
  double x_max = x_extent(runs, by_samples), a_min = 1, a_max = 0;
  for (auto& r : runs)
    for (auto& p : curve(r.summary, by_samples)) {
      a_min = std::min(a_min, p.y);
      a_max = std::max(a_max, p.y);
    }
  double target = shared_target(runs);
  if (target > 0) {
    a_min = std::min(a_min, target);
    a_max = std::max(a_max, target);
  }
  // Start the axis near where the curves get interesting: the 10th percentile of all points.
  std::vector<double> ys;
  for (auto& r : runs)
    for (auto& p : curve(r.summary, by_samples))
      ys.push_back(p.y);
  if (ys.size() > 10) {
    std::sort(ys.begin(), ys.end());
    double floor = std::min(ys[ys.size() / 10], target > 0 ? target - 0.05 : 1.0);
    for (auto& r : runs) {  // but never above any run's best: every curve stays in view
      double best = -1;
      for (auto& p : curve(r.summary, by_samples))
        best = std::max(best, p.y);
      if (best >= 0)
        floor = std::min(floor, best - 0.02);
    }
    a_min = std::max(a_min, floor);
  }
  a_min = std::max(0.0, a_min - 0.01);
  a_max = std::min(1.0, a_max + 0.01);
  if (a_max <= a_min)
    a_max = a_min + 0.1;
  svg_chart chart("chart", all.size(), {W, H, L, R, T, B}, scale::linear(0, x_max), scale::linear(a_min, a_max));
  auto a_ticks = nice_ticks(a_min, a_max, 6);
  // As many decimals as the step needs (a step of 0.005 needs three: 0.965, not 0.97 twice).
  double a_step = a_ticks.size() > 1 ? a_ticks[1] - a_ticks[0] : 0.01;
  auto a_format = "%." + std::to_string(std::max(2, static_cast<int>(std::ceil(-std::log10(a_step) - 1e-9)))) + "f";
  chart.frame().y_grid(a_ticks, [&](double v) { return fmt(a_format.c_str(), v); });
  run_x_axis(chart, x_max, by_samples);
  chart.clip(by_samples ? "clip-samples" : "clip-time");
  if (target > 0)
    chart.rule(target, "target " + fmt("%.3g", target));
  for (size_t i = 0; i < all.size(); ++i) {
    std::string color = series_color(i);
    if (all[i].seeded()) {  // each seed thin and pale, the mean bold over the band where every seed has data
      for (auto* r : all[i].runs)
        chart.line(accuracy_curve(r->summary, by_samples), color, "stroke-opacity='0.2' stroke-width='0.8'",
                   all[i].label() + " seed " + std::to_string(r->summary.seed), "seed");
      points upper, lower, mean;
      for (auto& b : accuracy_band(all[i], by_samples)) {
        upper.push_back({b.x, b.hi});
        lower.push_back({b.x, b.lo});
        mean.push_back({b.x, b.mean});
      }
      chart.band(upper, lower, color, 0.12)
        .line(mean, color, "stroke-width='2.5' stroke-linejoin='round'", all[i].label());
    } else {
      chart.line(accuracy_curve(all[i].first().summary, by_samples), color, "stroke-width='2' stroke-linejoin='round'",
                 all[i].label());
    }
    for (auto* r : all[i].runs) {  // where each run stopped
      auto c = accuracy_curve(r->summary, by_samples);
      if (!c.empty())
        chart.dot(c.back().first, c.back().second, all[i].seeded() ? 2.5 : 3.5, color);
    }
  }
  return chart.str();
}

// The learning rate under the accuracy chart, on the same x axis (same width
// and margins), from 0 to the highest rate.
std::string lr_chart(const std::vector<series>& all, const std::vector<run_record>& runs, bool by_samples, int width) {
  const double W = width, H = 150, L = 56, R = 28, T = 10, B = 34;
  double x_max = x_extent(runs, by_samples), lr_max = 0;
  for (auto& r : runs)
    for (auto& p : lr_steps(r, by_samples))
      lr_max = std::max(lr_max, p.y);
  if (lr_max <= 0)
    lr_max = 1;
  auto ticks = nice_ticks(0, lr_max * 1.05, 3);  // headroom: the base rate is not drawn on the frame
  double top = std::max(lr_max * 1.05, ticks.empty() ? 0 : ticks.back());
  svg_chart chart("chart lr", all.size(), {W, H, L, R, T, B}, scale::linear(0, x_max), scale::linear(0, top));
  chart.frame().y_grid(ticks, [](double v) { return fmt("%g", v); });
  run_x_axis(chart, x_max, by_samples);
  chart.y_name("lr");
  // Later runs are drawn thinner on top, so that equal schedules stay visible as one line.
  for (size_t i = 0; i < all.size(); ++i) {  // a series' seeds share a schedule by samples: its first stands for it
    auto steps = lr_steps(all[i].first(), by_samples);
    if (steps.empty())
      continue;
    points pts;
    for (size_t k = 0; k < steps.size(); ++k) {
      if (k > 0)
        pts.push_back({steps[k].x, steps[k - 1].y});
      pts.push_back({steps[k].x, steps[k].y});
    }
    double w = std::max(1.0, 3.0 - 0.5 * static_cast<double>(i));
    chart.line(pts, series_color(i), "stroke-width='" + fmt("%g", w) + "'", all[i].label());
  }
  return chart.str();
}

std::string legend(const std::vector<series>& all) {
  std::string out = "<p class='legend'>";
  for (size_t i = 0; i < all.size(); ++i)
    out += "<span><i class='swatch' style='background:" + std::string(series_color(i)) + "'></i>" +
           escape_html(all[i].label()) + "</span>";
  return out + "</p>";
}

// "6 runs (2 sets of seeds) of mlp with 4 workers on the virtual clock, straggler 3:x4".
std::string subtitle(const std::vector<series>& all, const std::vector<run_record>& runs, bool seeded) {
  auto& s0 = runs.front().summary;
  bool alike = std::all_of(runs.begin(), runs.end(), [&](auto& r) {
    return r.summary.model == s0.model && r.summary.workers == s0.workers && r.summary.clock == s0.clock &&
           r.summary.straggler == s0.straggler;
  });
  return "<p class='sub'>" + std::to_string(runs.size()) + " run" + (runs.size() == 1 ? "" : "s") +
         (seeded ? " (" + std::to_string(all.size()) + " set" + (all.size() == 1 ? "" : "s") + " of seeds)" : "") +
         (alike ? " of " + escape_html(s0.model) + " with " + std::to_string(s0.workers) + " workers on the " +
                    escape_html(s0.clock) + " clock" +
                    (s0.straggler.empty() ? "" : ", straggler " + escape_html(s0.straggler))
                : std::string(" whose model, workers, clock or stragglers differ (see Settings)")) +
         "</p>";
}

// The table, and what its columns mean.
std::string comparison_section(const std::vector<series>& all, const std::vector<run_record>& runs, bool seeded) {
  bool accuracy = measures_accuracy(runs);
  return "<h2>Comparison</h2>" + table(all, runs) +
         "<p class='note'>Best figure of each column in bold on green. to target = first evaluation at or above "
         "the target; stopped = what ended the run (target or the shared time cap) and when; " +
         (accuracy ? "final acc = accuracy of the model at the stop; acc@N = accuracy after N samples, the fewest any "
                     "run processed (interpolated between evaluations); "
                   : "") +
         (final_metric_names(runs).empty() ? "" : "final NAME = what the loop's final evaluation measured (never "
                                                  "marked: whether more is better depends on the measure); ") +
         "compute ratio = mean over workers of compute time / run time; "
         "wait s = waiting summed over workers; staleness = mean updates between a gradient's weights and "
         "its application." +
         (seeded ? std::string(" Over seeds, each figure is the mean and, under it, the lowest and highest; "
                               "\"2 of 3\" = the figure exists for 2 of 3 seeds (the others did not reach the target), "
                               "and the mean is over those; a column's best is marked among the protocols that have "
                               "it on every seed.")
                 : "") +
         "</p>";
}

// Accuracy (or what the loop measured) and the learning rate, against time and samples.
std::string learning_section(const std::vector<series>& all, const std::vector<run_record>& runs, bool seeded) {
  bool lr = scheduled(runs);
  auto column = [&](bool by_samples) {
    return accuracy_chart(all, runs, by_samples, page_w / 2 - 8) + (lr ? lr_chart(all, runs, by_samples, page_w / 2 - 8) : "");
  };
  if (measures_accuracy(runs))
    return std::string("<h2>Test accuracy") + (lr ? " and learning rate" : "") + "</h2>" + legend(all) +
           "<div class='charts'><div><h3>against time</h3>" + column(false) + "</div><div><h3>against samples</h3>" +
           column(true) + "</div></div><p class='note'>A dot marks each run's end, at its final evaluation." +
           (seeded ? " Over seeds, the bold line is the mean and the shaded band the lowest to highest accuracy, "
                     "drawn where every seed has data (to the earliest end); each seed's own run is the pale line "
                     "under it."
                   : "") +
           (lr ? " Below each chart, the learning rate the PS applied, as the trace records it (its first update, "
                 "then each move of 1% of the base rate); every protocol meets the same rate at the same sample "
                 "count: against samples the rates coincide, against time each run follows its own speed."
               : "") +
           "</p>";
  // a regression, an autoencoder: what the loop measured, and its training loss
  return "<h2>What the loop measured, and training loss</h2>" + legend(all) +
         measures_section(all, runs, page_w / 2 - 8) +
         (lr ? "<div class='charts'><div><h3>learning rate against time</h3>" +
                 lr_chart(all, runs, false, page_w / 2 - 8) + "</div><div><h3>learning rate against samples</h3>" +
                 lr_chart(all, runs, true, page_w / 2 - 8) + "</div></div>"
             : std::string());
}

// Each series' first run as a per-worker timeline, on one time axis.
std::string timelines_section(const std::vector<series>& all, const std::vector<run_record>& runs, bool seeded) {
  double t_max = 0;
  for (auto& r : runs)
    t_max = std::max(t_max, r.summary.run_time_s);
  std::string out =
    "<h2>Per-worker timelines</h2><p class='legend'><span><i class='swatch' style='background:#59a14f'></i>"
    "computing</span><span><i class='swatch' style='background:#4e79a7'></i>communicating (push, pull)</span>"
    "<span><i class='swatch' style='background:#e15759'></i>waiting for a release</span><span>"
    "<i class='swatch' style='background:#f4f4f4;border:1px solid #ccc'></i>idle / done</span><span>"
    "<i class='swatch' style='background:#7b3294'></i>protocol switch</span></p><p class='note'>One row per "
    "worker, on a shared time axis; each of the 250 columns shows the shares of its time slice. Ticks above "
    "the rows mark barriers (taller: more in that slice). The black line is the run's end.</p>";
  if (seeded)
    out += "<p class='note'>Over seeds, the timeline of each protocol's first seed; the others are in their run "
           "folders (<code>syncpoint report FOLDER</code>).</p>";
  for (size_t i = 0; i < all.size(); ++i)
    out += "<h3><i class='swatch' style='background:" + std::string(series_color(i)) + "'></i>" +
           escape_html(all[i].label()) +
           (all[i].seeded() ? " <small>seed " + std::to_string(all[i].first().summary.seed) + "</small>" : "") +
           "</h3>" + timeline_svg(all[i].first(), t_max, page_w);
  return out;
}

}  // namespace

const char* report_css() { return css; }

std::string report_html(const std::vector<run_record>& runs) {
  std::string page = "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>syncpoint: protocol comparison</title><style>";
  page += css;
  page += "</style></head><body><h1>Protocol comparison</h1>";
  if (runs.empty())
    return page + "<p>No runs.</p></body></html>\n";
  auto all = by_seed(runs);
  bool seeded = std::any_of(all.begin(), all.end(), [](auto& s) { return s.seeded(); });
  page += subtitle(all, runs, seeded);
  page += "<h2>Who won, and why</h2>" + verdict(all, runs);
  page += comparison_section(all, runs, seeded);
  page += learning_section(all, runs, seeded);
  page += communication_section(all, runs, page_w);
  page += timelines_section(all, runs, seeded);
  page += "<h2>Settings</h2>" + settings(all);
  page += "<h2>How these runs were made</h2>" + provenance(runs);
  return page + "</body></html>\n";
}

}  // namespace syncpoint::report
