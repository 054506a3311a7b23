// A coordinator that releases at once and counts, to time a protocol's own
// work per push (bench_sync_switch, bench_fidelity).
#pragma once

#include <syncpoint/protocol.hpp>

#include <chrono>
#include <vector>

namespace syncpoint::bench {

struct null_coordinator : coordinator_api {
  explicit null_coordinator(int n) : waiting_(static_cast<size_t>(n), true), clock_(static_cast<size_t>(n), 0) {}
  std::vector<bool> waiting_;
  std::vector<uint64_t> clock_;
  double time = 0;
  uint64_t samples_ = 0;
  int workers() const override { return static_cast<int>(waiting_.size()); }
  bool live(worker_id) const override { return true; }
  std::vector<worker_id> live_workers() const override {
    std::vector<worker_id> out;
    for (int i = 0; i < workers(); ++i)
      out.push_back(i);
    return out;
  }
  uint64_t clock(worker_id w) const override { return clock_[static_cast<size_t>(w)]; }
  double now() const override { return time; }
  bool waiting(worker_id w) const override { return waiting_[static_cast<size_t>(w)]; }
  void release(worker_id w, bool) override { waiting_[static_cast<size_t>(w)] = false; }
  void commit() override {}
  void set_mode(ps_mode) override {}
  void release_at(worker_id w, double, bool p) override { release(w, p); }
  void set_timer(double, uint64_t) override {}
  void set_batch(worker_id, uint32_t) override {}
  uint32_t batch(worker_id) const override { return 64; }
  uint64_t samples() const override { return samples_; }
  uint64_t sample_budget() const override { return uint64_t{1} << 62; }
  void push(protocol& p, worker_id w) {
    ++clock_[static_cast<size_t>(w)];
    waiting_[static_cast<size_t>(w)] = true;
    samples_ += 64;
    p.on_push(*this, w);
  }
};

// Nanoseconds per push of `p` with n workers pushing in turn, 1 ms apart.
inline double ns_per_push(protocol& p, int n, int pushes) {
  null_coordinator c(n);
  p.on_start(c);
  auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < pushes; ++k) {
    auto w = static_cast<worker_id>(k % n);
    c.time += 1e-3;
    if (!c.waiting(w))
      c.push(p, w);
  }
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / pushes;
}

}  // namespace syncpoint::bench
