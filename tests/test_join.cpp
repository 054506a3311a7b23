// A worker joining a running job (protocol::on_joined): each protocol takes
// the newcomer in at a clean point, on scripted event sequences; and no
// protocol leaves a newcomer, or anyone else, waiting forever.
#include <syncpoint/protocol.hpp>
#include "tests/protocol_recorder.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace syncpoint;
using syncpoint::testing::recorder;

namespace {

std::vector<worker_id> sorted(std::vector<worker_id> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::unique_ptr<protocol> make(const std::string& name, protocol_options o = {}) {
  o.set("job.workers", 3);
  return make_protocol(name, o);
}

}  // namespace

TEST_CASE("join: bsp leaves the newcomer waiting until the round in progress closes, then releases it with everyone") {
  recorder c(3);
  auto p = make("bsp");
  c.start(*p);
  c.take();
  c.lose(*p, 2);
  c.push(*p, 0);
  c.join(*p, 2);
  CHECK(c.take().empty());  // 1 is still computing: the round is open
  CHECK(c.commits == 0);
  c.push(*p, 1);
  CHECK(c.commits == 1);  // the round of 0 and 1, one step
  CHECK(sorted(c.take()) == std::vector<worker_id>{0, 1, 2});
}

TEST_CASE("join: asp and wbsp release the newcomer at once, to pull the current model") {
  for (auto name : {"asp", "wbsp", "wbsp-overlap"}) {
    CAPTURE(name);
    recorder c(3);
    auto p = make(name);
    c.start(*p);
    c.take();
    c.lose(*p, 1);
    c.join(*p, 1);
    CHECK(c.take() == std::vector<worker_id>{1});
    CHECK(c.pulled.empty());  // take() clears it; the release itself asked for a pull:
  }
  recorder c(2);
  auto p = make("wbsp");
  c.start(*p);
  c.take();
  c.lose(*p, 1);
  c.join(*p, 1);
  CHECK(c.released == std::vector<worker_id>{1});
  CHECK(c.pulled == std::vector<bool>{true});
}

TEST_CASE("join: ssp and dssp start the newcomer at the slowest clock, inside the bound") {
  for (auto name : {"ssp", "dssp"}) {
    CAPTURE(name);
    recorder c(3);
    protocol_options o;
    o.set("staleness", 1);
    auto p = make(name, o);
    c.start(*p);
    c.take();
    c.lose(*p, 2);
    c.push(*p, 0);
    c.push(*p, 1);
    c.take();
    c.push(*p, 0);  // clock 2
    c.take();
    c.push(*p, 0);  // clock 3, two ahead of worker 1: held
    CHECK(c.take().empty());
    c.join(*p, 2);
    CHECK(c.clock(2) == 1);  // the slowest live clock
    CHECK(c.take() == std::vector<worker_id>{2});
  }
}

TEST_CASE("join: elastic-bsp takes a newcomer into the monitoring, or holds it for the planned barrier") {
  recorder c(3);
  auto p = make("elastic-bsp");
  c.start(*p);
  c.take();
  c.lose(*p, 2);
  c.join(*p, 2);  // nothing planned yet: it monitors with the others
  CHECK(c.take() == std::vector<worker_id>{2});
}

TEST_CASE("join: r2sp re-grids and lets the newcomer measure its first cycle at once") {
  recorder c(3);
  auto p = make("r2sp");
  c.start(*p);
  c.take();
  c.lose(*p, 1);
  c.join(*p, 1);
  CHECK(c.take() == std::vector<worker_id>{1});
}

TEST_CASE("join: under every protocol a worker lost and back again runs on, and nobody waits forever") {
  for (auto& entry : protocol_catalog()) {
    const auto& name = entry.first;  // not a structured binding: CAPTURE's lambda takes it (C++17)
    if (name.rfind("test-", 0) == 0)
      continue;
    CAPTURE(name);
    recorder c(4);
    auto p = make(name);
    c.start(*p);
    uint64_t clock_at_join = 0;
    for (int step = 0; step < 300; ++step) {
      double t = 0.01 * step;
      c.advance(*p, t);
      if (step == 40)
        c.lose(*p, 3);
      if (step == 100) {
        c.join(*p, 3);
        clock_at_join = c.clock(3);
      }
      // Every running worker pushes once per step; worker 0 every other step (a straggler).
      for (auto w : c.live_workers())
        if (!c.waiting(w) && (w != 0 || step % 2 == 0))
          c.push_at(*p, w, t);
    }
    CHECK(c.clock(3) >= clock_at_join + 20);  // the newcomer was taken in and kept going
    for (auto w : {0, 1, 2})
      CHECK(c.clock(w) >= 60);
  }
}
