// Every example of a public header's doc comments, compiled and run (see
// test_header_examples.cpp). This file: a protocol's local work between
// exchanges (<syncpoint/local_work.hpp>, coordinator_api::set_local_work).
// The check that each example's lines are in its test reads this file after
// test_header_examples_parts.cpp.
#include <syncpoint/syncpoint.hpp>
#include <syncpoint/local_work.hpp>
#include <syncpoint/protocol.hpp>
#include <syncpoint/protocol_archive.hpp>
#include "tests/header_examples.hpp"

#include <doctest/doctest.h>

#include <string>

using syncpoint::testing::small_cfg;

namespace {

// -- <syncpoint/local_work.hpp> and coordinator_api::set_local_work ---------------------

// <syncpoint/local_work.hpp>'s DiLoCo work, given to every worker at the
// start of a BSP round of outer gradients.
class header_diloco : public syncpoint::protocol {
 public:
  explicit header_diloco(const syncpoint::protocol_options&) {}
  void on_start(syncpoint::coordinator_api& c) override {
    c.set_mode(syncpoint::ps_mode::buffered);
    for (auto w : c.live_workers()) {
      syncpoint::local_work diloco;                    // DiLoCo (Douillard et al. 2023)
      diloco.steps = 50;                               // H inner steps an exchange
      diloco.inner.type = syncpoint::inner_kind::adamw;
      diloco.inner.lr = 4e-4;
      diloco.push = syncpoint::push_kind::outer;       // Δ = θ_pulled − θ_local
      c.set_local_work(w, diloco);                     // in a protocol's on_start
      c.release(w);
    }
  }
  void on_push(syncpoint::coordinator_api& c, syncpoint::worker_id) override { round(c); }
  void on_lost(syncpoint::coordinator_api& c, syncpoint::worker_id) override { round(c); }
  void checkpoint(syncpoint::protocol_archive&) override {}
  static void round(syncpoint::coordinator_api& c) {
    if (!syncpoint::everyone_waiting(c))
      return;
    c.commit();
    for (auto v : c.live_workers())
      c.release(v);
  }
};
SYNCPOINT_REGISTER_PROTOCOL("test-header-diloco", "local_work.hpp's example", header_diloco);

// set_local_work's example: Local SGD at H = 10.
class header_local_sgd : public header_diloco {
 public:
  explicit header_local_sgd(const syncpoint::protocol_options& o) : header_diloco(o) {}
  void on_start(syncpoint::coordinator_api& c) override {
    c.set_mode(syncpoint::ps_mode::buffered);
    syncpoint::local_work h;  h.steps = 10;  h.inner.type = syncpoint::inner_kind::sgd;  h.push = syncpoint::push_kind::outer;
    for (auto w : c.live_workers()) c.set_local_work(w, h);   // Local SGD, H = 10
    for (auto w : c.live_workers())
      c.release(w);
  }
};
SYNCPOINT_REGISTER_PROTOCOL("test-header-local-sgd", "set_local_work's example", header_local_sgd);

}  // namespace

TEST_CASE("header examples: <syncpoint/local_work.hpp>'s DiLoCo and set_local_work's Local SGD train with few pushes") {
  for (auto* name : {"test-header-diloco", "test-header-local-sgd"}) {
    CAPTURE(name);
    auto cfg = small_cfg(name);
    cfg.lr = 1;  // the outer step: the mean outer gradient, whole
    cfg.momentum = 0;
    auto s = syncpoint::train(cfg).summary;
    CHECK(s.final_accuracy > 0.5);
    uint64_t pushes = 0;
    for (auto& w : s.per_worker)
      pushes += w.iterations;
    // 2000 samples of batch 64: about 31 gradients; a push every H of them
    CHECK(pushes <= (std::string(name) == "test-header-diloco" ? 2u : 6u));
  }
}
