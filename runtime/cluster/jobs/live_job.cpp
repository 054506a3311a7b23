#include "runtime/cluster/jobs/live_job.hpp"

#include <algorithm>
#include <cmath>

namespace syncpoint::cluster {

// -- histogram -----------------------------------------------------------------

histogram::histogram(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void histogram::add(double x) {
  auto i = static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), x) - bounds.begin());
  ++counts[i];
  sum += x;
  ++count;
}

double histogram::quantile(double q) const {
  if (count == 0)
    return 0;
  double rank = q * static_cast<double>(count);
  uint64_t below = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (static_cast<double>(below + counts[i]) >= rank && counts[i] > 0) {
      if (i == bounds.size())  // +Inf: the highest finite bound, as Prometheus does
        return bounds.empty() ? 0 : bounds.back();
      double lo = i == 0 ? std::min(0.0, bounds[0]) : bounds[i - 1];
      return lo + (bounds[i] - lo) * (rank - static_cast<double>(below)) / static_cast<double>(counts[i]);
    }
    below += counts[i];
  }
  return bounds.empty() ? 0 : bounds.back();
}

const std::vector<double>& latency_buckets() {
  static const std::vector<double> b{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  return b;
}

const std::vector<double>& staleness_buckets() {
  static const std::vector<double> b{0, 1, 2, 4, 8, 16, 32, 64, 128};
  return b;
}

// -- thinned_series ------------------------------------------------------------

void thinned_series::add(double t_s, double value) {
  auto& c = cells_[static_cast<int64_t>(std::floor(t_s / step_s_))];
  c.t_sum += t_s;
  c.v_sum += value;
  ++c.n;
  if (cells_.size() <= cap_)
    return;
  step_s_ *= 2;  // full: merge neighbours, so the series keeps the whole run at half the detail
  std::map<int64_t, cell> merged;
  for (auto& [k, v] : cells_) {
    auto& m = merged[static_cast<int64_t>(std::floor(static_cast<double>(k) / 2))];
    m.t_sum += v.t_sum;
    m.v_sum += v.v_sum;
    m.n += v.n;
  }
  cells_ = std::move(merged);
}

std::vector<point> thinned_series::points() const {
  std::vector<point> out;
  out.reserve(cells_.size());
  for (auto& [k, c] : cells_)
    out.push_back({c.t_sum / static_cast<double>(c.n), c.v_sum / static_cast<double>(c.n)});
  return out;
}

// -- live_job ------------------------------------------------------------------

live_job::live_job(job_facts facts) {
  set_facts(std::move(facts));
  live_ = facts_.workers;  // until the coordinator's counts say otherwise
}

void live_job::set_facts(job_facts facts) {
  facts_ = std::move(facts);
  auto n = static_cast<size_t>(std::max(0, facts_.workers));
  if (workers_.size() < n) {
    workers_.resize(n);
    timeline_.rows.resize(n, std::deque<std::array<float, time_share::categories>>(timeline_.barriers.size(),
                                                                                         {0, 0, 0}));
  }
  if (shard_versions_.size() < facts_.shards.size())
    shard_versions_.resize(facts_.shards.size(), 0);
  if (lr_points_.empty())
    lr_ = facts_.lr;
}

worker_live* live_job::worker(int32_t id) {
  return id >= 0 && static_cast<size_t>(id) < workers_.size() ? &workers_[static_cast<size_t>(id)] : nullptr;
}

// Moves the window's end to `bin`: older bins fall out at the front.
void live_job::advance_to(int64_t bin) {
  auto& tl = timeline_;
  if (bin <= tl.last_bin)
    return;
  auto add = static_cast<size_t>(std::min<int64_t>(bin - tl.last_bin, timeline_window::bins));
  for (auto& row : tl.rows)
    row.insert(row.end(), add, {0, 0, 0});
  tl.barriers.insert(tl.barriers.end(), add, 0);
  tl.last_bin = bin;
  auto keep = static_cast<size_t>(timeline_window::bins);
  for (auto& row : tl.rows)
    while (row.size() > keep)
      row.pop_front();
  while (tl.barriers.size() > keep)
    tl.barriers.pop_front();
}

// Adds [t0, t1) of `worker`'s time in category `c` to the bins it covers in the window.
void live_job::spend(int32_t worker, nanos t0, nanos t1, time_share::category c) {
  if (worker < 0 || static_cast<size_t>(worker) >= timeline_.rows.size() || t1 <= t0)
    return;
  double a = to_s(t0), b = to_s(t1), w = timeline_window::bin_s;
  advance_to(static_cast<int64_t>(std::floor(b / w)));
  auto& row = timeline_.rows[static_cast<size_t>(worker)];
  int64_t first = timeline_.last_bin - static_cast<int64_t>(row.size()) + 1;
  for (int64_t k = std::max(first, static_cast<int64_t>(std::floor(a / w))); k <= timeline_.last_bin; ++k) {
    double lo = std::max(a, static_cast<double>(k) * w), hi = std::min(b, static_cast<double>(k + 1) * w);
    if (hi <= lo)
      break;
    row[static_cast<size_t>(k - first)][c] += static_cast<float>(hi - lo);
  }
}

void live_job::add(const trace_event& ev) {
  now_ = std::max(now_, ev.t1);
  auto* w = worker(ev.worker);
  const auto& k = ev.kind;
  if (auto c = time_share::of(k))
    spend(ev.worker, ev.t0, ev.t1, *c);
  if (k == "compute") {
    if (w && std::isfinite(ev.value)) {
      w->loss = ev.value;
      loss_.add(to_s(ev.t1), ev.value);
    }
  } else if (k == "push" || k == "pull") {
    if (w) {
      bool push = k == "push";
      ++(push ? w->pushes : w->pulls);
      (push ? w->push_latency : w->pull_latency).add(to_s(ev.t1 - ev.t0));
    }
  } else if (k == "apply") {
    staleness_.add(ev.value);
    staleness_max_ = std::max(staleness_max_, ev.value);
    if (w)
      w->staleness.add(ev.value);
  } else if (k == "rejected") {
    if (w)
      ++w->rejected;
  } else if (k == "lr") {
    lr_ = ev.value;
    lr_points_.push_back({to_s(ev.t0), ev.value});
  } else if (k == "barrier") {
    ++barriers_;
    auto bin = static_cast<int64_t>(std::floor(to_s(ev.t0) / timeline_window::bin_s));
    advance_to(bin);
    auto first = timeline_.last_bin - static_cast<int64_t>(timeline_.barriers.size()) + 1;
    if (bin >= first)
      ++timeline_.barriers[static_cast<size_t>(bin - first)];
  } else if ((k == "eval" || k == "final_eval") && ev.value >= 0) {  // (< 0: the loop measures no accuracy)
    accuracy_ = ev.value;
    accuracy_series_.push_back({to_s(ev.t0), ev.value});
  } else if (k == "metric" && std::isfinite(ev.value)) {
    if (ev.worker < 0)
      measures_[ev.note].push_back({to_s(ev.t0), ev.value});
    else
      reported_[ev.note] = ev.value;
  } else if (k == "phase") {
    auto change = phase_of(ev);
    phase_ = change.to;
    phases_.push_back(std::move(change));
  } else if (k == "end") {
    samples_ = std::max(samples_, ev.iter);
  }
}

void live_job::set_counts(uint64_t samples, const std::vector<uint64_t>& per_worker, int32_t live, nanos now) {
  samples_ = samples;
  live_ = live;
  for (size_t i = 0; i < per_worker.size() && i < workers_.size(); ++i)
    workers_[i].samples = per_worker[i];
  now_ = std::max(now_, now);
  advance_to(static_cast<int64_t>(std::floor(to_s(now) / timeline_window::bin_s)));
  if (!recent_samples_.empty() && now > recent_samples_.back().first) {
    auto& [t, n] = recent_samples_.back();
    rate_.add(to_s(now), static_cast<double>(samples - std::min(samples, n)) / to_s(now - t));
  }
  recent_samples_.emplace_back(now, samples);
  while (recent_samples_.size() > 2 && recent_samples_.front().first < now - nanos{10'000'000'000})
    recent_samples_.pop_front();
}

void live_job::set_shard_version(size_t shard, uint64_t version) {
  if (shard >= shard_versions_.size())
    shard_versions_.resize(shard + 1, 0);
  shard_versions_[shard] = std::max(shard_versions_[shard], version);
}

void live_job::set_tables(size_t shard, std::vector<table_counts> tables) {
  if (shard >= tables_.size())
    tables_.resize(shard + 1);
  tables_[shard] = std::move(tables);
}

double live_job::samples_per_s() const {
  if (recent_samples_.size() < 2)
    return 0;
  auto& [t0, n0] = recent_samples_.front();
  auto& [t1, n1] = recent_samples_.back();
  return t1 > t0 ? static_cast<double>(n1 - std::min(n1, n0)) / to_s(t1 - t0) : 0;
}

std::vector<point> live_job::lr_series() const {
  auto out = lr_points_;
  if (!out.empty())
    out.push_back({run_time_s(), out.back().value});  // it holds until now
  return out;
}

}  // namespace syncpoint::cluster
