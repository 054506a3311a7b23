// SSP(s) — stale synchronous parallel (PROTOCOLS.md, "SSP").
// Pushes are applied on arrival. Worker i may start iteration c_i + 1 only
// while c_i - min_j c_j <= s (over live workers); otherwise it is held until
// the slowest worker advances.
#include <syncpoint/protocol_archive.hpp>

#include <algorithm>
#include <set>

namespace syncpoint {

class ssp : public protocol {
 public:
  static std::vector<option_spec> options() {
    return {{"staleness", option_spec::kind::integer, "3", "iterations a worker may run ahead", 0, 1e9,
             {}, "s"}};
  }

  explicit ssp(const protocol_options& o) : s_(static_cast<uint64_t>(o.integer("staleness"))) {}

  void on_push(coordinator_api& c, worker_id w) override {
    reload(c);
    held_.insert({c.clock(w), w});
    release_within_bound(c);
  }

  void on_lost(coordinator_api& c, worker_id w) override {
    reload(c);
    held_.erase({c.clock(w), w});
    release_within_bound(c);
  }

  void on_joined(coordinator_api& c, worker_id w) override {  // at the slowest's clock
    reload(c);
    held_.insert({c.clock(w), w});
    release_within_bound(c);
  }

  // The clocks are the coordinator's; who is held follows from them (every
  // waiting worker), and is found again at the next event after a load.
  void checkpoint(protocol_archive& ar) override {
    if (ar.loading())
      reload_ = true;
  }

 private:
  void reload(const coordinator_api& c) {
    if (!reload_)
      return;
    reload_ = false;
    held_.clear();
    for (auto v : c.live_workers())
      if (c.waiting(v))
        held_.insert({c.clock(v), v});
  }

  // Any push may raise the minimum clock, so the held workers nearest to it
  // are re-checked: O(log n) per release. They go in worker order.
  void release_within_bound(coordinator_api& c) {
    uint64_t slowest = c.min_clock();
    std::vector<worker_id> go;
    while (!held_.empty() && held_.begin()->first - slowest <= s_) {
      go.push_back(held_.begin()->second);
      held_.erase(held_.begin());
    }
    std::sort(go.begin(), go.end());
    for (auto w : go)
      c.release(w);
  }

  uint64_t s_;
  std::set<std::pair<uint64_t, worker_id>> held_;  // (clock, worker) of each waiting worker
  bool reload_ = false;
};

SYNCPOINT_REGISTER_PROTOCOL("ssp", "stale synchronous: at most S iterations ahead of the slowest", ssp);

}  // namespace syncpoint
