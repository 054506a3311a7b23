// A sharded parameter server: K shards give the same run as one PS, a bad
// slice is refused by its shard, and a checkpoint resumes with any K.
#include "actors/parameter_server.hpp"
#include "core/ps_group.hpp"
#include "runtime/records/checkpoint_file.hpp"
#include <syncpoint/train.hpp>
#include "tests/helpers.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <unistd.h>

using namespace syncpoint;
using namespace std::chrono_literals;
using syncpoint::testing::checkpoint_files;
using syncpoint::testing::resuming_from;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> protocols() { return syncpoint::testing::builtin_protocols(); }

// Every protocol's decisions matter: a 4x straggler, evaluations, and momentum.
job_config straggling(const std::string& protocol, int shards) {
  auto cfg = syncpoint::testing::small_job(protocol);
  cfg.straggler = "3:x4";
  cfg.eval_every = 0.5;
  cfg.momentum = 0.5;
  cfg.ps_shards = shards;
  return cfg;
}

struct folder : syncpoint::testing::temp_folder {
  explicit folder(const std::string& name) : temp_folder("syncpoint_shards_" + name) {}
};

}  // namespace

TEST_CASE("shards: without a link model, 3 shards end each protocol's run with the same model and accuracy as "
          "one PS, byte for byte") {
  for (auto& protocol : protocols()) {
    // elastic-bsp included: its decisions depend on the order of pushes at one
    // instant, which the virtual clock fixes by receiver, not by the order the
    // shards' relays set the timers in (runtime/job/virtual_time.hpp).
    CAPTURE(protocol);
    auto one = train(straggling(protocol, 1));
    auto three = train(straggling(protocol, 3));
    CHECK(three.final_model.version == one.final_model.version);
    CHECK(three.final_model.values == one.final_model.values);
    CHECK(three.summary.final_accuracy == one.summary.final_accuracy);  // exact: the same model
    CHECK(three.summary.samples == one.summary.samples);
    // Each push is counted once, not once per shard.
    CHECK(three.summary.samples_per_s == one.summary.samples_per_s);
  }
}

TEST_CASE("shards: with adamw, a cosine schedule and clipping, 3 shards end each protocol's run as one PS, byte for byte") {
  for (auto& protocol : protocols()) {
    CAPTURE(protocol);
    auto adamw = [&](int shards) {
      auto cfg = straggling(protocol, shards);
      cfg.optimizer = "adamw";
      cfg.lr = 0.01;
      cfg.weight_decay = 0.01;
      cfg.lr_schedule = "cosine";
      cfg.warmup = "0.1";
      cfg.clip_norm = 1;
      return cfg;
    };
    auto one = train(adamw(1));
    auto three = train(adamw(3));
    CHECK(three.final_model.version == one.final_model.version);
    CHECK(three.final_model.values == one.final_model.values);
    CHECK(three.summary.final_accuracy == one.summary.final_accuracy);
  }
}

TEST_CASE("shards: the ranges are contiguous, cover the model, and start on 64-byte boundaries") {
  auto b = ps_group::even_bounds(203530, 3);
  REQUIRE(b.size() == 4);
  CHECK(b.front() == 0);
  CHECK(b.back() == 203530);
  for (size_t k = 1; k < 3; ++k) {
    CHECK(b[k] % 16 == 0);
    CHECK(b[k] > b[k - 1]);
  }
  CHECK(ps_group::even_bounds(5, 1) == std::vector<uint64_t>{0, 5});
}

