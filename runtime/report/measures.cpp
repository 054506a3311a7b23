// The comparison page's charts for runs whose loop measures no test accuracy
// (a regression's held-out MSE, an autoencoder's reconstruction error): each
// measure the evaluator reported, and the workers' training loss, from the
// runs' traces.
#include "runtime/report/comparison.hpp"
#include "runtime/report/page.hpp"
#include "runtime/report/parts.hpp"
#include "core/clock.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace syncpoint::report::parts {

namespace {

using curve = std::vector<std::pair<double, double>>;  // (x, y), by x

constexpr int loss_bins = 60;

// (run-clock seconds, samples applied) at the start, each evaluation and the end.
curve sample_clock(const run_record& r) {
  curve c{{0, 0}};
  for (auto& e : r.trace)
    if (e.kind == "eval" || e.kind == "final_eval" || e.kind == "end")
      c.push_back({to_seconds(e.t0), static_cast<double>(e.iter)});
  std::sort(c.begin(), c.end());
  return c;
}

// The evaluator's values of one measure.
curve measure_curve(const run_record& r, const std::string& name, bool by_samples) {
  curve c;
  for (auto& e : r.trace)
    if (e.kind == "metric" && e.worker < 0 && e.note == name && std::isfinite(e.value))
      c.push_back({by_samples ? static_cast<double>(e.iter) : to_seconds(e.t0), e.value});
  std::stable_sort(c.begin(), c.end(), [](auto& a, auto& b) { return a.first < b.first; });
  return c;
}

// The workers' step losses, averaged over each of `loss_bins` slices of the run.
curve loss_curve(const run_record& r, bool by_samples) {
  double end = std::max(r.summary.run_time_s, 1e-9);
  std::vector<double> t_sum(loss_bins), v_sum(loss_bins), n(loss_bins);
  for (auto& e : r.trace)
    if (e.kind == "compute" && e.worker >= 0 && std::isfinite(e.value)) {
      double t = to_seconds(e.t1);
      auto k = std::min(loss_bins - 1, static_cast<int>(t / end * loss_bins));
      t_sum[static_cast<size_t>(k)] += t;
      v_sum[static_cast<size_t>(k)] += e.value;
      n[static_cast<size_t>(k)] += 1;
    }
  auto clock = sample_clock(r);
  curve c;
  for (size_t k = 0; k < static_cast<size_t>(loss_bins); ++k)
    if (n[k] > 0) {
      double t = t_sum[k] / n[k];
      c.push_back({by_samples ? value_at(clock, t) : t, v_sum[k] / n[k]});
    }
  return c;
}

// One chart of a curve per run, each series in its color (the seeds of a
// series pale), a dot where each run ended; a log scale when the values span
// more than a factor of 10.
std::string line_chart(const std::vector<series>& all, const std::function<curve(const run_record&)>& of,
                       bool by_samples, int width, const std::string& y_name) {
  const double W = width, H = 260, L = 62, R = 28, T = 12, B = 40;
  double x_max = 0, lo = INFINITY, hi = -INFINITY;
  std::vector<std::vector<curve>> curves;  // per series, per run
  for (auto& s : all) {
    auto& per_run = curves.emplace_back();
    for (auto* r : s.runs) {
      per_run.push_back(of(*r));
      for (auto& [x, y] : per_run.back()) {
        x_max = std::max(x_max, x);
        lo = std::min(lo, y);
        hi = std::max(hi, y);
      }
    }
  }
  if (!(hi >= lo))
    return "<p class='note'>No run recorded any.</p>";
  x_max = x_max > 0 ? x_max : 1;
  bool log = lo > 0 && hi / lo > 10;
  double a, b;
  if (log) {
    a = std::pow(10, std::log10(lo) - 0.02);
    b = std::pow(10, std::log10(hi) + 0.02);
  } else {
    double pad = hi > lo ? (hi - lo) * 0.05 : std::max(std::abs(hi) * 0.05, 1e-9);
    a = lo - pad;
    b = hi + pad;
  }
  svg_chart chart("chart measure", all.size(), {W, H, L, R, T, B}, scale::linear(0, x_max),
                  log ? scale::log(a, b) : scale::linear(a, b));
  chart.frame().y_grid(log ? log_ticks(a, b) : nice_ticks(a, b, 5), [](double v) { return fmt("%.3g", v); });
  run_x_axis(chart, x_max, by_samples);
  chart.y_name(y_name + (log ? " (log scale)" : ""));
  for (size_t i = 0; i < all.size(); ++i) {
    std::string color = series_color(i);
    for (size_t k = 0; k < curves[i].size(); ++k) {
      auto& c = curves[i][k];
      if (c.empty())
        continue;
      std::string who = all[i].label() + (all[i].seeded() ? " seed " + std::to_string(all[i].runs[k]->summary.seed) : "");
      chart.line(c, color, all[i].seeded() ? "stroke-width='1.2' stroke-opacity='0.7' stroke-linejoin='round'"
                                           : "stroke-width='2' stroke-linejoin='round'", who)
        .dot(c.back().first, c.back().second, 3, color);
    }
  }
  return chart.str();
}

std::string two_charts(const std::vector<series>& all, const std::function<curve(const run_record&, bool)>& of,
                       int width, const std::string& y_name) {
  auto chart = [&](bool by_samples) {
    return line_chart(all, [&](const run_record& r) { return of(r, by_samples); }, by_samples, width, y_name);
  };
  return "<div class='charts'><div><h3>" + escape_html(y_name) + " against time</h3>" + chart(false) +
         "</div><div><h3>" + escape_html(y_name) + " against samples</h3>" + chart(true) + "</div></div>";
}

}  // namespace

bool measures_accuracy(const std::vector<run_record>& runs) {
  return std::any_of(runs.begin(), runs.end(), [](auto& r) { return r.summary.final_accuracy >= 0; });
}

std::optional<double> final_metric(const run_summary& s, const std::string& name) {
  for (auto& m : s.final_metrics)
    if (m.name == name)
      return m.value;
  return std::nullopt;
}

std::vector<std::string> final_metric_names(const std::vector<run_record>& runs) {
  std::vector<std::string> names;
  for (auto& r : runs)
    for (auto& m : r.summary.final_metrics)
      if (std::find(names.begin(), names.end(), m.name) == names.end())
        names.push_back(m.name);
  return names;
}

std::string measures_section(const std::vector<series>& all, const std::vector<run_record>& runs, int width) {
  std::string out;
  for (auto& name : final_metric_names(runs))
    out += two_charts(all, [&](const run_record& r, bool by_samples) { return measure_curve(r, name, by_samples); },
                      width, "held-out " + name);
  out += two_charts(all, loss_curve, width, "training loss");
  return out + "<p class='note'>The runs' loop measures no test accuracy. Each held-out measure is what the loop's "
               "evaluation reported at each evaluation of the model (a dot marks the final one); the training loss "
               "is the workers' step losses averaged over each sixtieth of the run. Against samples, the loss's "
               "times are placed by the sample counts of the evaluations around them. A chart whose values span "
               "more than a factor of 10 has a log scale.</p>";
}

}  // namespace syncpoint::report::parts
