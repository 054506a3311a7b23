// R²SP — round-robin synchronous parallel (PROTOCOLS.md, "R²SP").
// Updates are spread evenly in time so that the PS link is never contended.
// - Pushes are applied on arrival (immediate mode), weight b_i / Σb.
// - Period T: the longest cycle (release → pull → compute → push accepted),
//   from each worker's speed (samples/s, mean of its last --retune cycles) at
//   its batch from now on, re-estimated every --retune rounds.
// - Worker of rank i among the n live ones has the slot offset φ_i = i·T/n; it
//   is released at the slot of its next round t0 + (k+1)·T + φ_i: an early
//   worker waits for it; a late one goes at once and keeps its place on the
//   grid; one more than a period late (a transient straggler) takes the next
//   slot, owing nothing.
//   (our choice) The hold comes before the pull, so the worker pulls at its
//   slot and computes on the freshest model; with equal cycle times its push
//   then lands T/n after its predecessor's.
// - Heterogeneous workers (--tune-batch on): at each retune
//   b_i = round(B·v_i / Σv_j), v_i = b_i / cycle_i (samples/s), B = n × base
//   batch, clamped to [--min-batch, --max-batch]. Its fixed point gives equal
//   cycle times. The first round is unscheduled: it measures.
// - A lost worker gives up its slot: ranks, and so offsets, are recomputed
//   over the live workers for every release after it.
#include <syncpoint/protocol_archive.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace syncpoint {

class r2sp : public protocol {
 public:
  static std::vector<option_spec> options() {
    using k = option_spec::kind;
    return {{"retune", k::integer, "5", "rounds between re-estimates of the period", 1, 1e6},
            {"tune-batch", k::text, "on", "batch sizes proportional to measured speed", 0, 0, {"on", "off"}},
            {"min-batch", k::integer, "8", "smallest batch tuning may give a worker", 1, 1e6},
            {"max-batch", k::integer, "1024", "largest batch tuning may give a worker", 1, 1e6}};
  }

  explicit r2sp(const protocol_options& o)
    : retune_(static_cast<uint64_t>(o.integer("retune"))),
      tune_batch_(o.text("tune-batch") == "on"),
      min_batch_(static_cast<uint32_t>(o.integer("min-batch"))),
      max_batch_(static_cast<uint32_t>(std::max(o.integer("min-batch"), o.integer("max-batch")))) {}

  void on_start(coordinator_api& c) override {
    auto n = static_cast<size_t>(c.workers());
    released_at_.assign(n, c.now());
    speeds_.assign(n, {});
    last_slot_.assign(n, 0);
    base_batch_ = c.batch(0);
    cycle_batch_.assign(n, base_batch_);
    c.set_mode(ps_mode::immediate);
    for (auto w : c.live_workers())
      c.release(w);  // round 0 is unscheduled: it measures the cycles
  }

  void on_push(coordinator_api& c, worker_id w) override {
    auto i = static_cast<size_t>(w);
    double cycle = c.now() - released_at_[i];
    if (cycle > 0) {  // samples/s over this cycle, at the batch it ran with
      speeds_[i].push_back(cycle_batch_[i] / cycle);
      if (speeds_[i].size() > retune_)
        speeds_[i].erase(speeds_[i].begin());
    }
    auto round = c.min_clock();
    if (round >= next_retune_) {
      retune(c, w);
      next_retune_ = round + retune_;
    }
    if (period_ <= 0) {  // still measuring
      release(c, w, c.now());
      return;
    }
    double now = c.now();
    double slot = last_slot_[i] > 0 ? last_slot_[i] + period_ : next_slot(c, w, now);
    if (slot < now - period_)  // more than a period behind: realign
      slot = next_slot(c, w, now);
    last_slot_[i] = slot;
    release(c, w, slot);  // at once if the slot has passed
  }

  void on_lost(coordinator_api&, worker_id) override {
    ranks_.clear();
    regrid();  // ranks, and so offsets, are taken over the live workers
  }

  // A newcomer changes the ranks (a new grid) and measures its first cycle.
  void on_joined(coordinator_api& c, worker_id w) override {
    auto i = static_cast<size_t>(w);
    speeds_[i].clear();
    ranks_.clear();
    regrid();
    release(c, w, c.now());
  }