TEST_CASE("shards: a wrong slice length and a NaN slice are refused by their shard, which stays as it was") {
  caf::actor_system_config cfg;
  register_messages(cfg);
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  // Shard 1 of 2 over a model of 5 values: it holds values 3..4.
  ps_config c{{4.0f, 5.0f}, 0.1, 0.0, 0.0, 2, tracer_actor{}, sys.clock().now()};
  c.shard = 1;
  c.shards = 2;
  c.offset = 3;
  c.model_size = 5;
  auto shard = spawn_parameter_server(sys, c);
  auto push = [&](std::vector<float> g) {
    caf::error result;
    self->request(shard, 5s, push_atom::value, gradient_push{0, 1, 0, 8, std::move(g)})
      .receive([](const proceed&) {}, [&](caf::error& e) { result = std::move(e); });
    return result;
  };
  auto pull = [&] {
    weights out;
    self->request(shard, 5s, pull_atom::value, uint64_t{0})
      .receive([&](weights& w) { out = std::move(w); }, [&](caf::error& e) { FAIL(sys.render(e)); });
    return out;
  };
  auto before = pull();
  auto wrong = push({1, 1, 1, 1, 1});  // the whole model's gradient, not its slice
  CHECK(wrong.code() == static_cast<uint8_t>(sp_error::wrong_size));
  CHECK(sys.render(wrong).find("slice from worker 0 to shard 1 of the parameter server has 5 values, the shard "
                               "holds 2 (values 3..4 of the model)") != std::string::npos);
  auto nan = push({1, std::nanf("")});
  CHECK(nan.code() == static_cast<uint8_t>(sp_error::non_finite));
  CHECK(sys.render(nan).find("shard 1") != std::string::npos);
  auto after = pull();
  CHECK(after.version == before.version);
  CHECK(after.values == before.values);
  REQUIRE(!push({1, 1}));  // a good slice still applies
  CHECK(pull().version == before.version + 1);
  self->send_exit(shard, caf::exit_reason::user_shutdown);
}

TEST_CASE("shards: a checkpoint taken with 3 shards resumes with 1, 2 or 3, and ends as the run never stopped") {
  for (const char* protocol : {"bsp", "ssp", "asp"}) {
    CAPTURE(protocol);
    folder dir(protocol);
    auto cfg = straggling(protocol, 3);
    auto plain = train(cfg);
    cfg.checkpoint_every_s = plain.summary.run_time_s / 4;
    cfg.checkpoint_dir = (dir.path / "all").string();
    cfg.checkpoint_keep = 0;
    auto whole = train(cfg);
    CHECK(whole.final_model.values == plain.final_model.values);
    auto files = checkpoint_files(dir.path / "all");
    REQUIRE(files.size() >= 2);
    auto file = files[files.size() / 2];
    for (int k : {1, 2, 3}) {
      CAPTURE(k);
      auto again = resuming_from(cfg, file, dir.path / ("from_" + std::to_string(k)));
      again.ps_shards = k;
      auto resumed = train(again);
      CHECK(resumed.final_model.version == whole.final_model.version);
      CHECK(resumed.final_model.values == whole.final_model.values);
      CHECK(resumed.summary.final_accuracy == whole.summary.final_accuracy);
    }
  }
}

