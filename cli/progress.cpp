#include "cli/progress.hpp"

#include "runtime/report/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace syncpoint::cli {

std::string duration(double s) {
  if (!(s >= 0) || s > 99 * 3600)
    return "--";
  auto t = static_cast<long>(std::lround(s));
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

progress_display::progress_display(bool enabled) : progress_display(enabled, isatty(fileno(stderr)) != 0) {}

progress_display::progress_display(bool enabled, bool as_bar) : enabled_(enabled), bar_(as_bar) {}

progress_display::~progress_display() {
  end();
}

std::string progress_display::bar_line(const std::string& prefix, double fraction, double accuracy,
                                       double elapsed_s, bool finished, uint64_t samples) {
  constexpr int width = 28;
  fraction = std::clamp(fraction, 0.0, 1.0);
  auto filled = static_cast<int>(std::lround(fraction * width));
  std::string line = prefix + " [" + std::string(static_cast<size_t>(filled), '#') +
                     std::string(static_cast<size_t>(width - filled), '-') + "] " + fmt("%3.0f", 100 * fraction) + "%";
  if (accuracy >= 0)
    line += "  acc " + fmt("%.4f", accuracy);
  if (finished)
    line += "  took " + duration(elapsed_s);
  else if (fraction >= 0.01)
    line += "  " + duration(elapsed_s * (1 - fraction) / fraction) + " left";
  else if (samples > 0)
    line += "  " + std::to_string(samples) + " samples, no budget to estimate the time left";
  else
    line += "  estimating time left";
  return line;
}

void progress_display::begin(const std::string& label, int index, int total) {
  end();
  if (!enabled_)
    return;
  prefix_ = (index > 0 && total > 1 ? "[" + std::to_string(index) + "/" + std::to_string(total) + "] " : "") + label;
  if (prefix_.size() < 24)
    prefix_.resize(24, ' ');
  fraction_ = 0;
  accuracy_ = -1;
  samples_ = 0;
  start_ = std::chrono::steady_clock::now();
  last_draw_ = {};
  open_ = true;
  if (bar_)
    draw(false);
  else
    std::fprintf(stderr, "%s\n", (index > 0 && total > 1 ? "run " + std::to_string(index) + "/" +
                                                               std::to_string(total) + ": " + label
                                                         : label).c_str());
}

void progress_display::update(const progress_report& r) {
  if (!enabled_)
    return;
  if (!bar_) {
    if (!r.line.empty())  // empty: a tick only a bar shows
      std::fprintf(stderr, "%s\n", r.line.c_str());
    return;
  }
  if (!open_)
    begin("run");
  if (r.event && !r.line.empty())  // above the bar, which is redrawn below it
    std::fprintf(stderr, "\r\033[K%s\n", r.line.c_str());
  fraction_ = std::max(fraction_, r.fraction);
  samples_ = r.samples;
  if (r.accuracy >= 0)
    accuracy_ = r.accuracy;
  auto now = std::chrono::steady_clock::now();
  if (r.event || now - last_draw_ >= std::chrono::milliseconds(100))
    draw(false);
}

void progress_display::end() {
  if (!open_)
    return;
  open_ = false;
  if (bar_) {
    draw(true);
    std::fputc('\n', stderr);
  }
}

progress_fn progress_display::callback() {
  if (!enabled_)
    return {};
  return [this](const progress_report& r) { update(r); };
}

void progress_display::draw(bool finished) {
  last_draw_ = std::chrono::steady_clock::now();
  double elapsed = std::chrono::duration<double>(last_draw_ - start_).count();
  auto line = bar_line(prefix_, fraction_, accuracy_, elapsed, finished, samples_);
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
}

namespace {

// "about 0:33 left" from the pace so far ("" when nothing is left, "--" before any cell ended).
std::string time_left(const sweep_progress& p, double elapsed_s) {
  size_t ended = p.done + p.failed, left = p.total - p.skipped - ended;
  if (left == 0)
    return "";
  return ended == 0 ? "estimating time left"
                    : "about " + duration(elapsed_s / static_cast<double>(ended) * static_cast<double>(left)) + " left";
}

}  // namespace

sweep_display::sweep_display(int jobs, const std::string& name, const std::string& unit)
  : sweep_display(jobs, isatty(fileno(stderr)) != 0, name, unit) {}

sweep_display::sweep_display(int jobs, bool as_bar, const std::string& name, const std::string& unit)
  : jobs_(jobs), name_(name), unit_(unit), bar_(as_bar) {}

std::string sweep_display::bar_line(const sweep_progress& p, double elapsed_s, const std::string& name) {
  constexpr int width = 28;
  size_t finished = p.done + p.failed + p.skipped;
  double fraction = p.total ? static_cast<double>(finished) / static_cast<double>(p.total) : 1;
  auto filled = static_cast<int>(std::lround(fraction * width));
  std::string line = name + " [" + std::string(static_cast<size_t>(filled), '#') +
                     std::string(static_cast<size_t>(width - filled), '-') + "] " + std::to_string(p.done + p.skipped) +
                     "/" + std::to_string(p.total) + " done, " + std::to_string(p.running) + " running, " +
                     std::to_string(p.failed) + " failed";
  auto left = time_left(p, elapsed_s);
  return line + (left.empty() ? "  took " + duration(elapsed_s) : ", " + left);
}

void sweep_display::event(const sweep_progress& p, const cell_outcome* ended) {
  auto now = std::chrono::steady_clock::now();
  if (!started_) {
    started_ = true;
    start_ = now;
    auto at_once = jobs_ > 0 ? std::to_string(jobs_) + " at once" : std::string("one per free slot of the cluster");
    std::fprintf(stderr, "%s: %zu %s%s, %s\n", name_.c_str(), p.total, unit_.c_str(),
                 p.skipped ? (", " + std::to_string(p.skipped) + " already finished").c_str() : "", at_once.c_str());
  }
  last_ = p;
  double elapsed = std::chrono::duration<double>(now - start_).count();
  if (!bar_) {
    if (ended)
      std::fprintf(stderr, "%s: [%zu/%zu] %s %s (%.1f s); %zu running, %zu failed%s\n", name_.c_str(),
                   p.done + p.failed + p.skipped, p.total, ended->cell->name.c_str(),
                   ended->ok ? "done" : ("FAILED: " + ended->error).c_str(), ended->seconds, p.running, p.failed,
                   time_left(p, elapsed).empty() ? "" : (", " + time_left(p, elapsed)).c_str());
    return;
  }
  if (ended && !ended->ok)  // above the bar, which is redrawn below it
    std::fprintf(stderr, "\r\033[K%s: %s FAILED: %s\n", name_.c_str(), ended->cell->name.c_str(), ended->error.c_str());
  std::fprintf(stderr, "\r\033[K%s", bar_line(p, elapsed, name_).c_str());
  std::fflush(stderr);
  open_ = true;
}

void sweep_display::note(const std::string& line) {
  std::fprintf(stderr, "%s%s: %s\n", open_ ? "\r\033[K" : "", name_.c_str(), line.c_str());
  if (open_) {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "%s", bar_line(last_, elapsed, name_).c_str());
  }
  std::fflush(stderr);
}

void sweep_display::end() {
  if (!open_)
    return;
  open_ = false;
  std::fputc('\n', stderr);
}

}  // namespace syncpoint::cli
