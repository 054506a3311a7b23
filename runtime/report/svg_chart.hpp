// The pages' charts: one inline SVG element, a plot box inside margins, axes
// with ticks and names, and marks placed by two scales (linear or log). Every
// chart of the comparison and sweep pages is drawn with it, so that they share
// one look: the frame, the grid, the labels' places and the series' colors.
//
//   svg_chart c("chart measure", runs, {560, 260, 62, 28, 12, 40}, scale::linear(0, 9.4), scale::log(0.1, 30));
//   c.frame().y_grid(log_ticks(0.1, 30), [](double v) { return fmt("%.3g", v); })
//    .x_ticks(nice_ticks(0, 9.4), [](double v) { return fmt("%g", v); })
//    .x_name("time (s, run clock)").y_name("loss (log scale)");
//   c.line({{0, 20}, {9.4, 0.2}}, series_color(0), "stroke-width='2'", "bsp").dot(9.4, 0.2, 3, series_color(0));
//   std::string svg = c.str();
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace syncpoint::report {

/// A chart's size and its margins around the plot box, in pixels.
struct plot_box {
  double W, H;        // the whole chart
  double L, R, T, B;  // left, right, top and bottom margins
};

/// Values to a share of an axis: linear, or by their log10 (for values > 0).
class scale {
 public:
  static scale linear(double lo, double hi) { return {lo, hi, false}; }
  static scale log(double lo, double hi) { return {lo, hi, true}; }
  /// 0 at lo, 1 at hi (outside for values outside).
  double share(double v) const;
  double lo() const { return lo_; }
  double hi() const { return hi_; }
  bool is_log() const { return log_; }

 private:
  scale(double lo, double hi, bool log) : lo_(lo), hi_(hi), log_(log) {}
  double lo_, hi_;
  bool log_;
};

/// (x, y) in the data's units.
using points = std::vector<std::pair<double, double>>;

class svg_chart {
 public:
  /// `css_class` names the chart for the page's style and the tests ("chart", "chart lr");
  /// `series` is how many series it draws, its attribute `count_attr`.
  svg_chart(const std::string& css_class, size_t series, plot_box box, scale x, scale y,
            const char* count_attr = "data-series");

  double px(double x) const;  ///< the pixel column of `x`
  double py(double y) const;  ///< the pixel row of `y`

  /// The plot box's outline.
  svg_chart& frame();
  /// A grid line across the box and a label left of it at each y tick.
  svg_chart& y_grid(const std::vector<double>& ticks, const std::function<std::string(double)>& label);
  /// A tick mark under the box and its label at each x tick.
  svg_chart& x_ticks(const std::vector<double>& ticks, const std::function<std::string(double)>& label);
  /// A grid line up the box at each x tick, and its label under the box where `label` gives one.
  svg_chart& x_grid(const std::vector<double>& ticks, const std::function<std::string(double)>& label);
  svg_chart& x_name(const std::string& text);  ///< under the x axis (escaped)
  svg_chart& y_name(const std::string& text);  ///< up the left edge (escaped)
  /// The marks drawn after this are clipped to the plot box (with 5 px of headroom at the top and
  /// right, for the dots at the ends); `id` is unique on the page.
  svg_chart& clip(const std::string& id);
  /// A dashed line across the box at `y`, with `label` (escaped) above its left end: a target.
  svg_chart& rule(double y, const std::string& label);
  /// A polyline through `p`; `attrs` are its extra attributes ("stroke-width='2'"), `title` its tooltip.
  svg_chart& line(const points& p, const std::string& color, const std::string& attrs, const std::string& title = "",
                  const std::string& css_class = "series");
  /// The area between `upper` and `lower` (both by x), filled pale.
  svg_chart& band(const points& upper, const points& lower, const std::string& color, double opacity);
  /// A dot at (x, y) of radius `r` pixels.
  svg_chart& dot(double x, double y, double r, const std::string& color, const std::string& attrs = "",
                 const std::string& title = "");
  /// A box from (x0, y0) to (x1, y1), at least a pixel each way: a spread over seeds.
  svg_chart& box(double x0, double y0, double x1, double y1, const std::string& color);
  /// SVG of the caller's own, in the chart's pixels (the timeline's rows).
  svg_chart& raw(const std::string& svg);

  std::string str() const;

 private:
  std::string pixels(const points& p) const;

  plot_box b_;
  scale x_, y_;
  std::string head_, body_;
  bool clipped_ = false;
};

/// Round axis ticks from `lo` to `hi`: about `count` multiples of 1, 2 or 5 times a power of ten.
std::vector<double> nice_ticks(double lo, double hi, int count = 5);
/// Ticks at 1, 2 and 5 times the powers of ten from lo to hi (both > 0): a log axis's.
std::vector<double> log_ticks(double lo, double hi);
/// A color per series index, distinct for the first ten.
const char* series_color(size_t i);

}  // namespace syncpoint::report