TEST_CASE("shards: a checkpoint with transfers in flight on the links of 3 shards, a worker holding some slices of "
          "a pull, resumes with 3 and ends as the run never stopped, and with another K is refused, naming why") {
  for (const char* protocol : {"ssp", "bsp", "r2sp"}) {
    CAPTURE(protocol);
    folder dir(std::string("links_") + protocol);
    auto cfg = straggling(protocol, 3);
    cfg.ps_bandwidth = 2e6;  // slow links: transfers are in flight at every checkpoint
    cfg.latency_ms = 0.2;
    cfg.epochs = 0.5;
    auto plain = train(cfg);
    // The slices of a pull cross their links at nearly the same time (the
    // shards differ by a few values: microseconds), and a checkpoint falls at
    // a step of the clock. So the checkpoint's period is aimed: a little
    // before the end of a pull, until one holds a worker with some slices in.
    checkpoint_header head{checkpoint_format, cfg.model, plain.final_model.values.size(), protocol};
    auto half_in = [&](const fs::path& file) {
      for (auto& w : read_checkpoint(file.string(), head).state.workers)
        if (w.pulling && std::count(w.slices_in.begin(), w.slices_in.end(), true) > 0 &&
            std::count(w.slices_in.begin(), w.slices_in.end(), false) > 0)
          return true;
      return false;
    };
    std::vector<double> pull_ends;
    for (auto& e : plain.trace)
      if (e.kind == "pull" && e.t1 > e.t0)
        pull_ends.push_back(to_seconds(e.t1));
    std::optional<fs::path> partial;
    run_result whole;
    for (size_t p = pull_ends.size() / 2; p < pull_ends.size() && !partial; ++p)
      for (double before : {2e-6, 5e-6, 10e-6, 20e-6}) {
        fs::remove_all(dir.path / "all");
        cfg.checkpoint_every_s = pull_ends[p] - before;
        cfg.checkpoint_dir = (dir.path / "all").string();
        cfg.checkpoint_keep = 0;
        whole = train(cfg);
        auto first = dir.path / "all" / "none";
        for (auto& e : fs::directory_iterator(dir.path / "all"))
          if (first.filename() == "none" || e.path() < first)
            first = e.path();
        if (first.filename() != "none" && half_in(first)) {
          partial = first;
          break;
        }
      }
    REQUIRE_MESSAGE(partial, "no checkpoint caught a pull half in: the test does not test what it says");
    CHECK(whole.final_model.values == plain.final_model.values);
    auto again = resuming_from(cfg, *partial, dir.path / "from");
    auto resumed = train(again);
    CHECK(resumed.final_model.version == whole.final_model.version);
    CHECK(resumed.final_model.values == whole.final_model.values);
    CHECK(resumed.summary.samples == whole.summary.samples);
    CHECK(resumed.summary.run_time_s == whole.summary.run_time_s);
    again.ps_shards = 1;
    CHECK_THROWS_WITH_AS(train(again), doctest::Contains("resume it with --ps-shards 3 (not 1)"), config_error);
  }
}

TEST_CASE("shards: on the real clock, 3 shards train every kind of round to the same accuracy as one PS" *
          doctest::test_suite("real-clock")) {
  // bsp: buffered rounds; asp: pushes applied on arrival at each shard in its
  // own order; ssp: gated pulls. Each push counts once: the budget's samples.
  for (const char* protocol : {"bsp", "asp", "ssp"}) {
    CAPTURE(protocol);
    auto cfg = syncpoint::testing::small_job(protocol);
    cfg.clock = clock_kind::real;
    cfg.workers = 3;
    cfg.epochs = 1;
    cfg.ps_shards = 3;
    auto sharded = train(cfg);
    cfg.ps_shards = 1;
    auto single = train(cfg);
    CHECK(sharded.summary.samples >= 4000);
    CHECK(sharded.summary.samples < 4000 + 3 * 64);  // counted once per push, not once per shard
    CHECK(sharded.summary.final_accuracy > 0.8);
    CHECK(sharded.summary.final_accuracy == doctest::Approx(single.summary.final_accuracy).epsilon(0.05));
    CHECK(sharded.failures.empty());
  }
}

TEST_CASE("shards: with a link model each shard has a link of --ps-bandwidth carrying its slice: the same bytes "
          "cross, spread over the links") {
  for (double wire : {0.0, 1e5}) {  // charged by size, or a fixed size per transfer (simulate's)
    CAPTURE(wire);
    auto cfg = straggling("bsp", 1);
    cfg.straggler = "";
    cfg.ps_bandwidth = 2e6;  // the links are the bottleneck: 4 x 2 transfers of ~31 KB per round
    cfg.internals.wire_bytes = wire;
    auto one = train(cfg);
    cfg.ps_shards = 2;
    auto two = train(cfg);
    CHECK(two.summary.samples == one.summary.samples);
    // Each transfer's bytes split between two links: their busy times add up to one link's.
    CHECK(two.summary.link_busy_s == doctest::Approx(one.summary.link_busy_s).epsilon(0.01));
    CHECK(two.summary.run_time_s < 0.75 * one.summary.run_time_s);
    CHECK(one.summary.link_utilization > 0.5);
    CHECK(one.summary.link_utilization <= 1.0 + 1e-9);  // saturated: busy all the run
    CHECK(two.summary.link_utilization <= 1.0 + 1e-9);  // the links' mean, not their sum
    CHECK(two.summary.link_utilization > 0.5);
  }
}
