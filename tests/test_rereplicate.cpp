// A lost copy of a replicated shard made again (--ps-rereplicate;
// docs/architecture.md, "Replacing a lost copy") on the virtual clock. The
// new copy starts from its shard's serving copy's state at a point of the
// coordinator's sequence and takes what followed, so at the end every copy
// holds the same model, bit for bit (the coordinator checks it on the
// virtual clock, or the run fails). Making it holds the run still until
// every live worker waits, so its cost is that wait, whichever copy was
// lost: a run that loses a primary ends as the run that loses its replica.
#include <syncpoint/train.hpp>
#include "core/clock.hpp"
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
using syncpoint::testing::count_kind;
using syncpoint::testing::checkpoint_files;
using syncpoint::testing::resuming_from;
namespace fs = std::filesystem;

namespace {

job_config replicated(const std::string& protocol, int replicas) {
  auto cfg = syncpoint::testing::small_job(protocol);
  cfg.straggler = "3:x4";
  cfg.eval_every = 0.5;
  cfg.momentum = 0.5;
  cfg.ps_shards = 2;
  cfg.ps_replicas = replicas;
  cfg.ps_rereplicate = true;
  cfg.internals.fail_worker = 1;
  cfg.internals.fail_at_iter = 5;
  return cfg;
}

}  // namespace

TEST_CASE("rereplicate: under bsp a lost shard host costs nothing: the run ends as the one that loses only the "
          "worker, byte for byte, and the shard has its replica again") {
  for (bool link : {false, true}) {
    CAPTURE(link);
    auto worker_only = replicated("bsp", 1);
    if (link) {
      worker_only.ps_bandwidth = 2e6;
      worker_only.latency_ms = 0.2;
    }
    auto with_shard = worker_only;
    with_shard.internals.fail_shard = "1";
    auto lost_worker = train(worker_only);
    auto lost_host = train(with_shard);
    if (!link) {
      same_run(lost_host, lost_worker);
    } else {
      // The model is the same. The time is not quite: the promoted replica's link carries pulls
      // now, and a push counts once it is in, not once the slower of two links has it. That is
      // the loss's own cost (the run that makes no copy again ends at the same time, below).
      CHECK(lost_host.final_model.values == lost_worker.final_model.values);
      CHECK(lost_host.final_model.version == lost_worker.final_model.version);
      auto no_copy = with_shard;
      no_copy.ps_rereplicate = false;
      same_run(lost_host, train(no_copy));
    }
    CHECK(count_kind(lost_host, "copy_lost") == 1);
    REQUIRE(lost_host.summary.copies_made.size() == 1);
    CHECK(lost_host.summary.copies_made[0].shard == 1);
    CHECK(lost_host.summary.copies_made[0].copy == 0);
    // Made at the first barrier after the loss: bsp waits there anyway.
    auto lost_at = lost_host.summary.copy_losses.at(0).t_s;
    auto barrier = std::find_if(lost_host.trace.begin(), lost_host.trace.end(), [&](const trace_event& e) {
      return e.kind == "barrier" && to_seconds(e.t0) >= lost_at;
    });
    REQUIRE(barrier != lost_host.trace.end());
    CHECK(lost_host.summary.copies_made[0].t_s == to_seconds(barrier->t0));
    CHECK(count_kind(lost_worker, "copy_added") == 0);
  }
}

TEST_CASE("rereplicate: every protocol: a lost primary made again ends as a lost replica made again, byte for byte, "
          "every copy of each shard bit-equal at the end") {
  for (auto& protocol : syncpoint::testing::builtin_protocols()) {
    CAPTURE(protocol);
    auto primary = replicated(protocol, 1);
    primary.internals.fail_shard = "1";
    auto replica = primary;
    replica.internals.fail_shard = "1.1";
    auto lost_primary = train(primary);  // (a copy out of step would fail the run: the coordinator compares them)
    auto lost_replica = train(replica);
    same_run(lost_primary, lost_replica);
    CHECK(lost_primary.summary.copies_made.size() == 1);
    CHECK(lost_replica.summary.copies_made.size() == 1);
    // The lead shard's primary: the workers' replies come from its replica meanwhile.
    auto lead = primary;
    lead.internals.fail_shard = "0";
    auto lost_lead = train(lead);
    CHECK(lost_lead.summary.copies_made.size() == 1);
    CHECK(lost_lead.final_model.version == lost_primary.final_model.version);
  }
}