  void checkpoint(protocol_archive& ar) override {
    ar(base_batch_, next_retune_, period_, t0_, released_at_, last_slot_, speeds_, cycle_batch_);
  }

 private:
  double mean_speed(size_t i) const {
    auto& xs = speeds_[i];
    return xs.empty() ? 0 : std::accumulate(xs.begin(), xs.end(), 0.0) / static_cast<double>(xs.size());
  }

  // New batch sizes (if tuning), then the new period. The schedule keeps its
  // grid: it restarts at the current period's boundary (the first time: where
  // `w`, whose push triggered this, is exactly at its slot).
  void retune(coordinator_api& c, worker_id w) {
    auto live = c.live_workers();
    std::vector<double> speed(live.size());  // samples/s
    for (size_t k = 0; k < live.size(); ++k)
      speed[k] = mean_speed(static_cast<size_t>(live[k]));
    double total = std::accumulate(speed.begin(), speed.end(), 0.0);
    if (tune_batch_ && total > 0) {
      double budget = static_cast<double>(live.size()) * base_batch_;  // B = n × base batch
      for (size_t k = 0; k < live.size(); ++k) {
        auto b = static_cast<uint32_t>(std::llround(budget * speed[k] / total));
        c.set_batch(live[k], std::clamp(b, min_batch_, max_batch_));
        auto i = static_cast<size_t>(live[k]);
        if (released_at_[i] > c.now())  // its pending release will carry the new batch
          cycle_batch_[i] = c.batch(live[k]);
      }
    }
    // The period: the longest cycle at the batches from now on.
    double old_period = period_;
    period_ = 0;
    for (size_t k = 0; k < live.size(); ++k)
      if (speed[k] > 0)
        period_ = std::max(period_, c.batch(live[k]) / speed[k]);
    if (old_period > 0) {
      t0_ += std::floor((c.now() - t0_) / old_period) * old_period;
    } else {
      t0_ = c.now() - rank(c, w) * period_ / static_cast<double>(live.size());
    }
    if (period_ != old_period)
      regrid();
  }

  // A new grid: every worker's next release is found on it afresh.
  void regrid() { std::fill(last_slot_.begin(), last_slot_.end(), 0.0); }

  // The first slot of `w` at or after `t`: t0 + k·T + rank·T/n.
  double next_slot(const coordinator_api& c, worker_id w, double t) {
    double phase = t0_ + rank(c, w) * period_ / static_cast<double>(c.live_count());
    double k = std::ceil((t - phase) / period_ - 1e-9);
    return phase + std::max(0.0, k) * period_;
  }

  // w's place among the live workers, from a table made again only when
  // they change: a release is O(1), not O(n).
  double rank(const coordinator_api& c, worker_id w) {
    if (ranks_.empty()) {
      ranks_.assign(static_cast<size_t>(c.workers()), 0);
      uint32_t r = 0;
      for (auto v : c.live_workers())
        ranks_[static_cast<size_t>(v)] = r++;
    }
    return ranks_[static_cast<size_t>(w)];
  }

  void release(coordinator_api& c, worker_id w, double at) {
    auto i = static_cast<size_t>(w);
    released_at_[i] = std::max(at, c.now());
    cycle_batch_[i] = c.batch(w);
    c.release_at(w, at);
  }

  uint64_t retune_;
  bool tune_batch_;
  uint32_t min_batch_, max_batch_;
  uint32_t base_batch_ = 64;
  uint64_t next_retune_ = 1;  // the first retune ends the measuring round
  double period_ = 0;         // 0: not measured yet
  double t0_ = 0;
  std::vector<double> released_at_;
  std::vector<double> last_slot_;  // the grid slot of each worker's last release (0: none yet)
  std::vector<std::vector<double>> speeds_;  // the last `retune` samples/s of each worker
  std::vector<uint32_t> cycle_batch_;        // the batch of each worker's current cycle
  std::vector<uint32_t> ranks_;              // each live worker's rank (empty: to be made)
};

SYNCPOINT_REGISTER_PROTOCOL("r2sp", "round-robin slots T/n apart on the PS link; batches tuned to speed",
                            r2sp);

}  // namespace syncpoint
