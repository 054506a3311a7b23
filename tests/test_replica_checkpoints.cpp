// Checkpoints of replicated PS shards (--ps-replicas R) on the virtual clock.
// A checkpoint keeps every copy's own link (a replica's carries the pushes,
// not the pulls), the timers of each copy, which copies had reported a push
// the others had not, and which copies were lost. So a run resumed from any
// of its checkpoints ends as the run that never stopped, byte for byte: with
// every copy alive, after a primary's loss (the lost copy comes back as the
// copy that served), and resumed with another R.
#include <syncpoint/train.hpp>
#include "runtime/records/checkpoint_file.hpp"
#include "tests/helpers.hpp"
#include "tests/small_job.hpp"
#include "tests/same_run.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>

using namespace syncpoint;
using syncpoint::testing::same_run;
using syncpoint::testing::checkpoint_files;
using syncpoint::testing::resuming_from;
using syncpoint::testing::slurp;
namespace fs = std::filesystem;

namespace {

struct folder : syncpoint::testing::temp_folder {
  explicit folder(const std::string& name) : temp_folder("syncpoint_replica_checkpoints_" + name) {}
};

// Two shards, R replicas each, and slow links: pushes are on every copy's
// link at the checkpoints, pulls on the primaries'.
job_config busy(const std::string& protocol, int replicas) {
  auto cfg = syncpoint::testing::small_job(protocol);
  cfg.straggler = "3:x4";
  cfg.eval_every = 0.5;
  cfg.momentum = 0.5;
  cfg.ps_shards = 2;
  cfg.ps_replicas = replicas;
  cfg.ps_bandwidth = 2e6;
  cfg.latency_ms = 0.2;
  cfg.epochs = 1;
  return cfg;
}

checkpoint_state read(const fs::path& file, const job_config& cfg, size_t parameters) {
  return read_checkpoint(file.string(), {checkpoint_format, cfg.model, parameters, cfg.protocol}).state;
}

// `cfg` with checkpoints about every fifth of its run, all kept in `dir`.
job_config checkpointed(job_config cfg, const run_result& plain, const fs::path& dir) {
  cfg.checkpoint_every_s = plain.summary.run_time_s / 5;
  cfg.checkpoint_dir = dir.string();
  cfg.checkpoint_keep = 0;
  return cfg;
}

}  // namespace

TEST_CASE("replica checkpoints: every protocol with a replica per shard, resumed from early, middle and late "
          "checkpoints, ends byte for byte as the run that never stopped") {
  size_t replica_pushes_in_flight = 0, replica_timers = 0, partly_reported = 0;
  for (auto& protocol : syncpoint::testing::builtin_protocols()) {
    CAPTURE(protocol);
    folder dir(protocol);
    auto cfg = busy(protocol, 1);
    auto plain = train(cfg);
    cfg = checkpointed(cfg, plain, dir.path / "all");
    auto whole = train(cfg);
    same_run(whole, plain);  // taking checkpoints changes nothing
    auto files = checkpoint_files(dir.path / "all");
    REQUIRE(files.size() >= 3);
    for (auto& file : files) {
      auto s = read(file, cfg, plain.final_model.values.size());
      REQUIRE(s.ps.copy_links.size() == 4);  // 2 shards x 2 copies
      CHECK(s.coordinator.serving == std::vector<uint32_t>{0, 0});
      CHECK(s.coordinator.copy_lost == std::vector<bool>(4, false));
      for (size_t j : {1, 3})
        replica_pushes_in_flight += s.ps.copy_links[j].in_transit.size();
      replica_timers += static_cast<size_t>(
        std::count_if(s.timers.begin(), s.timers.end(), [](const saved_timer& t) { return t.copy == 1; }));
      for (auto& p : s.coordinator.partial)
        partly_reported += p.in.size() == 4 && p.in[0] != p.in[1];  // the primary had it, its replica not (or so)
    }
    for (auto& file : {files.front(), files[files.size() / 2], files.back()}) {
      CAPTURE(file.filename().string());
      auto from = dir.path / ("from_" + file.filename().string());
      auto resumed = train(resuming_from(cfg, file, from));
      same_run(resumed, whole);
      CHECK(resumed.trace.size() == whole.trace.size());
      auto later = checkpoint_files(from);  // the resumed run takes the same later checkpoints, byte for byte
      CHECK(slurp(later.back().string()) == slurp(files.back().string()));
    }
  }
  // What makes it hard was there: replicas' links and timers saved apart from their primaries'.
  CHECK(replica_pushes_in_flight > 0);
  CHECK(replica_timers > 0);
  MESSAGE("pushes in flight on replicas' links: " << replica_pushes_in_flight << ", replicas' timers: "
          << replica_timers << ", pushes one copy had reported and the other not: " << partly_reported);
}

TEST_CASE("replica checkpoints: a checkpoint after a primary's loss resumes with the copy back, and ends as the run "
          "that never stopped") {
  for (auto protocol : {"bsp", "asp", "ssp"}) {
    CAPTURE(protocol);
    folder dir(std::string("lost_") + protocol);
    auto cfg = busy(protocol, 1);
    cfg.internals.fail_worker = 1;
    cfg.internals.fail_at_iter = 5;
    cfg.internals.fail_shard = "1";  // shard 1's primary goes with worker 1: its replica serves
    auto plain = train(cfg);
    cfg = checkpointed(cfg, plain, dir.path / "all");
    auto whole = train(cfg);
    same_run(whole, plain);
    auto file = checkpoint_files(dir.path / "all").back();
    auto s = read(file, cfg, plain.final_model.values.size());
    CHECK(s.coordinator.copy_lost == std::vector<bool>{false, false, true, false});
    CHECK(s.coordinator.serving == std::vector<uint32_t>{0, 1});
    auto resumed = train(resuming_from(cfg, file, dir.path / "from"));
    same_run(resumed, whole);
  }
}

TEST_CASE("replica checkpoints: a checkpoint taken with one replica resumes with none or two, and ends as the run "
          "that never stopped") {
  for (auto protocol : {"bsp", "asp", "ssp"}) {
    CAPTURE(protocol);
    folder dir(std::string("other_r_") + protocol);
    auto cfg = busy(protocol, 1);
    auto plain = train(cfg);
    cfg = checkpointed(cfg, plain, dir.path / "all");
    auto whole = train(cfg);
    auto files = checkpoint_files(dir.path / "all");
    REQUIRE(files.size() >= 3);
    auto file = files[files.size() / 2];
    for (int r : {0, 2}) {
      CAPTURE(r);
      auto again = resuming_from(cfg, file, dir.path / ("from_" + std::to_string(r)));
      again.ps_replicas = r;
      same_run(train(again), whole);
    }
    // And back: a checkpoint without replicas resumes with one.
    auto none = cfg;
    none.ps_replicas = 0;
    none.checkpoint_dir = (dir.path / "none").string();
    auto unreplicated = train(none);
    auto again = resuming_from(none, checkpoint_files(dir.path / "none")[1], dir.path / "from_none");
    again.ps_replicas = 1;
    same_run(train(again), unreplicated);
  }
}