TEST_CASE("rereplicate: two copies of a shard lost at once are both made again in one hold, and the run ends as "
          "one that lost its other copy") {
  for (auto protocol : {"bsp", "asp", "ssp"}) {
    CAPTURE(protocol);
    auto two = replicated(protocol, 2);
    two.internals.fail_shard = "1,1.1";  // the primary, then the replica that took its place: copy 2 serves
    auto one = replicated(protocol, 2);
    one.internals.fail_shard = "1.2";
    auto lost_two = train(two);
    auto lost_one = train(one);
    CHECK(count_kind(lost_two, "copy_lost") == 2);
    CHECK(lost_two.summary.copies_made.size() == 2);
    same_run(lost_two, lost_one);
  }
}

TEST_CASE("rereplicate: a checkpoint taken after a copy was made again resumes, and ends as the run that never "
          "stopped, on the link model too (the copy that serves comes back serving, with its link and its pulls)") {
  for (auto [protocol, link] : {std::pair{"bsp", false}, {"asp", false}, {"bsp", true}, {"asp", true}}) {
    CAPTURE(protocol);
    CAPTURE(link);
    syncpoint::testing::temp_folder dir(std::string("syncpoint_rereplicate_") + protocol + (link ? "_link" : ""));
    auto cfg = replicated(protocol, 1);
    cfg.internals.fail_shard = "1";
    cfg.epochs = 1;
    if (link) {
      cfg.ps_bandwidth = 2e6;
      cfg.latency_ms = 0.2;
    }
    auto plain = train(cfg);
    REQUIRE(plain.summary.copies_made.size() == 1);
    cfg.checkpoint_every_s = plain.summary.run_time_s / 5;
    cfg.checkpoint_dir = (dir.path / "all").string();
    cfg.checkpoint_keep = 0;
    auto whole = train(cfg);
    same_run(whole, plain);
    // Every checkpoint after the copy was made: shard 1's copy 1 serves, its copy 0 is the new replica.
    size_t after = 0, pulls_out = 0;
    for (auto& file : checkpoint_files(dir.path / "all")) {
      auto s = read_checkpoint(file.string(), {checkpoint_format, cfg.model, plain.final_model.values.size(),
                                               cfg.protocol}).state;
      if (s.coordinator.serving != std::vector<uint32_t>{0, 1})
        continue;
      CAPTURE(file);
      ++after;
      CHECK(s.coordinator.copy_lost == std::vector<bool>(4, false));  // made again: none lost
      for (auto& l : s.ps.copy_links)
        pulls_out += l.waiting_pulls.size() +
                     static_cast<size_t>(std::count_if(l.in_transit.begin(), l.in_transit.end(),
                                                       [](const saved_transfer& t) { return !t.is_push; }));
      auto resumed = train(resuming_from(cfg, file, dir.path / ("from_" + file.stem().string())));
      same_run(resumed, whole);
    }
    CHECK(after >= 2);
    if (link && std::string(protocol) == "asp")  // pulls the serving copy's link carried come back on it
      CHECK(pulls_out > 0);
  }
}

TEST_CASE("rereplicate: needs replicas") {
  auto cfg = syncpoint::testing::small_job("bsp");
  cfg.ps_rereplicate = true;
  try {
    train(cfg);
    FAIL("--ps-rereplicate ran without replicas");
  } catch (const config_error& e) {
    CHECK(std::string(e.what()) == "--ps-rereplicate needs --ps-replicas 1 or 2");
  }
}
