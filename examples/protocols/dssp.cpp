// DSSP(s, r) — dynamic stale synchronous parallel (Zhao, An, Liu, Chen,
// ICDCS 2019). The staleness threshold moves in [s, s + r].
// - Pushes are applied on arrival, as in SSP. Worker i may start iteration
//   c_i + 1 while c_i − m ≤ s, m = min_j c_j over the live workers: SSP(s).
// - Past s, i is not held at once. It gets a decision, once per value of m:
//   a*, the number of further iterations it may run before it waits.
//   T = when m is predicted to advance: the latest next push of the workers
//   at m, each at its last release + its mean iteration time d_j.
//   Worker i's a-th further iteration is predicted to end at now + a·d_i;
//   a* is the a in [0, s + r + 1 − (c_i − m)] whose end is closest to T, so
//   no iteration starts more than s + r ahead. At the first crossing
//   (c_i − m = s + 1) that range is [0, r] and a* is the paper's r*.
// - After its a* iterations, i is held until m advances. Then it is within s
//   (released), or past s and decided afresh against the new slowest push.
// - No timing yet (i, or a worker at m, has no iteration of nonzero length):
//   a* = 0, i.e. SSP(s). With r = 0, DSSP is SSP(s).
// - A lost worker leaves the minimum: held workers are re-checked at once.
//
// How we read the paper: its server keeps each worker's last two push times;
// when the fastest worker is past s with no extra iterations left, its
// "synchronization controller" simulates that worker's next r pushes and the
// slowest worker's next push from those intervals and grants the number of
// extra iterations whose simulated push is closest to the slowest's.
// (our choice) Where the paper is open, or would not keep the bound:
// - an iteration is timed from its release to its push, mean of the last 3
//   (a held worker's push-to-push interval would count its wait);
// - every worker past s is decided, not only the fastest;
// - a decision lasts until m advances, and is capped so the lag never
//   exceeds s + r (granting r* again at every push would not be bounded);
// - ties go to fewer iterations (less staleness); with several workers at m,
//   m advances when the last of them pushes, so T is their latest push.
#include <syncpoint/protocol_archive.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <numeric>
#include <optional>

namespace syncpoint {

class dssp : public protocol {
 public:
  static std::vector<option_spec> options() {
    using k = option_spec::kind;
    return {{"staleness", k::integer, "3", "iterations a worker may run ahead", 0, 1e9, {}, "s"},  // as ssp
            {"dssp-range", k::integer, "4", "extra iterations past S that timing may grant (R)", 0, 1e9, {}, "r"}};
  }

  explicit dssp(const protocol_options& o)
    : s_(static_cast<uint64_t>(o.integer("staleness"))), r_(static_cast<uint64_t>(o.integer("dssp-range"))) {}

  void on_start(coordinator_api& c) override {
    auto n = static_cast<size_t>(c.workers());
    started_.assign(n, c.now());
    times_.assign(n, {});
    stop_.assign(n, 0);
    decided_at_.assign(n, UINT64_MAX);  // no decision yet
    protocol::on_start(c);              // immediate mode, everyone runs
  }

  void on_push(coordinator_api& c, worker_id w) override {
    auto& t = times_[idx(w)];
    t.push_back(c.now() - started_[idx(w)]);  // this iteration's time
    if (t.size() > window)
      t.pop_front();
    hold(w);
    release_allowed(c);
  }

  void on_lost(coordinator_api& c, worker_id w) override {
    auto i = std::lower_bound(held_.begin(), held_.end(), w);
    if (i != held_.end() && *i == w)
      held_.erase(i);
    release_allowed(c);
  }

  // A newcomer starts at the slowest worker's clock: SSP's bound lets it go.
  void on_joined(coordinator_api& c, worker_id w) override {
    times_[idx(w)].clear();
    decided_at_[idx(w)] = UINT64_MAX;
    hold(w);
    release_allowed(c);
  }

  void checkpoint(protocol_archive& ar) override { ar(started_, times_, stop_, decided_at_, held_); }

 private:
  static constexpr size_t window = 3;  // iterations averaged per worker
  static size_t idx(worker_id w) { return static_cast<size_t>(w); }

  // Waits for this protocol's word, kept in id order.
  void hold(worker_id w) { held_.insert(std::lower_bound(held_.begin(), held_.end(), w), w); }

  // Any push or loss may raise the minimum, so every waiting worker is re-checked
  // (in id order; the minimum is the coordinator's, kept as clocks change).
  void release_allowed(coordinator_api& c) {
    if (c.live_count() == 0)
      return;
    uint64_t m = c.min_clock();
    auto kept = held_.begin();
    for (auto w : held_) {
      if (c.waiting(w) && may_start(c, w, m)) {
        started_[idx(w)] = c.now();
        c.release(w);
      } else if (c.waiting(w)) {
        *kept++ = w;
      }
    }
    held_.erase(kept, held_.end());
  }

  bool may_start(const coordinator_api& c, worker_id w, uint64_t m) {
    uint64_t lag = c.clock(w) - m;
    if (lag <= s_)
      return true;  // SSP(s)
    auto i = idx(w);
    if (decided_at_[i] != m) {  // past s, and not yet decided at this minimum
      decided_at_[i] = m;
      stop_[i] = c.clock(w) + further_iterations(c, w, lag, m);
    }
    return c.clock(w) < stop_[i];
  }

  // a*: the further iterations of `w` whose predicted end is closest to the
  // slowest workers' next push, within the bound s + r.
  uint64_t further_iterations(const coordinator_api& c, worker_id w, uint64_t lag, uint64_t m) const {
    uint64_t most = s_ + r_ + 1 > lag ? s_ + r_ + 1 - lag : 0;
    auto t = slowest_next_push(c, m);
    double d = mean_iteration(w);
    if (most == 0 || !t || d <= 0)
      return 0;
    double a = std::ceil((*t - c.now()) / d - 0.5);  // the nearest count; a tie takes the smaller
    return a <= 0 ? 0 : static_cast<uint64_t>(std::min(a, static_cast<double>(most)));
  }

  // When m advances: the latest predicted push of the workers at m (one still
  // waiting is released at this event). Nothing if one has no timing yet.
  std::optional<double> slowest_next_push(const coordinator_api& c, uint64_t m) const {
    double latest = 0;
    for (auto v : c.live_workers()) {
      if (c.clock(v) != m)
        continue;
      double d = mean_iteration(v);
      if (d <= 0)
        return std::nullopt;
      latest = std::max(latest, (c.waiting(v) ? c.now() : started_[idx(v)]) + d);
    }
    return latest;
  }

  double mean_iteration(worker_id w) const {
    auto& t = times_[idx(w)];
    return t.empty() ? 0 : std::accumulate(t.begin(), t.end(), 0.0) / static_cast<double>(t.size());
  }

  uint64_t s_, r_;
  std::vector<double> started_;              // each worker's last release
  std::vector<std::deque<double>> times_;    // its last `window` iteration times
  std::vector<uint64_t> stop_;               // it may start iterations while c_w < stop_w ...
  std::vector<uint64_t> decided_at_;         // ... decided when the minimum was this
  std::vector<worker_id> held_;              // workers that pushed and were not released, by id
};

SYNCPOINT_REGISTER_PROTOCOL("dssp", "dynamic stale synchronous: S ahead, up to S+R timed to the slowest's next push",
                            dssp);

}  // namespace syncpoint
