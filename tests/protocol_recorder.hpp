// A coordinator_api that records what a protocol decides, for scripted event
// sequences: push(w) and lose(w) play the coordinator's part.
#pragma once

#include "protocols/protocol.hpp"

#include <doctest/doctest.h>

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
    released.push_back(w);
    pulled.push_back(pull);
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

  void start(protocol& p) { p.on_start(*this); }
  void push(protocol& p, worker_id w) {
    REQUIRE_MESSAGE(!waiting_[w], "worker " << w << " pushed while held");
    ++clock_[w];
    waiting_[w] = true;
    p.on_push(*this, w);
  }
  void lose(protocol& p, worker_id w) {
    live_[w] = false;
    waiting_[w] = false;
    p.on_lost(*this, w);
  }
  std::vector<worker_id> take() {
    auto out = released;
    released.clear();
    pulled.clear();
    return out;
  }
  /// Push from `w` at time `t`.
  void push_at(protocol& p, worker_id w, double t) {
    time = t;
    push(p, w);
  }
};

}  // namespace syncpoint::testing
