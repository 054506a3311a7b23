// SSP(s) — stale synchronous parallel (PROTOCOLS.md, "SSP").
// Pushes are applied on arrival. Worker i may start iteration c_i + 1 only
// while c_i - min_j c_j <= s (over live workers); otherwise it is held until
// the slowest worker advances.
#include "protocols/protocol.hpp"

#include <algorithm>
#include <stdexcept>

namespace syncpoint {

class ssp : public protocol {
 public:
  explicit ssp(const protocol_options& o) : s_(static_cast<uint64_t>(o.staleness)) {
    if (o.staleness < 0)
      throw std::invalid_argument("ssp: staleness must be >= 0, got " +
                                  std::to_string(o.staleness));
  }

  void on_push(coordinator_api& c, worker_id) override { release_within_bound(c); }

  void on_lost(coordinator_api& c, worker_id) override { release_within_bound(c); }

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

SYNCPOINT_REGISTER_PROTOCOL("ssp", "stale synchronous: at most --staleness S iterations ahead", ssp);

}  // namespace syncpoint
