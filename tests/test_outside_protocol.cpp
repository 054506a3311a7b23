// A protocol written outside the tree, as a user inventing one writes it
// (only <syncpoint/protocol.hpp>; issue 42, part 7): "commit when half of
// the live workers have pushed", buffered, the pushers released at each
// commit. The others' next pushes are then stale; at default options it
// must still train as well as bsp, without knowing the PS's momentum rule.
#include <syncpoint/protocol.hpp>
#include <syncpoint/train.hpp>

#include <doctest/doctest.h>

#include <vector>

namespace {

class half_quorum : public syncpoint::protocol {
 public:
  explicit half_quorum(const syncpoint::protocol_options&) {}

  void on_start(syncpoint::coordinator_api& c) override {
    c.set_mode(syncpoint::ps_mode::buffered);
    for (auto w : c.live_workers())
      c.release(w);
  }
  void on_push(syncpoint::coordinator_api& c, syncpoint::worker_id w) override {
    pushed_.push_back(w);
    commit_if_half(c);
  }
  void on_lost(syncpoint::coordinator_api& c, syncpoint::worker_id w) override {
    pushed_.erase(std::remove(pushed_.begin(), pushed_.end(), w), pushed_.end());
    commit_if_half(c);
  }

 private:
  void commit_if_half(syncpoint::coordinator_api& c) {
    if (pushed_.empty() || 2 * static_cast<int>(pushed_.size()) < c.live_count())
      return;
    c.commit();
    for (auto w : pushed_)
      c.release(w);
    pushed_.clear();
  }
  std::vector<syncpoint::worker_id> pushed_;
};

}  // namespace

SYNCPOINT_REGISTER_PROTOCOL("test-half-quorum", "commit when half of the live workers have pushed", half_quorum);

TEST_CASE("outside protocol: a half-quorum protocol written outside the tree trains within 2 points of bsp at "
          "default options") {
  auto job = [](const std::string& protocol) {
    syncpoint::job_config cfg;
    cfg.protocol = protocol;
    cfg.workers = 6;
    cfg.straggler = "5:x4";
    cfg.model = "mlp";
    cfg.epochs = 1;
    cfg.progress = false;
    return syncpoint::train(cfg).summary;
  };
  auto bsp = job("bsp");
  auto half = job("test-half-quorum");
  MESSAGE("bsp " << bsp.final_accuracy << ", half quorum " << half.final_accuracy << " (staleness mean "
                 << half.staleness_mean << ")");
  CHECK(half.samples >= bsp.samples);
  CHECK(half.final_accuracy >= bsp.final_accuracy - 0.02);
}
