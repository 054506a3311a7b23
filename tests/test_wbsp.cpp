// WBSP and wbsp-overlap: scripted decisions, and compute ratios in virtual time.
#include <syncpoint/train.hpp>
#include "tests/protocol_recorder.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

using namespace syncpoint;
using syncpoint::testing::recorder;
using ids = std::vector<worker_id>;

TEST_CASE("wbsp: nobody is held, the visible version advances once per round, when the slowest pushes") {
  for (auto name : {"wbsp", "wbsp-overlap"}) {
    auto p = make_protocol(name, {});
    recorder c(3);
    c.start(*p);
    CHECK(c.mode == ps_mode::gated);
    CHECK(c.local_step);
    CHECK(c.overlap == (std::string(name) == "wbsp-overlap"));
    CHECK(c.take() == ids{0, 1, 2});
    // Round 1: workers 0 and 1 are fast (3 and 2 pushes), worker 2 slow.
    for (worker_id w : {0, 1, 0, 1, 0}) {
      c.push(*p, w);
      CHECK(c.pulled == std::vector<bool>{false});  // no round closed: keep training locally
      CHECK(c.take() == ids{w});                    // released at once
    }
    CHECK(c.publishes == 0);
    c.push(*p, 2);  // the slowest closes the round and pulls at once
    CHECK(c.publishes == 1);
    CHECK(c.pulled == std::vector<bool>{true});
    CHECK(c.take() == ids{2});
    // Fast workers learn it in the reply to their next push: one pull each.
    c.push(*p, 0);
    CHECK(c.pulled == std::vector<bool>{true});
    c.take();
    c.push(*p, 0);
    CHECK(c.pulled == std::vector<bool>{false});
    c.take();
    c.push(*p, 1);
    CHECK(c.pulled == std::vector<bool>{true});
    c.take();
    CHECK(c.publishes == 1);
    c.push(*p, 2);  // round 2 closes: 0, 1 and 2 have all pushed since the close
    CHECK(c.publishes == 2);
  }
}

TEST_CASE("wbsp: a lost slow worker does not freeze the round") {
  auto p = make_protocol("wbsp", {});
  recorder c(3);
  c.start(*p);
  c.take();
  c.push(*p, 0);
  c.push(*p, 1);
  CHECK(c.publishes == 0);
  c.lose(*p, 2);
  CHECK(c.publishes == 1);  // 0 and 1, the live workers, had pushed
  c.push(*p, 0);
  CHECK(c.pulled.back());
  c.push(*p, 1);
  CHECK(c.publishes == 2);
}

namespace {

run_summary ratio_run(const std::string& protocol) {
  auto cfg = syncpoint::testing::small_job(protocol);
  cfg.epochs = 3;
  cfg.lr = 0.05;
  cfg.straggler = "3:x3";
  cfg.ps_bandwidth = 7850 * 4 / 0.0005;  // 0.5 ms per model-sized transfer
  cfg.latency_ms = 0.1;
  return train(cfg).summary;
}

}  // namespace

TEST_CASE("wbsp: compute ratio >= 0.90 with a 3x straggler, overlap higher, bsp lower than both") {
  auto w = ratio_run("wbsp");
  auto o = ratio_run("wbsp-overlap");
  auto b = ratio_run("bsp");
  MESSAGE("compute ratio: wbsp " << w.mean_compute_ratio << ", wbsp-overlap " << o.mean_compute_ratio
                                 << ", bsp " << b.mean_compute_ratio);
  CHECK(w.mean_compute_ratio >= 0.90);
  CHECK(o.mean_compute_ratio > w.mean_compute_ratio);
  CHECK(b.mean_compute_ratio < w.mean_compute_ratio);
  CHECK(w.final_accuracy > 0.8);
  CHECK(o.final_accuracy > 0.8);
  // Each worker trained: the fast ones about 3x as often as the straggler.
  CHECK(w.per_worker[0].iterations > 2 * w.per_worker[3].iterations);
}
