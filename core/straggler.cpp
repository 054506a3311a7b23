#include "core/straggler.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace syncpoint {

namespace {

// Bounds on one item and on what a worker's overlapping items add up to: a plan
// may stack items, but never into a compute time of zero, infinity or years.
constexpr double kMinFactor = 1e-6;
constexpr double kMaxFactor = 1e6;
constexpr double kMaxDelay = 1e6;

// Parses all of `s` as a finite number or throws with `what` as context.
double number(const std::string& s, const std::string& item, const char* what) {
  if (s.empty())
    throw straggler_error("straggler item '" + item + "': missing " + what);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v))
    throw straggler_error("straggler item '" + item + "': " + what + " '" + s +
                          "' is not a number");
  return v;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

straggler_item parse_item(const std::string& item) {
  straggler_item out;
  auto colon = item.find(':');
  if (colon == std::string::npos)
    throw straggler_error("straggler item '" + item +
                          "': expected W:xF, W:xF@T1-T2 or W:+Dms");
  auto w = item.substr(0, colon);
  if (w.empty() || w.size() > 6 || w.find_first_not_of("0123456789") != std::string::npos)
    throw straggler_error("straggler item '" + item + "': worker '" + w +
                          "' is not a worker index");
  out.worker = std::atoi(w.c_str());
  auto rest = item.substr(colon + 1);
  auto at = rest.find('@');
  auto effect = rest.substr(0, at);
  if (at != std::string::npos) {
    auto window = rest.substr(at + 1);
    auto dash = window.find('-');
    if (dash == std::string::npos)
      throw straggler_error("straggler item '" + item + "': window '" + window +
                            "' must be T1-T2 (seconds)");
    out.from_s = number(window.substr(0, dash), item, "window start");
    out.to_s = number(window.substr(dash + 1), item, "window end");
    if (out.from_s < 0 || out.to_s <= out.from_s)
      throw straggler_error("straggler item '" + item + "': window '" + window +
                            "' must satisfy 0 <= T1 < T2");
  }
  if (effect.size() >= 2 && effect[0] == 'x') {
    out.factor = number(effect.substr(1), item, "factor");
    if (!(out.factor >= kMinFactor && out.factor <= kMaxFactor))
      throw straggler_error("straggler item '" + item + "': factor must be in [1e-6, 1e6]");
  } else if (effect.size() >= 2 && effect[0] == '+') {
    auto body = effect.substr(1);
    double scale = 1.0;
    auto ends_with = [&](const char* suffix) {
      std::string s(suffix);
      return body.size() > s.size() && body.compare(body.size() - s.size(), s.size(), s) == 0;
    };
    if (ends_with("ms")) {
      scale = 1e-3;
      body.resize(body.size() - 2);
    } else if (ends_with("us")) {
      scale = 1e-6;
      body.resize(body.size() - 2);
    } else if (ends_with("s")) {
      body.resize(body.size() - 1);
    } else {
      throw straggler_error("straggler item '" + item + "': delay '" + effect +
                            "' needs a unit (ms, us or s)");
    }
    out.extra_s = number(body, item, "delay") * scale;
    if (out.extra_s < 0 || out.extra_s > kMaxDelay)
      throw straggler_error("straggler item '" + item + "': delay must be in [0, 1e6] s");
  } else {
    throw straggler_error("straggler item '" + item + "': effect '" + effect +
                          "' must be xF (slowdown) or +D<unit> (extra delay)");
  }
  return out;
}

bool active(const straggler_item& s, int w, double t) {
  return s.worker == w && t >= s.from_s && (s.to_s < 0 || t < s.to_s);
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Every worker's combined factor and delay stay within the bounds of one item.
// Which items are active changes only at a window's start or end, so checking
// there checks every time.
void check_overlaps(const straggler_plan& plan) {
  const auto& items = plan.items();
  for (auto& item : items) {
    for (double t : {item.from_s, item.to_s}) {
      if (t < 0)
        continue;
      double f = plan.factor(item.worker, t);
      if (!(f >= kMinFactor && f <= kMaxFactor))
        throw straggler_error("straggler spec: worker " + std::to_string(item.worker) +
                              "'s factors multiply to " + number_text(f) + " at t=" +
                              number_text(t) + " s; the product must be in [1e-6, 1e6]");
      double d = plan.extra_s(item.worker, t);
      if (!(d <= kMaxDelay))
        throw straggler_error("straggler spec: worker " + std::to_string(item.worker) +
                              "'s delays add up to " + number_text(d) + " s at t=" +
                              number_text(t) + " s; the sum must be at most 1e6 s");
    }
  }
}

}  // namespace

straggler_plan straggler_plan::parse(const std::string& spec) {
  straggler_plan plan;
  size_t start = 0;
  while (start <= spec.size()) {
    auto end = spec.find(';', start);
    auto item = trim(spec.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (!item.empty())
      plan.items_.push_back(parse_item(item));
    else if (end != std::string::npos || start != spec.size())
      if (!trim(spec).empty())
        throw straggler_error("straggler spec '" + spec + "': empty item");
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  check_overlaps(plan);
  return plan;
}

void straggler_plan::check_workers(int n) const {
  for (auto& s : items_)
    if (s.worker >= n)
      throw straggler_error("straggler item for worker " + std::to_string(s.worker) +
                            ": only workers 0.." + std::to_string(n - 1) + " exist");
}

double straggler_plan::factor(int w, double t) const {
  double f = 1.0;
  for (auto& s : items_)
    if (active(s, w, t))
      f *= s.factor;
  return f;
}

double straggler_plan::extra_s(int w, double t) const {
  double d = 0.0;
  for (auto& s : items_)
    if (active(s, w, t))
      d += s.extra_s;
  return d;
}

}  // namespace syncpoint
