// The comparison page's communication–quality chart: each run's bytes moved
// (pushed and pulled, as the trace counts them) against its final quality
// (the held-out loss where the loop measures one, else the test accuracy),
// one point per run, and over seeds the mean with a box from the lowest to
// the highest of each. Local-update protocols and compressors trade the one
// for the other; this is where a reader sees the trade.
#include "cli/compare.hpp"
#include "cli/report_html.hpp"
#include "cli/report_parts.hpp"

#include <algorithm>
#include <cmath>

namespace syncpoint::cli::report_parts {

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
  double a = std::log10(x_lo) - 0.15, b = std::log10(x_hi) + 0.15;  // the x axis: log of bytes
  double pad = y_hi > y_lo ? (y_hi - y_lo) * 0.08 : std::max(std::abs(y_hi) * 0.05, 1e-6);
  double c = y_lo - pad, d = y_hi + pad;
  auto x = [&](double v) { return L + (W - L - R) * (std::log10(v) - a) / (b - a); };
  auto y = [&](double v) { return H - B - (H - B - T) * (v - c) / (d - c); };
  std::string y_name = loss ? "final held-out loss (lower is better)" : "final test accuracy (higher is better)";
  std::string svg = "<svg class='chart bytes' data-series='" + std::to_string(all.size()) + "' width='" +
                    fmt("%.0f", W) + "' height='" + fmt("%.0f", H) +
                    "' xmlns='http://www.w3.org/2000/svg' font-size='11'><rect x='" + fmt("%.0f", L) + "' y='" +
                    fmt("%.0f", T) + "' width='" + fmt("%.0f", W - L - R) + "' height='" + fmt("%.0f", H - T - B) +
                    "' fill='none' stroke='#999'/>";
  for (auto v : nice_ticks(c, d, 5))
    svg += "<line x1='" + fmt("%.0f", L) + "' x2='" + fmt("%.0f", W - R) + "' y1='" + fmt("%.1f", y(v)) + "' y2='" +
           fmt("%.1f", y(v)) + "' stroke='#eee'/><text x='" + fmt("%.0f", L - 6) + "' y='" + fmt("%.1f", y(v) + 4) +
           "' text-anchor='end' fill='#555'>" + fmt("%.3g", v) + "</text>";
  for (double p = std::pow(10, std::floor(a)); p <= std::pow(10, b); p *= 10)
    for (double m : {1.0, 2.0, 5.0})
      if (double v = p * m; std::log10(v) >= a && std::log10(v) <= b)
        svg += "<line x1='" + fmt("%.1f", x(v)) + "' x2='" + fmt("%.1f", x(v)) + "' y1='" + fmt("%.0f", T) + "' y2='" +
               fmt("%.0f", H - B) + "' stroke='#eee'/>" +
               (m == 1 ? "<text x='" + fmt("%.1f", x(v)) + "' y='" + fmt("%.0f", H - B + 15) +
                           "' text-anchor='middle' fill='#555'>" + bytes_text(v) + "</text>"
                       : std::string());
  svg += "<text x='" + fmt("%.0f", (L + W - R) / 2) + "' y='" + fmt("%.0f", H - 6) +
         "' text-anchor='middle' fill='#333'>bytes moved, pushes and pulls (log scale)</text><text transform='translate(13," +
         fmt("%.0f", (T + H - B) / 2) + ") rotate(-90)' text-anchor='middle' fill='#333'>" + escape_html(y_name) +
         "</text>";
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
        svg += "<circle cx='" + fmt("%.1f", x(moved(*r))) + "' cy='" + fmt("%.1f", y(*q)) + "' r='2.5' fill='" + color +
               "' fill-opacity='" + (all[i].seeded() ? "0.45" : "1") + "'><title>" + escape_html(all[i].label()) +
               " seed " + std::to_string(r->summary.seed) + ": " + bytes_text(moved(*r)) + ", " + fmt("%.4g", *q) +
               "</title></circle>";
      }
    if (n < 2)
      continue;
    double mx = std::pow(10, sx / n), my = sy / n;  // the mean (bytes: geometric), and the band over seeds
    svg += "<rect class='band' x='" + fmt("%.1f", x(lx)) + "' y='" + fmt("%.1f", y(hy)) + "' width='" +
           fmt("%.1f", std::max(1.0, x(hx) - x(lx))) + "' height='" + fmt("%.1f", std::max(1.0, y(ly) - y(hy))) +
           "' fill='" + color + "' fill-opacity='0.15' stroke='" + color + "' stroke-opacity='0.5'/><circle cx='" +
           fmt("%.1f", x(mx)) + "' cy='" + fmt("%.1f", y(my)) + "' r='5' fill='" + color + "'><title>" +
           escape_html(all[i].label()) + " mean over " + std::to_string(n) + " seeds: " + bytes_text(mx) + ", " +
           fmt("%.4g", my) + "</title></circle>";
  }
  svg += "</svg>";
  return "<h2>Communication and quality</h2>" + svg +
         "<p class='note'>Each run's bytes moved (its pushes as encoded and its pulls, summary.json's "
         "<code>pushed_bytes</code> + <code>pulled_bytes</code>) against its final " +
         (loss ? std::string("held-out loss") : std::string("test accuracy")) +
         ": one point per run; over seeds, a large dot at the mean and a shaded box from the lowest to the "
         "highest of each. Protocols that exchange every H steps, and compressors, move fewer bytes; the "
         "vertical distance is what that cost in quality.</p>";
}

}  // namespace syncpoint::cli::report_parts
