// BSP — bulk synchronous parallel (PROTOCOLS.md, "BSP").
// Barrier every iteration: the PS buffers the pushes of a round; when every
// live worker has pushed, it applies their mean once and everyone is released
// to pull the new version. A worker lost mid-round is dropped from the round.
#include "protocols/protocol.hpp"

namespace syncpoint {

class bsp : public protocol {
 public:
  explicit bsp(const protocol_options&) {}

  void on_start(coordinator_api& c) override {
    c.set_mode(ps_mode::buffered);
    for (auto w : c.live_workers())
      c.release(w);
  }

  void on_push(coordinator_api& c, worker_id) override { close_round_if_complete(c); }

  void on_lost(coordinator_api& c, worker_id) override { close_round_if_complete(c); }

 private:
  // The round is complete when every live worker pushed and waits. A round in
  // which nobody pushed yet (all lost but idle ones) is not a round.
  void close_round_if_complete(coordinator_api& c) {
    auto live = c.live_workers();
    if (live.empty())
      return;
    for (auto w : live)
      if (!c.waiting(w))
        return;
    c.commit();
    for (auto w : live)
      c.release(w);
  }
};

SYNCPOINT_REGISTER_PROTOCOL("bsp", "bulk synchronous: a barrier every iteration", bsp);

}  // namespace syncpoint
