// SSP(s) — stale synchronous parallel (PROTOCOLS.md, "SSP").
// Pushes are applied on arrival. Worker i may start iteration c_i + 1 only
// while c_i - min_j c_j <= s (over live workers); otherwise it is held until
// the slowest worker advances.
#include "protocols/protocol_state.hpp"

#include <algorithm>

namespace syncpoint {

class ssp : public protocol {
 public:
  static std::vector<option_spec> options() {
    return {{"staleness", option_spec::kind::integer, "3", "iterations a worker may run ahead", 0, 1e9,
             {}, "s"}};
  }

  explicit ssp(const protocol_options& o) : s_(static_cast<uint64_t>(o.integer("staleness"))) {}

  void on_push(coordinator_api& c, worker_id) override { release_within_bound(c); }

  void on_lost(coordinator_api& c, worker_id) override { release_within_bound(c); }
  void on_joined(coordinator_api& c, worker_id) override { release_within_bound(c); }  // at the slowest's clock
  void checkpoint(protocol_archive&) override {}  // the clocks are the coordinator's

 private:
  // Any push may raise the minimum clock, so every held worker is re-checked.
  void release_within_bound(coordinator_api& c) {
    auto live = c.live_workers();
    if (live.empty())
      return;
    uint64_t slowest = c.clock(live.front());
    for (auto w : live)
      slowest = std::min(slowest, c.clock(w));
    for (auto w : live)
      if (c.waiting(w) && c.clock(w) - slowest <= s_)
        c.release(w);
  }

  uint64_t s_;
};

SYNCPOINT_REGISTER_PROTOCOL("ssp", "stale synchronous: at most S iterations ahead of the slowest", ssp);

}  // namespace syncpoint
