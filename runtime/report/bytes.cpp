// The comparison page's communication–quality chart: each run's bytes moved
// (pushed and pulled, as the trace counts them) against its final quality
// (the held-out loss where the loop measures one, else the test accuracy),
// one point per run, and over seeds the mean with a box from the lowest to
// the highest of each. Local-update protocols and compressors trade the one
// for the other; this is where a reader sees the trade.
#include "runtime/report/comparison.hpp"
#include "runtime/report/page.hpp"
#include "runtime/report/parts.hpp"

#include <algorithm>
#include <cmath>

namespace syncpoint::report::parts {

namespace {

double moved(const run_record& r) {
  return static_cast<double>(r.summary.pushed_bytes + r.summary.pulled_bytes);
}

// The measure the chart's y axis shows: the held-out loss if any run has one, else the accuracy.
std::optional<double> quality(const run_record& r, bool loss) {
  if (loss)
    return final_metric(r.summary, "loss");
  if (r.summary.final_accuracy < 0)
    return std::nullopt;
  return r.summary.final_accuracy;
}

// "12 MB": bytes at a glance, in powers of 1000.
std::string bytes_text(double b) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (b >= 1000 && u < 4) {
    b /= 1000;
    ++u;
  }
  return fmt(b >= 100 || u == 0 ? "%.0f" : "%.3g", b) + " " + units[u];
}

}  // namespace

std::string communication_section(const std::vector<series>& all, const std::vector<run_record>& runs, int width) {
  bool loss = std::any_of(runs.begin(), runs.end(), [](auto& r) { return final_metric(r.summary, "loss").has_value(); });
  double x_lo = INFINITY, x_hi = 0, y_lo = INFINITY, y_hi = -INFINITY;
  for (auto& r : runs)
    if (auto q = quality(r, loss); q && moved(r) > 0) {
      x_lo = std::min(x_lo, moved(r));
      x_hi = std::max(x_hi, moved(r));
      y_lo = std::min(y_lo, *q);
      y_hi = std::max(y_hi, *q);
    }
  if (!(x_hi > 0) || !(y_hi >= y_lo))
    return {};
  const double W = width, H = 280, L = 62, R = 28, T = 12, B = 40;
  double a = std::pow(10, std::log10(x_lo) - 0.15), b = std::pow(10, std::log10(x_hi) + 0.15);  // the x axis: bytes, log
  double pad = y_hi > y_lo ? (y_hi - y_lo) * 0.08 : std::max(std::abs(y_hi) * 0.05, 1e-6);
  double c = y_lo - pad, d = y_hi + pad;
  std::string y_name = loss ? "final held-out loss (lower is better)" : "final test accuracy (higher is better)";
  svg_chart chart("chart bytes", all.size(), {W, H, L, R, T, B}, scale::log(a, b), scale::linear(c, d));
  auto power_of_ten = [](double v) {
    double p = std::pow(10, std::round(std::log10(v)));
    return std::abs(v - p) < 1e-9 * p;
  };
  // Ticks at 1, 2 and 5 times the powers of ten, labelled at the powers; where the runs moved about
  // as much (fewer than three such ticks in the range), round ticks, each labelled.
  auto x_ticks = log_ticks(a, b);
  bool every = x_ticks.size() < 3;
  if (every)
    x_ticks = nice_ticks(a, b, 4);
  chart.frame()
    .y_grid(nice_ticks(c, d, 5), [](double v) { return fmt("%.3g", v); })
    .x_grid(x_ticks, [&](double v) { return every || power_of_ten(v) ? bytes_text(v) : std::string(); })
    .x_name("bytes moved, pushes and pulls (log scale)")
    .y_name(y_name);
  for (size_t i = 0; i < all.size(); ++i) {
    std::string color = series_color(i);
    double sx = 0, sy = 0, lx = INFINITY, hx = 0, ly = INFINITY, hy = -INFINITY;
    int n = 0;
    for (auto* r : all[i].runs)
      if (auto q = quality(*r, loss); q && moved(*r) > 0) {
        sx += std::log10(moved(*r));
        sy += *q;
        lx = std::min(lx, moved(*r));
        hx = std::max(hx, moved(*r));
        ly = std::min(ly, *q);
        hy = std::max(hy, *q);
        ++n;
        chart.dot(moved(*r), *q, 2.5, color, std::string("fill-opacity='") + (all[i].seeded() ? "0.45" : "1") + "'",
                  all[i].label() + " seed " + std::to_string(r->summary.seed) + ": " + bytes_text(moved(*r)) + ", " +
                    fmt("%.4g", *q));
      }
    if (n < 2)
      continue;
    double mx = std::pow(10, sx / n), my = sy / n;  // the mean (bytes: geometric), and the band over seeds
    chart.box(lx, ly, hx, hy, color)
      .dot(mx, my, 5, color, "",
           all[i].label() + " mean over " + std::to_string(n) + " seeds: " + bytes_text(mx) + ", " + fmt("%.4g", my));
  }
  std::string svg = chart.str();
  return "<h2>Communication and quality</h2>" + svg +
         "<p class='note'>Each run's bytes moved (its pushes as encoded and its pulls, summary.json's "
         "<code>pushed_bytes</code> + <code>pulled_bytes</code>) against its final " +
         (loss ? std::string("held-out loss") : std::string("test accuracy")) +
         ": one point per run; over seeds, a large dot at the mean and a shaded box from the lowest to the "
         "highest of each. Protocols that exchange every H steps, and compressors, move fewer bytes; the "
         "vertical distance is what that cost in quality.</p>";
}

}  // namespace syncpoint::report::parts
