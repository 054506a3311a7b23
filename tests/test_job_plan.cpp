// The job plan (runtime/job/job_plan.hpp): what a job's options become once, and
// the only place that reads --ps-shards and --lr-schedule besides the CLI.
#include "runtime/job/job_plan.hpp"
#include "runtime/cluster/wire/interfaces.hpp"  // the plan crosses to the nodes
#include "tests/helpers.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

using namespace syncpoint;

namespace {

job_config options() {
  job_config cfg;
  cfg.workers = 4;
  cfg.batch = 64;
  cfg.epochs = 2;
  return cfg;
}

}  // namespace

TEST_CASE("job plan: --ps-shards 0 means one shard per host, by one rule, and the count is clamped to 1..64") {
  auto cfg = options();
  cfg.ps_shards = 0;
  CHECK(make_plan(cfg, {6000, 1000, 0, 1}).shards() == 1);  // one process, or --ps-placement head
  auto on_three = make_plan(cfg, {6000, 1000, 0, 3});        // --ps-placement nodes over 3 nodes
  CHECK(on_three.shards() == 3);
  CHECK(on_three.shard_hosts == std::vector<int32_t>{0, 1, 2});
  CHECK(make_plan(cfg, {6000, 1000, 0, 0}).shards() == 1);   // no host known yet: one
  CHECK(make_plan(cfg, {6000, 1000, 0, 100}).shards() == 64);
  cfg.ps_shards = 5;  // given: the hosts take them in turn
  auto five = make_plan(cfg, {6000, 1000, 0, 2});
  CHECK(five.shards() == 5);
  CHECK(five.shard_hosts == std::vector<int32_t>{0, 1, 0, 1, 0});
  CHECK(five.bounds.front() == 0);
  CHECK(five.bounds.back() == 1000);
  CHECK(std::is_sorted(five.bounds.begin(), five.bounds.end()));
}

TEST_CASE("job plan: the limits, the budget and the rate are resolved once") {
  auto cfg = options();
  cfg.epochs = 0;  // no limit: one epoch
  auto plan = make_plan(cfg, {6000, 1000});
  CHECK(plan.cfg.epochs == 1);
  CHECK(plan.sample_budget == 6000);
  CHECK(plan.eval_every_samples == 1500);  // --eval-every 0.25 epochs
  cfg.target_accuracy = 0.8;  // a target alone: stop at it, capped
  plan = make_plan(cfg, {6000, 1000});
  CHECK(plan.cfg.stop_at_target);
  CHECK(plan.cfg.epochs == target_only_epoch_cap);
  cfg = options();
  cfg.max_time_s = 30;
  cfg.epochs = 0;  // a time limit alone: no sample budget
  CHECK(make_plan(cfg, {6000, 1000}).sample_budget == 0);

  cfg = options();
  cfg.lr = 0.1;
  cfg.lr_scaling = "linear";  // 4 workers x 64 = 256: scale 1
  CHECK(make_plan(cfg, {6000, 1000}).lr == doctest::Approx(0.1));
  cfg.batch = 128;  // scale 2
  plan = make_plan(cfg, {6000, 1000});
  CHECK(plan.lr == doctest::Approx(0.2));
  CHECK(plan.lr_at(0) == plan.lr);  // a constant schedule is the rate
  CHECK(plan.lr_at(11999) == plan.lr);

  cfg = options();
  cfg.lr = 0.1;
  cfg.lr_schedule = "step";
  cfg.lr_milestones = {1};
  cfg.lr_gamma = 0.5;
  plan = make_plan(cfg, {6000, 1000});
  CHECK(plan.lr_at(5999) == doctest::Approx(0.1));
  CHECK(plan.lr_at(6000) == doctest::Approx(0.05));  // epoch 1 of 6000 examples
  CHECK(describe(plan.schedule) == "step 0.10000000000000001 x0.5 at 6000 samples");
}

TEST_CASE("job plan: a schedule the run's length cannot carry is refused by name") {
  auto cfg = options();
  cfg.epochs = 0;
  cfg.max_time_s = 10;
  cfg.lr_schedule = "cosine";
  CHECK_THROWS_WITH_AS(make_plan(cfg, {6000, 1000}),
                       "--lr-schedule cosine needs the run's length: give --epochs (or --lr-epochs)", config_error);
  cfg.lr_schedule = "sideways";
  CHECK_THROWS_AS(make_plan(cfg, {6000, 1000}), config_error);
}

TEST_CASE("job plan: it crosses a node boundary unchanged (what a node spawns its workers and shards from)") {
  auto cfg = options();
  cfg.protocol = "ssp";
  cfg.protocol_opts.set("staleness", 3);
  cfg.lr_schedule = "cosine";
  cfg.warmup = "0.1";
  cfg.ps_shards = 3;
  auto plan = make_plan(cfg, {6000, 1000, 10, 2});
  caf::actor_system_config sys_cfg;
  register_messages(sys_cfg);
  caf::actor_system sys{sys_cfg};
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE(!sink(plan));
  job_plan back;
  caf::binary_deserializer source{sys, buf};
  REQUIRE(!source(back));
  CHECK(back.cfg.protocol == "ssp");
  CHECK(back.protocol.values() == plan.protocol.values());
  CHECK(back.bounds == plan.bounds);
  CHECK(back.shard_hosts == plan.shard_hosts);
  CHECK(back.buffers == 10);
  CHECK(describe(back.schedule) == describe(plan.schedule));
  CHECK(back.lr_at(4321) == plan.lr_at(4321));
  CHECK(back.sample_budget == plan.sample_budget);
  CHECK(back.devices == std::vector<std::string>(4, "cpu"));
}

namespace {

// The files of the tree (not the public headers, where the options are
// declared, nor tests) whose code, comments left out, reads the option `field`:
// as a member (cfg.field, cfg->field), or as the table of fields names it (jc::field).
std::set<std::string> readers_of(const std::string& field) {
  std::set<std::string> out;
  std::regex name("(\\.|->|jc::)" + field + "\\b");
  auto root = std::filesystem::path(SYNCPOINT_SOURCE_DIR);
  for (auto dir : {"core", "models", "protocols", "actors", "runtime", "cli"})
    for (auto& e : std::filesystem::recursive_directory_iterator(root / dir)) {
      auto ext = e.path().extension();
      if (ext != ".cpp" && ext != ".hpp")
        continue;
      std::ifstream in(e.path());
      std::string line;
      while (std::getline(in, line)) {
        auto code = line.substr(0, line.find("//"));
        if (std::regex_search(code, name)) {
          out.insert(std::filesystem::relative(e.path(), root).generic_string());
          break;
        }
      }
    }
  return out;
}

}  // namespace

TEST_CASE("job plan: --ps-shards and --lr-schedule are read by the table of fields, the checks and the plan, nowhere else") {
  // The CLI, validate()'s ranges and run.json read them through the table of
  // fields (core/job_fields.cpp); runtime/job/job.cpp checks --fail-shard's
  // shards against it. Everything downstream (the head's placement, the nodes,
  // the shards' configs, the PS, the coordinator, checkpointing) reads the plan.
  CHECK(readers_of("ps_shards") ==
        std::set<std::string>{"core/job_fields.cpp", "runtime/job/job.cpp", "runtime/job/job_plan.cpp"});
  // core/optimizer.cpp: describe_options, the schedule in the options' words for a run's provenance.
  CHECK(readers_of("lr_schedule") == std::set<std::string>{"core/job_fields.cpp", "core/optimizer.cpp", "runtime/job/job_plan.cpp"});
}
