#include "runtime/report/svg_chart.hpp"

#include "core/html.hpp"
#include "core/text.hpp"

#include <algorithm>
#include <cmath>

namespace syncpoint::report {

namespace {

std::string px0(double v) { return fmt("%.0f", v); }
std::string px1(double v) { return fmt("%.1f", v); }

}  // namespace

double scale::share(double v) const {
  if (log_)
    return (std::log10(v) - std::log10(lo_)) / (std::log10(hi_) - std::log10(lo_));
  return (v - lo_) / (hi_ - lo_);
}

svg_chart::svg_chart(const std::string& css_class, size_t series, plot_box box, scale x, scale y,
                     const char* count_attr)
    : b_(box), x_(x), y_(y) {
  head_ = "<svg class='" + css_class + "' " + count_attr + "='" + std::to_string(series) + "' width='" + px0(b_.W) +
          "' height='" + px0(b_.H) + "' xmlns='http://www.w3.org/2000/svg' font-size='11'>";
}

double svg_chart::px(double x) const { return b_.L + (b_.W - b_.L - b_.R) * x_.share(x); }
double svg_chart::py(double y) const { return b_.H - b_.B - (b_.H - b_.B - b_.T) * y_.share(y); }

svg_chart& svg_chart::frame() {
  body_ += "<rect x='" + px0(b_.L) + "' y='" + px0(b_.T) + "' width='" + px0(b_.W - b_.L - b_.R) + "' height='" +
           px0(b_.H - b_.B - b_.T) + "' fill='none' stroke='#bbb'/>";
  return *this;
}

svg_chart& svg_chart::y_grid(const std::vector<double>& ticks, const std::function<std::string(double)>& label) {
  for (double v : ticks)
    body_ += "<line x1='" + px0(b_.L) + "' x2='" + px0(b_.W - b_.R) + "' y1='" + px1(py(v)) + "' y2='" + px1(py(v)) +
             "' stroke='#eee'/><text x='" + px0(b_.L - 5) + "' y='" + px1(py(v) + 4) +
             "' text-anchor='end' fill='#555'>" + escape_html(label(v)) + "</text>";
  return *this;
}

svg_chart& svg_chart::x_ticks(const std::vector<double>& ticks, const std::function<std::string(double)>& label) {
  for (double v : ticks)
    body_ += "<line x1='" + px1(px(v)) + "' x2='" + px1(px(v)) + "' y1='" + px0(b_.H - b_.B) + "' y2='" +
             px0(b_.H - b_.B + 4) + "' stroke='#999'/><text x='" + px1(px(v)) + "' y='" + px0(b_.H - b_.B + 15) +
             "' text-anchor='middle' fill='#555'>" + escape_html(label(v)) + "</text>";
  return *this;
}

svg_chart& svg_chart::x_grid(const std::vector<double>& ticks, const std::function<std::string(double)>& label) {
  for (double v : ticks) {
    body_ += "<line x1='" + px1(px(v)) + "' x2='" + px1(px(v)) + "' y1='" + px0(b_.T) + "' y2='" + px0(b_.H - b_.B) +
             "' stroke='#eee'/>";
    if (auto text = label(v); !text.empty())
      body_ += "<text x='" + px1(px(v)) + "' y='" + px0(b_.H - b_.B + 15) + "' text-anchor='middle' fill='#555'>" +
               escape_html(text) + "</text>";
  }
  return *this;
}

svg_chart& svg_chart::x_name(const std::string& text) {
  body_ += "<text x='" + px0((b_.L + b_.W - b_.R) / 2) + "' y='" + px0(b_.H - 6) +
           "' text-anchor='middle' fill='#333'>" + escape_html(text) + "</text>";
  return *this;
}

svg_chart& svg_chart::y_name(const std::string& text) {
  body_ += "<text transform='translate(13," + px0((b_.T + b_.H - b_.B) / 2) +
           ") rotate(-90)' text-anchor='middle' fill='#333'>" + escape_html(text) + "</text>";
  return *this;
}

svg_chart& svg_chart::clip(const std::string& id) {
  body_ += "<defs><clipPath id='" + id + "'><rect x='" + px0(b_.L) + "' y='" + px0(b_.T - 5) + "' width='" +
           px0(b_.W - b_.L - b_.R + 5) + "' height='" + px0(b_.H - b_.B - b_.T + 5) + "'/></clipPath></defs><g clip-path='url(#" +
           id + ")'>";
  clipped_ = true;
  return *this;
}

svg_chart& svg_chart::rule(double y, const std::string& label) {
  body_ += "<line x1='" + px0(b_.L) + "' x2='" + px0(b_.W - b_.R) + "' y1='" + px1(py(y)) + "' y2='" + px1(py(y)) +
           "' stroke='#777' stroke-dasharray='5 4'/><text x='" + px0(b_.L + 6) + "' y='" + px1(py(y) - 4) +
           "' fill='#555'>" + escape_html(label) + "</text>";
  return *this;
}

std::string svg_chart::pixels(const points& p) const {
  std::string out;
  for (auto& [x, y] : p)
    out += px1(px(x)) + "," + px1(py(y)) + " ";
  return out;
}

svg_chart& svg_chart::line(const points& p, const std::string& color, const std::string& attrs,
                           const std::string& title, const std::string& css_class) {
  body_ += "<polyline class='" + css_class + "' fill='none' stroke='" + color + "' " + attrs + " points='" +
           pixels(p) + "'" + (title.empty() ? "/>" : "><title>" + escape_html(title) + "</title></polyline>");
  return *this;
}

svg_chart& svg_chart::band(const points& upper, const points& lower, const std::string& color, double opacity) {
  points around = upper;
  around.insert(around.end(), lower.rbegin(), lower.rend());
  body_ += "<polygon class='band' fill='" + color + "' fill-opacity='" + fmt("%g", opacity) +
           "' stroke='none' points='" + pixels(around) + "'/>";
  return *this;
}

svg_chart& svg_chart::dot(double x, double y, double r, const std::string& color, const std::string& attrs,
                          const std::string& title) {
  body_ += "<circle cx='" + px1(px(x)) + "' cy='" + px1(py(y)) + "' r='" + fmt("%g", r) + "' fill='" + color + "'" +
           (attrs.empty() ? "" : " " + attrs) +
           (title.empty() ? "/>" : "><title>" + escape_html(title) + "</title></circle>");
  return *this;
}

svg_chart& svg_chart::box(double x0, double y0, double x1, double y1, const std::string& color) {
  double left = std::min(px(x0), px(x1)), top = std::min(py(y0), py(y1));
  body_ += "<rect class='band' x='" + px1(left) + "' y='" + px1(top) + "' width='" +
           px1(std::max(1.0, std::abs(px(x1) - px(x0)))) + "' height='" + px1(std::max(1.0, std::abs(py(y1) - py(y0)))) +
           "' fill='" + color + "' fill-opacity='0.15' stroke='" + color + "' stroke-opacity='0.5'/>";
  return *this;
}

svg_chart& svg_chart::raw(const std::string& svg) {
  body_ += svg;
  return *this;
}

std::string svg_chart::str() const { return head_ + body_ + (clipped_ ? "</g>" : "") + "</svg>"; }

std::vector<double> nice_ticks(double lo, double hi, int count) {
  std::vector<double> out;
  if (!(hi > lo) || count < 1)
    return out;
  double raw = (hi - lo) / count, mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag * (raw / mag < 1.5 ? 1 : raw / mag < 3.5 ? 2 : raw / mag < 7.5 ? 5 : 10);
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step)
    out.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  for (double p = std::pow(10, std::floor(std::log10(lo))); p <= hi; p *= 10)
    for (double m : {1.0, 2.0, 5.0})
      if (p * m >= lo && p * m <= hi)
        out.push_back(p * m);
  return out;
}

const char* series_color(size_t i) {
  static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                 "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
  return colors[i % (sizeof colors / sizeof *colors)];
}

}  // namespace syncpoint::report
