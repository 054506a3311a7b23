#include "cli/compare.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace syncpoint::cli {

std::string fmt(const char* format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

namespace {

std::string escape_html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\'': out += "&#39;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"};

}  // namespace

std::string comparison_table(const std::vector<compared_run>& runs, uint64_t equal_samples) {
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
    double wait = 0;
    for (auto& w : s.per_worker)
      wait += w.wait_s;
    std::string stopped = r.stopped_by.empty() ? "" : r.stopped_by + (r.stopped_by == "failed" ? "" : " " + fmt("%.2f", s.run_time_s));
    row({r.label, fmt("%g", r.lr), s.time_to_target_s >= 0 ? fmt("%.2f", s.time_to_target_s) : "not reached",
         stopped, fmt("%.4f", s.final_accuracy), r.acc_equal >= 0 ? fmt("%.4f", r.acc_equal) : "-",
         fmt("%.2f", s.run_time_s), fmt("%.1f", s.samples_per_s), fmt("%.3f", s.mean_compute_ratio),
         fmt("%.1f", wait), fmt("%.2f", s.staleness_mean), std::to_string(s.barriers)},
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
  md << "# Protocol comparison\n\n"
     << "model " << first.model << ", " << first.workers << " workers, " << first.clock
     << " clock, seed " << first.seed << ", straggler '" << first.straggler << "'";
  if (first.target_accuracy > 0)
    md << ", target accuracy " << first.target_accuracy;
  md << "\n\n";
  if (!rule.empty())
    md << rule << "\n\n";
  if (!grid.empty())
    md << "Every protocol at every learning rate:\n\n" << comparison_table(grid, equal_samples)
       << "\nEach protocol at its best learning rate (soonest to the target, else most accurate):\n\n";
  md << comparison_table(runs, equal_samples) << "\n"
     << "stopped at = what ended the run (target or the time cap) and when; final acc = accuracy when"
        " it stopped (at the cap for runs the cap stopped); compute = mean compute ratio (compute time /"
        " run time); wait s = waiting summed over workers; stale = mean staleness of applied gradients.\n";

  // Accuracy vs time, one polyline per protocol.
  double t_max = 0, a_min = 1, a_max = 0;
  for (auto& r : runs)
    for (auto& e : r.summary.evals) {
      t_max = std::max(t_max, e.t_s);
      a_min = std::min(a_min, e.accuracy);
      a_max = std::max(a_max, e.accuracy);
    }
  if (t_max <= 0)
    t_max = 1;
  if (first.target_accuracy > 0) {  // keep the target line in view
    a_min = std::min(a_min, first.target_accuracy);
    a_max = std::max(a_max, first.target_accuracy);
  }
  a_min = std::max(0.0, a_min - 0.02);
  a_max = std::min(1.0, a_max + 0.02);
  if (a_max <= a_min)
    a_max = a_min + 0.1;
  const double W = 640, H = 360, L = 60, B = 40, T = 20, R = 160;
  auto x = [&](double t) { return L + (W - L - R) * t / t_max; };
  auto y = [&](double a) { return H - B - (H - B - T) * (a - a_min) / (a_max - a_min); };
  std::ofstream html(dir + "/report.html");
  html << "<!doctype html><html><head><meta charset='utf-8'><title>syncpoint comparison</title>"
       << "<style>body{font-family:sans-serif;margin:2em}pre{background:#f6f6f6;padding:1em}</style>"
       << "</head><body><h1>Protocol comparison</h1><p>model " << first.model << ", "
       << first.workers << " workers, " << first.clock << " clock, straggler '" << escape_html(first.straggler)
       << "'</p>" << (rule.empty() ? "" : "<p>" + escape_html(rule) + "</p>") << "<pre>"
       << escape_html(comparison_table(runs, equal_samples)) << "</pre><h2>Test accuracy vs time (s)</h2>"
       << "<svg width='" << W << "' height='" << H << "' xmlns='http://www.w3.org/2000/svg'>"
       << "<rect x='" << L << "' y='" << T << "' width='" << W - L - R << "' height='" << H - B - T
       << "' fill='none' stroke='#888'/>";
  for (int i = 0; i <= 4; ++i) {
    double a = a_min + (a_max - a_min) * i / 4, t = t_max * i / 4;
    html << "<text x='" << L - 5 << "' y='" << y(a) + 4 << "' font-size='11' text-anchor='end'>"
         << fmt("%.3f", a) << "</text>"
         << "<text x='" << x(t) << "' y='" << H - B + 15 << "' font-size='11' text-anchor='middle'>"
         << fmt("%.1f", t) << "</text>";
  }
  if (first.target_accuracy > 0)
    html << "<line x1='" << L << "' x2='" << W - R << "' y1='" << y(first.target_accuracy) << "' y2='"
         << y(first.target_accuracy) << "' stroke='#888' stroke-dasharray='4 3'/><text x='" << W - R + 10
         << "' y='" << y(first.target_accuracy) + 4 << "' fill='#888' font-size='12'>target "
         << fmt("%.3f", first.target_accuracy) << "</text>";
  for (size_t i = 0; i < runs.size(); ++i) {
    const char* color = palette[i % (sizeof palette / sizeof *palette)];
    html << "<polyline fill='none' stroke='" << color << "' stroke-width='2' points='";
    for (auto& e : runs[i].summary.evals)
      html << x(e.t_s) << "," << y(e.accuracy) << " ";
    html << "'/><text x='" << W - R + 10 << "' y='" << T + 15 + 18 * i << "' fill='" << color
         << "' font-size='13'>" << escape_html(runs[i].label) << "</text>";
  }
  html << "</svg></body></html>\n";
}

void print_summary(const run_summary& s) {
  std::printf("protocol %s: %d workers, %s clock, run time %.2f s, %llu samples (%.1f/s)\n",
              s.protocol.c_str(), s.workers, s.clock.c_str(), s.run_time_s,
              static_cast<unsigned long long>(s.samples), s.samples_per_s);
  std::printf("  final accuracy %.4f", s.final_accuracy);
  if (s.target_accuracy > 0) {
    if (s.time_to_target_s >= 0)
      std::printf(", reached %.3f at %.2f s", s.target_accuracy, s.time_to_target_s);
    else
      std::printf(", target %.3f not reached", s.target_accuracy);
  }
  std::printf("\n  mean compute ratio %.3f, staleness mean %.2f max %llu, barriers %llu\n",
              s.mean_compute_ratio, s.staleness_mean, static_cast<unsigned long long>(s.staleness_max),
              static_cast<unsigned long long>(s.barriers));
  for (auto& ph : s.phases)
    std::printf("  phase %s (%s): %llu samples in %.2f s from %.2f s, accuracy at its end %.4f\n",
                ph.protocol.c_str(), ph.reason.c_str(), static_cast<unsigned long long>(ph.samples), ph.time_s,
                ph.start_s, ph.accuracy_at_end);
  for (auto& w : s.per_worker)
    std::printf("  worker %d: %llu iterations, compute %.2f s, comm %.2f s, wait %.2f s, ratio %.3f\n",
                w.id, static_cast<unsigned long long>(w.iterations), w.compute_s, w.comm_s, w.wait_s,
                w.compute_ratio);
}

}  // namespace syncpoint::cli
