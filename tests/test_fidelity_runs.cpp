// The stages of bench/fidelity.sh (bench/fidelity_runs.hpp): the runs a claim
// asks for become a sweep file that `syncpoint sweep` reads back as exactly
// those runs; a finished run is found by its options in any order; a stage
// with a cell not finished is offered again before any new stage; a run a
// finished stage did not store is refused, not planned forever; runs of
// another build are removed.
#include "bench/fidelity_runs.hpp"
#include "cli/sweep_spec.hpp"
#include "runtime/studies/sweep.hpp"
#include "tests/helpers.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace syncpoint;
using bench::fidelity_runs;
using bench::pending;
using bench::run_request;
using bench::train_args;
using syncpoint::testing::temp_folder;

namespace fs = std::filesystem;

namespace {

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

run_request request(const std::string& part, const std::string& protocol, const std::string& cap = "") {
  train_args a;
  a.set("workers", "4").set("straggler", "1:x2;3:x3").set("protocol", protocol).set("seed", "1");
  if (!cap.empty())
    a.set("max-time", cap);
  return {part, a};
}

// Writes cell `c` of the sweep in DIR as finished, its run time `t`.
void finish(const std::string& dir, const sweep_cell& c, double t) {
  auto folder = dir + "/cells/" + c.folder;
  fs::create_directories(folder);
  run_summary s;
  s.protocol = "x";
  s.run_time_s = t;
  std::ofstream(folder + "/summary.json") << to_json(s);
}

}  // namespace

TEST_CASE("fidelity runs: the runs a claim misses become the next stage's sweep, read back by options in any order") {
  temp_folder dir("syncpoint_fidelity_runs");
  auto root = dir.path.string();
  std::vector<run_request> asked{request("wbsp s1", "bsp"), request("wbsp s1", "asp"),
                                 request("wbsp s1 capped", "ssp", "2.5")};
  {
    fidelity_runs runs(root);
    CHECK_THROWS_AS(runs.need(asked), pending);
    runs.want({asked[0]});  // asked twice: noted once
    REQUIRE(runs.missing().size() == 3);
    CHECK(runs.unfinished_stage().empty());
    CHECK(runs.write_next_stage("a test\nstage") == root + "/stage-1.toml");
  }
  // `syncpoint sweep` reads the file as the runs asked: two parts, the protocols an axis.
  auto req = cli::parse_sweep_args({root + "/stage-1.toml"});
  REQUIRE(req.grid.parts.size() == 2);
  CHECK(req.grid.parts[0].name == "wbsp s1");
  auto cells = cells_of(req.grid);
  REQUIRE(cells.size() == 3);
  for (size_t i = 0; i < cells.size(); ++i)
    CHECK(sorted(cells[i].args) == sorted(asked[i].args.text()));
  CHECK(cells[0].name == "wbsp s1: protocol=bsp");

  // Two of three finished: the stage is offered again, and nothing new is planned.
  auto stage = root + "/stage-1";
  claim_sweep_dir(stage, req.grid);
  finish(stage, cells[0], 1.5);
  finish(stage, cells[2], 2.5);
  {
    fidelity_runs runs(root);
    CHECK(runs.unfinished_stage() == root + "/stage-1.toml");
    CHECK_THROWS_AS(runs.need(asked[1]), pending);
  }
  finish(stage, cells[1], 0.75);
  fidelity_runs runs(root);
  CHECK(runs.unfinished_stage().empty());
  // The same run asked with its options in another order is found.
  train_args reordered;
  for (auto it = asked[2].args.items.rbegin(); it != asked[2].args.items.rend(); ++it)
    reordered.set(it->first, it->second);
  auto got = runs.need({asked[0], asked[1], {"elsewhere", reordered}});
  CHECK(got[0].run_time_s == 1.5);
  CHECK(got[1].run_time_s == 0.75);
  CHECK(got[2].run_time_s == 2.5);
  CHECK(runs.missing().empty());
  // A run whose cap changed is a new run, and stage 2 holds it alone.
  CHECK_THROWS_AS(runs.need(request("wbsp s1 capped", "ssp", "2.75")), pending);
  CHECK(runs.write_next_stage("") == root + "/stage-2.toml");
  auto next = cells_of(cli::parse_sweep_args({root + "/stage-2.toml"}).grid);
  REQUIRE(next.size() == 1);
  CHECK(sorted(next[0].args) == sorted(request("wbsp s1 capped", "ssp", "2.75").args.text()));
}

TEST_CASE("fidelity runs: a stage that finished without its runs is not planned again, and runs of another build are removed") {
  temp_folder dir("syncpoint_fidelity_loop");
  auto root = dir.path.string();
  auto run = request("r2sp s1", "bsp");
  {
    fidelity_runs runs(root);
    runs.want({run});
    runs.write_next_stage("");
  }
  // Its sweep ran with an option added to every cell: the cell is not the run asked for.
  auto grid = cli::parse_sweep_args({root + "/stage-1.toml"}).grid;
  grid.base.push_back("--threads=2");
  claim_sweep_dir(root + "/stage-1", grid);
  finish(root + "/stage-1", cells_of(grid)[0], 1);
  fidelity_runs runs(root);
  CHECK(runs.unfinished_stage().empty());
  CHECK_THROWS_AS(runs.need(run), pending);
  CHECK_THROWS_WITH_AS(runs.write_next_stage(""), doctest::Contains("'r2sp s1' was planned in a stage"), std::runtime_error);
  CHECK_FALSE(fs::exists(root + "/stage-2.toml"));

  CHECK(bench::keep_runs_of(root, "build a"));  // no build noted: the stages go
  CHECK_FALSE(fs::exists(root + "/stage-1.toml"));
  CHECK_FALSE(fs::exists(root + "/stage-1"));
  CHECK(bench::runs_build(root) == "build a");
  std::ofstream(root + "/stage-1.toml") << "";
  CHECK_FALSE(bench::keep_runs_of(root, "build a"));
  CHECK(fs::exists(root + "/stage-1.toml"));
  CHECK(bench::keep_runs_of(root, "build b"));
  CHECK_FALSE(fs::exists(root + "/stage-1.toml"));
  CHECK(bench::build_fingerprint().size() == 16);
}
