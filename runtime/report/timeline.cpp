// The per-worker timeline of one run. A run has thousands of spans per worker,
// so the time axis is cut into bins and each worker's row shows, per bin, the
// share of time spent computing, communicating (push + pull) and waiting,
// stacked from the bottom. Barriers are counted per bin and drawn as ticks in a
// row above the workers; switches, lost workers and workers that joined are marked where they happen.
#include "runtime/report/comparison.hpp"
#include "runtime/report/page.hpp"
#include "core/clock.hpp"
#include "core/time_share.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace syncpoint::report {

namespace {

constexpr int bins = 250;
constexpr int label_w = 90;  // left margin for row names
using time_share::categories;
constexpr std::array<const char*, categories> category_color{"#59a14f", "#4e79a7", "#e15759"};

struct binned {
  int rows = 0;
  std::vector<std::array<double, categories>> share;  // [row * bins + bin], seconds, then shares
  std::vector<int> barriers = std::vector<int>(bins, 0);
  std::vector<double> link = std::vector<double>(bins, 0);
  bool has_link = false;
};

// Adds the part of [t0, t1) inside each bin to `add(bin, seconds)`.
template <class Add>
void spread(double t0, double t1, double bin_s, Add add) {
  if (!(t1 > t0) || bin_s <= 0)
    return;
  int b = std::max(0, static_cast<int>(t0 / bin_s));
  for (; b < bins && b * bin_s < t1; ++b) {
    double lo = std::max(t0, b * bin_s), hi = std::min(t1, (b + 1) * bin_s);
    if (hi > lo)
      add(b, hi - lo);
  }
}

binned bin_trace(const run_record& run, double t_max) {
  binned out;
  out.rows = std::max(0, run.summary.workers);
  out.share.assign(static_cast<size_t>(out.rows) * bins, {0, 0, 0});
  double bin_s = t_max / bins;
  for (auto& ev : run.trace) {
    double t0 = to_seconds(ev.t0), t1 = to_seconds(ev.t1);
    auto c = time_share::of(ev.kind);
    if (c && ev.worker >= 0 && ev.worker < out.rows) {
      auto* row = &out.share[static_cast<size_t>(ev.worker) * bins];
      spread(t0, t1, bin_s, [&](int b, double s) { row[b][*c] += s; });
    } else if (ev.kind == "barrier" && bin_s > 0) {
      out.barriers[static_cast<size_t>(std::min(bins - 1, static_cast<int>(t0 / bin_s)))]++;
    } else if (ev.kind == "link") {
      out.has_link = true;
      spread(t0, t1, bin_s, [&](int b, double s) { out.link[static_cast<size_t>(b)] += s; });
    }
  }
  for (auto& cell : out.share) {  // seconds -> shares of the bin (overlap, e.g. wbsp-overlap, is capped)
    double scale = time_share::scale(cell[0] + cell[1] + cell[2], bin_s);
    for (auto& x : cell)
      x *= scale;
  }
  for (auto& x : out.link)
    x = std::min(1.0, x / bin_s);
  return out;
}

// A filled step area from the row's bottom up to `top(b)` (a share 0..1).
template <class Top>
std::string area(double x0, double bin_w, double bottom, double height, const char* color, Top top) {
  std::string d = "M" + fmt("%.1f", x0) + "," + fmt("%.1f", bottom);
  bool any = false;
  double last = -1;
  for (int b = 0; b < bins; ++b) {
    double v = std::min(1.0, top(b));
    any = any || v > 0.002;
    if (v != last) {
      d += "V" + fmt("%.1f", bottom - v * height);
      last = v;
    }
    d += "H" + fmt("%.1f", x0 + (b + 1) * bin_w);
  }
  if (!any)
    return "";
  d += "V" + fmt("%.1f", bottom) + "Z";
  return "<path d='" + d + "' fill='" + color + "'/>";
}

}  // namespace

