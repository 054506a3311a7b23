#include "core/optimizer.hpp"

#include "core/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace syncpoint {

optimizer_kind parse_optimizer(const std::string& name) {
  if (name == "sgd")
    return optimizer_kind::sgd;
  if (name == "nesterov")
    return optimizer_kind::nesterov;
  if (name == "adam")
    return optimizer_kind::adam;
  if (name == "adamw")
    return optimizer_kind::adamw;
  throw std::invalid_argument("--optimizer '" + name + "' is not one (sgd, nesterov, adam or adamw)");
}

std::string to_string(optimizer_kind k) {
  switch (k) {
    case optimizer_kind::sgd: return "sgd";
    case optimizer_kind::nesterov: return "nesterov";
    case optimizer_kind::adam: return "adam";
    case optimizer_kind::adamw: return "adamw";
  }
  return "?";
}

std::string to_string(lr_shape s) {
  switch (s) {
    case lr_shape::constant: return "constant";
    case lr_shape::step: return "step";
    case lr_shape::cosine: return "cosine";
  }
  return "?";
}

namespace {
// Every number of a schedule is finite (make_lr_schedule checks): 17 digits, exact.
std::string exact_text(double x) {
  return json::num(x, 17);
}
}  // namespace

std::string describe(const lr_schedule& s) {
  std::string out = to_string(s.shape) + " " + exact_text(s.base);
  if (s.shape == lr_shape::step) {
    out += " x" + exact_text(s.gamma) + " at";
    for (size_t i = 0; i < s.milestones.size(); ++i)
      out += (i == 0 ? " " : ",") + std::to_string(s.milestones[i]);
    out += " samples";
  } else if (s.shape == lr_shape::cosine) {
    out += " to " + exact_text(s.min_lr) + " at " + std::to_string(s.horizon) + " samples";
  }
  if (s.warmup > 0)
    out += ", warmup " + std::to_string(s.warmup) + " from " + exact_text(s.start_factor);
  return out;
}

std::string describe_options(const job_config& job) {
  std::string out = job.lr_schedule;
  if (job.lr_schedule == "step") {
    out += " x" + json::num(job.lr_gamma) + " at ";
    for (size_t i = 0; i < job.lr_milestones.size(); ++i)
      out += (i == 0 ? "" : ",") + json::num(job.lr_milestones[i]);
    out += " epochs";
  } else if (job.lr_schedule == "cosine") {
    out += " to " + json::num(job.lr_min) + (job.lr_epochs > 0 ? " over " + json::num(job.lr_epochs) + " epochs" : "");
  }
  if (!job.warmup.empty())
    out += ", warmup " + job.warmup;
  if (job.lr_scaling != "none")
    out += ", lr scaling " + job.lr_scaling;
  return out;
}

double lr_schedule::at(uint64_t samples) const {
  double rate = base;
  if (shape == lr_shape::step) {
    for (auto m : milestones)
      if (samples >= m)
        rate *= gamma;
  } else if (shape == lr_shape::cosine && horizon > warmup) {
    double done = std::min(1.0, static_cast<double>(samples > warmup ? samples - warmup : 0) /
                                  static_cast<double>(horizon - warmup));
    rate = min_lr + (base - min_lr) * 0.5 * (1 + std::cos(M_PI * done));
  }
  if (samples < warmup) {
    double into = static_cast<double>(samples) / static_cast<double>(warmup);
    rate *= start_factor + (1 - start_factor) * into;
  }
  return rate;
}

lr_schedule make_lr_schedule(double lr, const std::string& shape, const std::vector<double>& milestones,
                             double gamma, const std::string& warmup, uint64_t horizon_samples,
                             uint64_t epoch_samples, double start_factor, double min_lr) {
  lr_schedule s;
  s.base = lr;
  s.gamma = gamma;
  s.start_factor = start_factor;
  s.min_lr = min_lr;
  s.horizon = horizon_samples;
  auto whole = [&](const std::string& what) {
    if (horizon_samples == 0)
      throw std::invalid_argument(what + " needs the run's length: give --epochs (or --lr-epochs)");
  };
  if (shape == "constant") {
    s.shape = lr_shape::constant;
  } else if (shape == "step") {
    s.shape = lr_shape::step;
    if (milestones.empty())
      throw std::invalid_argument("--lr-schedule step needs --lr-milestones (epochs, e.g. 30,60)");
    double last = 0;
    for (auto m : milestones) {
      if (!std::isfinite(m) || m <= last)
        throw std::invalid_argument("--lr-milestones must be positive epochs in ascending order, not " +
                                    std::to_string(m) + " after " + std::to_string(last));
      last = m;
      s.milestones.push_back(static_cast<uint64_t>(std::llround(m * static_cast<double>(epoch_samples))));
    }
  } else if (shape == "cosine") {
    s.shape = lr_shape::cosine;
    whole("--lr-schedule cosine");
  } else {
    throw std::invalid_argument("--lr-schedule '" + shape + "' is not one (constant, step or cosine)");
  }
  if (!milestones.empty() && s.shape != lr_shape::step)
    throw std::invalid_argument("--lr-milestones goes with --lr-schedule step");
  if (!std::isfinite(gamma) || gamma <= 0 || gamma > 1)
    throw std::invalid_argument("--lr-gamma must be in (0, 1], not " + std::to_string(gamma));
  if (!std::isfinite(min_lr) || min_lr < 0 || min_lr > lr)
    throw std::invalid_argument("--lr-min must be from 0 to --lr");
  if (!warmup.empty()) {
    char* end = nullptr;
    double w = std::strtod(warmup.c_str(), &end);
    if (end == warmup.c_str() || *end != '\0' || !std::isfinite(w) || w <= 0)
      throw std::invalid_argument("--warmup '" + warmup +
                                  "' is not a share of the run below 1 (e.g. 0.05) or a number of samples (e.g. 3000)");
    if (w < 1) {
      whole("--warmup as a share of the run");
      s.warmup = static_cast<uint64_t>(std::llround(w * static_cast<double>(horizon_samples)));
    } else {
      if (w != std::floor(w))
        throw std::invalid_argument("--warmup '" + warmup + "': a number of samples is a whole number");
      s.warmup = static_cast<uint64_t>(w);
    }
    if (s.shape == lr_shape::cosine && s.warmup >= s.horizon)
      throw std::invalid_argument("--warmup is as long as the run: the cosine would have nothing left");
  }
  return s;
}

}  // namespace syncpoint
