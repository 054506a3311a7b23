// BSP — bulk synchronous parallel (PROTOCOLS.md, "BSP").
// Barrier every iteration: the PS buffers the pushes of a round; when every
// live worker has pushed, it applies their mean once and everyone is released
// to pull the new version. A worker lost mid-round is dropped from the round.
#include <syncpoint/protocol_archive.hpp>

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
  // A newcomer waits for the round in progress to close (it has nothing in
  // it) and starts from the barrier with everyone.
  void on_joined(coordinator_api& c, worker_id) override { close_round_if_complete(c); }
  void checkpoint(protocol_archive&) override {}  // the round is the coordinator's waiting set

 private:
  // The round is complete when every live worker pushed and waits.
  void close_round_if_complete(coordinator_api& c) {
    if (!everyone_waiting(c))
      return;
    c.commit();
    for (auto w : c.live_workers())
      c.release(w);
  }
};

SYNCPOINT_REGISTER_PROTOCOL("bsp", "bulk synchronous: a barrier every iteration", bsp);

}  // namespace syncpoint
