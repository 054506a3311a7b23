// ElasticBSP (PROTOCOLS.md, "ElasticBSP with ZipLine").
// A barrier only at chosen times; between barriers workers run ASP-style.
// Each cycle, after a barrier (and at the start):
//   1. Monitoring: wait until every live worker has pushed twice since the barrier.
//   2. Prediction: worker i's interval D_i is the mean of its last k intervals
//      since the barrier; its next R push opportunities are predicted.
//   3. ZipLine picks one opportunity per worker: the barrier with the least spread.
//   4. Barrier: a worker that reaches its stop waits; when all have, all pull
//      the same version and the next cycle begins.
// Our choice (docs/elastic-bsp.md): at prediction time only the worker whose
// push completed monitoring is waiting; every other worker is computing, so its
// first opportunity is its in-flight push. Row i is therefore
//   M[i][r] = b_i + r * D_i        for the waiting worker (r = 0: stop now),
//   M[i][r] = b_i + (r + 1) * D_i  for a computing one (r = 0: its next push),
// where b_i is worker i's last push time.
#include "protocols/elastic_bsp/zipline.hpp"
#include <syncpoint/protocol_archive.hpp>

#include <algorithm>
#include <stdexcept>

namespace syncpoint {

class elastic_bsp : public protocol {
 public:
  static std::vector<option_spec> options() {
    using k = option_spec::kind;
    return {{"lookahead", k::integer, "15", "push times predicted per worker (R)", 1, 100000},
            {"zipline-variant", k::text, "zipline-opt-bs", "ZipLine algorithm", 0, 0,
             {"zipline", "zipline-opt", "zipline-opt-bs"}},
            {"interval-window", k::integer, "1", "intervals averaged per prediction (k)", 1, 100000}};
  }

  explicit elastic_bsp(const protocol_options& o)
    : lookahead_(static_cast<int>(o.integer("lookahead"))),
      window_(static_cast<int>(o.integer("interval-window"))),
      variant_(parse_zipline_variant(o.text("zipline-variant"))) {}

  void on_start(coordinator_api& c) override {
    times_.assign(static_cast<size_t>(c.workers()), {});
    stop_at_.assign(static_cast<size_t>(c.workers()), 0);
    protocol::on_start(c);  // immediate mode, everyone runs
  }

  void on_push(coordinator_api& c, worker_id w) override {
    auto& t = times_[idx(w)];
    t.push_back(c.now());
    if (t.size() == 2)
      ++pushed_twice_;
    if (!predicted_) {
      if (everyone_pushed_twice(c))
        predict(c, w);
      else
        c.release(w);
    }
    if (predicted_) {
      if (t.size() < stop_at_[idx(w)])
        c.release(w);
      barrier_if_everyone_stopped(c);
    }
  }

  void on_lost(coordinator_api& c, worker_id w) override {
    forget(w);
    if (!predicted_) {
      // The lost worker may have been the last one monitoring waited for; a
      // prediction then needs a push to anchor on, which the next one brings.
      return;
    }
    barrier_if_everyone_stopped(c);
  }

  // A newcomer joins the monitoring if no barrier is planned yet; else it
  // waits for the planned barrier, which releases it with everyone.
  void on_joined(coordinator_api& c, worker_id w) override {
    forget(w);
    stop_at_[idx(w)] = 0;
    if (!predicted_)
      c.release(w);
    else
      barrier_if_everyone_stopped(c);
  }

  void checkpoint(protocol_archive& ar) override {
    ar(times_, stop_at_, predicted_);
    if (ar.loading())
      pushed_twice_ = static_cast<int>(std::count_if(times_.begin(), times_.end(),
                                                     [](auto& t) { return t.size() >= 2; }));
  }

  /// Pushes since the last barrier after which each worker stops (0: not predicted).
  const std::vector<size_t>& stop_points() const { return stop_at_; }

 private:
  static size_t idx(worker_id w) { return static_cast<size_t>(w); }

  // Only live workers have push times (a lost one's are forgotten): O(1).
  bool everyone_pushed_twice(const coordinator_api& c) const { return pushed_twice_ == c.live_count(); }

  void forget(worker_id w) {
    if (times_[idx(w)].size() >= 2)
      --pushed_twice_;
    times_[idx(w)].clear();
  }

  // Mean of the last k intervals since the barrier.
  double interval(const std::vector<double>& t) const {
    size_t k = std::min(static_cast<size_t>(window_), t.size() - 1);
    return (t.back() - t[t.size() - 1 - k]) / static_cast<double>(k);
  }

  void predict(coordinator_api& c, worker_id trigger) {
    auto live = c.live_workers();
    zipline_matrix m(live.size(), static_cast<size_t>(lookahead_));
    for (size_t row = 0; row < live.size(); ++row) {
      auto& t = times_[idx(live[row])];
      double b = t.back(), d = interval(t);
      double first = live[row] == trigger ? 0.0 : 1.0;
      for (size_t r = 0; r < m.R; ++r)
        m.at(row, r) = b + (static_cast<double>(r) + first) * d;
    }
    auto z = zipline(m, variant_);
    for (size_t row = 0; row < live.size(); ++row) {
      auto w = live[row];
      // Stop after push number stop_at (counted since the barrier).
      stop_at_[idx(w)] = times_[idx(w)].size() + z.stops[row] + (w == trigger ? 0 : 1);
    }
    predicted_ = true;
  }

  void barrier_if_everyone_stopped(coordinator_api& c) {
    if (!everyone_waiting(c))
      return;
    // Nobody is computing and nothing is in flight: every pull gets one version.
    for (auto w : c.live_workers()) {
      times_[idx(w)].clear();
      stop_at_[idx(w)] = 0;
      c.release(w, true);
    }
    pushed_twice_ = 0;
    predicted_ = false;
  }

  int lookahead_;
  int window_;
  zipline_variant variant_;
  std::vector<std::vector<double>> times_;  // push times since the last barrier
  std::vector<size_t> stop_at_;
  bool predicted_ = false;
  int pushed_twice_ = 0;  // workers with two push times or more since the barrier
};

SYNCPOINT_REGISTER_PROTOCOL("elastic-bsp", "barriers only where ZipLine predicts the least waiting",
                            elastic_bsp);

}  // namespace syncpoint
