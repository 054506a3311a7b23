// A protocol written outside the tree, as a user inventing one writes it
// (examples/downstream/half_quorum.hpp: only the installed headers,
// <syncpoint/protocol.hpp> and <syncpoint/protocol_archive.hpp>, which the
// installed-package check builds too; issues 42 and 43): "commit when half of
// the live workers have pushed", buffered, the pushers released at each
// commit. The others' next pushes are then stale; at default options it
// must still train as well as bsp, without knowing the PS's momentum rule;
// and it checkpoints its own state, so a run resumes bit for bit.
#include <syncpoint/train.hpp>

#include "examples/downstream/half_quorum.hpp"  // the installed package's own check uses it too
#include "tests/helpers.hpp"    // the test's folders, not the protocol's
#include "tests/small_job.hpp"  // checkpoint_files, resuming_from

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

using downstream::half_quorum;  // the macro takes a bare class name
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

TEST_CASE("outside protocol: its own checkpoint() makes a run of it resume bit for bit from a middle checkpoint") {
  namespace fs = std::filesystem;
  syncpoint::testing::temp_folder dir("syncpoint_outside_protocol");
  syncpoint::job_config cfg;
  cfg.protocol = "test-half-quorum";
  cfg.workers = 4;
  cfg.straggler = "3:x4";
  cfg.model = "mlp";
  cfg.train_limit = 3000;
  cfg.test_limit = 300;
  cfg.epochs = 1;
  cfg.iter_cost_ms = 0.7;
  cfg.progress = false;
  auto plain = syncpoint::train(cfg);
  cfg.checkpoint_every_s = plain.summary.run_time_s / 4;
  cfg.checkpoint_dir = (dir.path / "all").string();
  cfg.checkpoint_keep = 0;
  auto whole = syncpoint::train(cfg);
  CHECK(whole.final_model.values == plain.final_model.values);  // taking checkpoints changes nothing
  auto files = syncpoint::testing::checkpoint_files(dir.path / "all");
  REQUIRE(files.size() >= 2);
  auto middle = files[files.size() / 2];
  auto resumed = syncpoint::train(syncpoint::testing::resuming_from(cfg, middle, dir.path / "from"));
  CHECK(resumed.summary.resumed_at_s > 0);
  CHECK(resumed.final_model.version == whole.final_model.version);
  CHECK(resumed.final_model.values == whole.final_model.values);
  CHECK(resumed.summary.samples == whole.summary.samples);
}
