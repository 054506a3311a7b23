// A coordinator_api that records what a protocol decides, for scripted event
// sequences: push(w) and lose(w) play the coordinator's part.
#pragma once

#include <syncpoint/protocol.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace syncpoint::testing {

struct recorder : coordinator_api {
  explicit recorder(int n)
    : live_(n, true), waiting_(n, true), clock_(n, 0) {}

  std::vector<bool> live_;
  std::vector<bool> waiting_;
  std::vector<uint64_t> clock_;
  std::vector<worker_id> released;  // since the last take()
  std::vector<bool> pulled;         // the pull flag of each release, same order
  int commits = 0;
  ps_mode mode = ps_mode::immediate;
  double time = 0;

  int workers() const override { return static_cast<int>(live_.size()); }
  bool live(worker_id w) const override { return live_[w]; }
  std::vector<worker_id> live_workers() const override {
    std::vector<worker_id> out;
    for (int i = 0; i < workers(); ++i)
      if (live_[i])
        out.push_back(i);
    return out;
  }
  uint64_t clock(worker_id w) const override { return clock_[w]; }
  double now() const override { return time; }
  bool waiting(worker_id w) const override { return live_[w] && waiting_[w]; }
  void release(worker_id w, bool pull) override {
    if (!waiting(w))
      return;
    waiting_[w] = false;
    scheduled.erase(w);
    released.push_back(w);
    pulled.push_back(pull);
    release_log.emplace_back(w, time);
  }
  void commit() override { ++commits; }
  int publishes = 0;
  bool local_step = false, overlap = false;
  void publish() override { ++publishes; }
  void set_worker_behavior(bool l, bool o) override {
    local_step = l;
    overlap = o;
  }
  void set_mode(ps_mode m) override { mode = m; }
  std::map<worker_id, local_work> work;  // the local work each worker was last given
  void set_local_work(worker_id w, const local_work& x) override { work[w] = x; }
  local_work local_work_of(worker_id w) const override {
    auto i = work.find(w);
    return i == work.end() ? local_work{} : i->second;
  }

  // Time: release_at and set_timer are kept until advance() reaches them.
  std::map<worker_id, std::pair<double, bool>> scheduled;  // w -> (t, pull)
  std::multimap<double, uint64_t> timers;                   // t -> tag
  std::vector<std::pair<worker_id, double>> release_log;   // every release with its time
  void release_at(worker_id w, double t, bool pull) override {
    if (!waiting(w))
      return;
    if (t <= time) {
      release(w, pull);
      return;
    }
    scheduled[w] = {t, pull};
  }
  void set_timer(double t, uint64_t tag) override { timers.emplace(t, tag); }

  std::vector<uint32_t> batches;
  uint32_t base_batch = 64;
  void set_batch(worker_id w, uint32_t b) override {
    batches.resize(static_cast<size_t>(workers()), base_batch);
    batches[static_cast<size_t>(w)] = b;
  }
  uint32_t batch(worker_id w) const override {
    return static_cast<size_t>(w) < batches.size() ? batches[static_cast<size_t>(w)] : base_batch;
  }
  /// The weight rule as the coordinator applies it: b_w / sum over live workers.
  double weight(worker_id w) const {
    double total = 0;
    for (auto v : live_workers())
      total += batch(v);
    return live(w) ? batch(w) / total : 0.0;
  }

  // The run: samples (each push counts its worker's batch), marks, momentum.
  uint64_t samples_ = 0, budget = 0;
  std::vector<std::pair<std::string, std::string>> marks;  // kind, note
  int evaluations = 0;
  std::vector<std::tuple<double, bool, uint32_t>> momentum;  // mu, clear, ramp
  double base_mu = 0.9;
  uint64_t samples() const override { return samples_; }
  uint64_t sample_budget() const override { return budget; }
  void mark(const std::string& k, const std::string& n, double) override { marks.emplace_back(k, n); }
  void evaluate() override { ++evaluations; }
  void set_momentum(double mu, bool clear, uint32_t ramp) override { momentum.emplace_back(mu, clear, ramp); }
  double base_momentum() const override { return base_mu; }

  /// Moves time to `t`, firing due releases and timers in time order.
  void advance(protocol& p, double t) {
    while (has_due(t)) {
      double next = t;
      for (auto& kv : scheduled)
        next = std::min(next, kv.second.first);
      if (!timers.empty())
        next = std::min(next, timers.begin()->first);
      time = next;
      for (auto it = scheduled.begin(); it != scheduled.end();) {
        auto [w, when] = *it;
        ++it;
        if (when.first <= time)
          release(w, when.second);  // erases w from `scheduled`
      }
      while (!timers.empty() && timers.begin()->first <= time) {
        auto tag = timers.begin()->second;
        timers.erase(timers.begin());
        p.on_timer(*this, tag);
      }
    }
    time = t;
  }
  bool has_due(double t) const {
    for (auto& kv : scheduled)
      if (kv.second.first <= t)
        return true;
    return !timers.empty() && timers.begin()->first <= t;
  }

  void start(protocol& p) { p.on_start(*this); }
  void push(protocol& p, worker_id w) {
    REQUIRE_MESSAGE(!waiting_[w], "worker " << w << " pushed while held");
    ++clock_[w];
    samples_ += batch(w);
    waiting_[w] = true;
    p.on_push(*this, w);
  }
  void lose(protocol& p, worker_id w) {
    live_[w] = false;
    waiting_[w] = false;
    scheduled.erase(w);
    p.on_lost(*this, w);
  }
  /// `w` joins: live, waiting, at the slowest live worker's clock.
  void join(protocol& p, worker_id w) {
    uint64_t slowest = UINT64_MAX;
    for (auto v : live_workers())
      slowest = std::min(slowest, clock_[v]);
    live_[w] = true;
    waiting_[w] = true;
    clock_[w] = slowest == UINT64_MAX ? 0 : slowest;
    p.on_joined(*this, w);
  }
  std::vector<worker_id> take() {
    auto out = released;
    released.clear();
    pulled.clear();
    return out;
  }
  /// Push from `w` at time `t` (due releases and timers before it fire first).
  void push_at(protocol& p, worker_id w, double t) {
    advance(p, t);
    push(p, w);
  }
};

}  // namespace syncpoint::testing