std::string timeline_svg(const run_record& run, double t_max, int width) {
  if (t_max <= 0)
    t_max = 1;
  auto data = bin_trace(run, t_max);
  const int n = data.rows;
  const double row_h = std::clamp(220.0 / std::max(1, n), 9.0, 22.0);
  const double gap = row_h >= 12 ? 2 : 1;
  const double plot_w = width - label_w - 20, bin_w = plot_w / bins, x0 = label_w;
  const double barrier_h = 14, top = 6 + barrier_h + 4;
  const double link_h = data.has_link ? row_h + 4 : 0;
  const double axis_y = top + n * row_h + link_h + 4;
  const double height = axis_y + 22;
  // The rows are drawn here; the chart gives the time scale, the element and the time axis.
  svg_chart chart("timeline", static_cast<size_t>(n), {static_cast<double>(width), height, x0, 20, top, height - axis_y},
                  scale::linear(0, t_max), scale::linear(0, 1), "data-workers");
  auto x_at = [&](double t) { return chart.px(t); };
  std::string svg;
  // Barriers: one tick per bin that had any, taller for more.
  int most = *std::max_element(data.barriers.begin(), data.barriers.end());
  svg += "<text x='" + std::to_string(label_w - 6) + "' y='" + fmt("%.1f", 6 + barrier_h - 3) +
         "' text-anchor='end' fill='#555'>barriers</text>";
  if (most > 0) {
    std::string d;
    for (int b = 0; b < bins; ++b)
      if (int k = data.barriers[static_cast<size_t>(b)]) {
        double h = barrier_h * (0.35 + 0.65 * std::log1p(k) / std::log1p(most));
        d += "M" + fmt("%.1f", x0 + (b + 0.5) * bin_w) + "," + fmt("%.1f", 6 + barrier_h) + "v" +
             fmt("%.1f", -h);
      }
    svg += "<path class='barriers' d='" + d + "' stroke='#333' stroke-width='" +
           fmt("%.1f", std::max(1.0, bin_w * 0.6)) + "'/>";
  }
  for (int w = 0; w < n; ++w) {
    double y = top + w * row_h, bottom = y + row_h - gap, h = row_h - gap;
    auto* row = &data.share[static_cast<size_t>(w) * bins];
    svg += "<g class='worker-row'><rect x='" + fmt("%.1f", x0) + "' y='" + fmt("%.1f", y) + "' width='" +
           fmt("%.1f", plot_w) + "' height='" + fmt("%.1f", h) + "' fill='#f4f4f4'/>";
    svg += "<text x='" + std::to_string(label_w - 6) + "' y='" + fmt("%.1f", bottom - h / 2 + 4) +
           "' text-anchor='end'>worker " + std::to_string(w) + "</text>";
    // Drawn from the tallest stack down, each over the last: wait, comm, compute.
    svg += area(x0, bin_w, bottom, h, category_color[time_share::wait], [&](int b) { return row[b][0] + row[b][1] + row[b][2]; });
    svg += area(x0, bin_w, bottom, h, category_color[time_share::comm], [&](int b) { return row[b][0] + row[b][1]; });
    svg += area(x0, bin_w, bottom, h, category_color[time_share::compute], [&](int b) { return row[b][0]; });
    svg += "</g>";
  }
  if (data.has_link) {
    double y = top + n * row_h + 4, h = row_h - gap;
    svg += "<text x='" + std::to_string(label_w - 6) + "' y='" + fmt("%.1f", y + h / 2 + 4) +
           "' text-anchor='end'>PS link</text><rect x='" + fmt("%.1f", x0) + "' y='" + fmt("%.1f", y) +
           "' width='" + fmt("%.1f", plot_w) + "' height='" + fmt("%.1f", h) + "' fill='#f4f4f4'/>";
    svg += area(x0, bin_w, y + h, h, "#9c755f", [&](int b) { return data.link[static_cast<size_t>(b)]; });
  }
  // The run's end, switches and losses.
  double end_x = x_at(run.summary.run_time_s);
  svg += "<line x1='" + fmt("%.1f", end_x) + "' x2='" + fmt("%.1f", end_x) + "' y1='" + fmt("%.1f", top - 4) +
         "' y2='" + fmt("%.1f", axis_y) + "' stroke='#000' stroke-width='1'/>";
  for (auto& ev : run.trace) {
    double x = x_at(to_seconds(ev.t0));
    if (ev.kind == "phase" && to_seconds(ev.t0) > 0) {
      auto gt = ev.note.find('>');
      std::string to = gt == std::string::npos ? ev.note : "to " + ev.note.substr(gt + 1);
      svg += "<line class='switch' x1='" + fmt("%.1f", x) + "' x2='" + fmt("%.1f", x) + "' y1='" +
             fmt("%.1f", top - 2) + "' y2='" + fmt("%.1f", axis_y) +
             "' stroke='#7b3294' stroke-width='2' stroke-dasharray='5 3'/><text x='" + fmt("%.1f", x + 4) +
             "' y='" + fmt("%.1f", 6 + barrier_h - 3) + "' fill='#7b3294'>" + escape_html(to) + "</text>";
    } else if (ev.kind == "lost" && ev.worker >= 0 && ev.worker < n) {
      double y = top + ev.worker * row_h + (row_h - gap) / 2;
      svg += "<text class='lost' x='" + fmt("%.1f", x) + "' y='" + fmt("%.1f", y + 4) +
             "' fill='#b00' font-weight='bold' text-anchor='middle'>&#x2715; lost</text>";
    } else if (ev.kind == "joined" && ev.worker >= 0 && ev.worker < n) {
      double y = top + ev.worker * row_h + (row_h - gap) / 2;
      // Left of the join, over the row's idle part (it had no worker before).
      svg += "<text class='joined' x='" + fmt("%.1f", x - 3) + "' y='" + fmt("%.1f", y + 4) +
             "' fill='#1a7f37' font-weight='bold' text-anchor='end'>joined &#x2192;</text>";
    }
  }
  return chart.raw(svg).x_ticks(nice_ticks(0, t_max, 8), [](double t) { return fmt("%g", t) + " s"; }).str();
}

}  // namespace syncpoint::report
