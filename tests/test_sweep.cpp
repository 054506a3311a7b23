// Sweeps (runtime/studies/sweep.hpp, cli/sweep_spec.hpp, `syncpoint sweep`): the
// grid's cells, its spec file, its folder, and real sweeps of `train`
// processes: the same summaries whatever the number of processes, a sweep
// killed mid-way that runs only what is missing, a failed cell reported.
#include "runtime/report/sweep_figures.hpp"
#include "runtime/report/sweep_page.hpp"
#include "cli/sweep_spec.hpp"
#include "runtime/report/comparison.hpp"
#include <syncpoint/job_config.hpp>
#include "runtime/studies/sweep.hpp"
#include "tests/helpers.hpp"
#include "bench/process.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>

using namespace syncpoint;
using syncpoint::testing::make_idx_pipes;
using syncpoint::testing::write_idx_files;
using syncpoint::testing::run_shell;
using syncpoint::testing::slurp;
using syncpoint::testing::temp_folder;

namespace fs = std::filesystem;

namespace {

std::vector<std::string> folders(const std::vector<sweep_cell>& cells) {
  std::vector<std::string> out;
  for (auto& c : cells)
    out.push_back(c.folder);
  return out;
}

const std::string fast = " --model softmax --dataset synthetic --train-limit 2000 --test-limit 300 --iter-cost 5"
                         " --epochs 1 --workers 4";

}  // namespace

TEST_CASE("sweep: the cells are every combination of the axes, the last fastest, in folders safe as paths") {
  sweep_grid g;
  g.base = {"--epochs=1"};
  g.axes = {{"protocol", {"bsp", "elastic-bsp"}}, {"straggler", {"3:x1.5", "1:x2;3:x3"}}, {"seed", {"1", "2"}}};
  auto cells = cells_of(g);
  REQUIRE(cells.size() == 8);
  CHECK(cells[0].name == "protocol=bsp straggler=3:x1.5 seed=1");
  CHECK(cells[1].name == "protocol=bsp straggler=3:x1.5 seed=2");
  CHECK(cells[2].name == "protocol=bsp straggler=1:x2;3:x3 seed=1");
  CHECK(cells[7].name == "protocol=elastic-bsp straggler=1:x2;3:x3 seed=2");
  CHECK(cells[2].args == std::vector<std::string>{"--epochs=1", "--protocol=bsp", "--straggler=1:x2;3:x3", "--seed=1"});
  CHECK(cells[2].folder == "0002_protocol=bsp_straggler=1_x2_3_x3_seed=1");
  CHECK(cells[5].values == std::vector<std::pair<std::string, std::string>>{
                             {"protocol", "elastic-bsp"}, {"straggler", "3:x1.5"}, {"seed", "2"}});
  auto f = folders(cells);
  CHECK(std::set<std::string>(f.begin(), f.end()).size() == 8);
  // A value with a slash stays one path component.
  CHECK(cells_of({{}, {{"data", {"/a/b"}}}})[0].folder == "0000_data=_a_b");
}

TEST_CASE("sweep: a grid with an axis unnamed, empty, repeated or with a value twice is refused by name") {
  auto refused = [](sweep_grid g, const std::string& words) {
    CHECK_THROWS_WITH_AS(cells_of(g), doctest::Contains(words.c_str()), config_error);
  };
  refused({{}, {{"protocol", {}}}}, "grid axis 'protocol' has no values");
  refused({{}, {{"", {"1"}}}}, "a grid axis has no name");
  refused({{}, {{"--lr", {"1"}}}}, "grid axis '--lr': name the option without '--'");
  refused({{}, {{"lr", {"0.1"}}, {"lr", {"0.2"}}}}, "grid axis 'lr' is given twice");
  refused({{}, {{"lr", {"0.1", "0.1"}}}}, "grid axis 'lr' gives the value '0.1' twice");
  refused({{}, {{"lr", {"0.1", ""}}}}, "grid axis 'lr' has an empty value");
}

TEST_CASE("sweep: values split at commas outside double quotes") {
  CHECK(split_values("bsp,asp") == std::vector<std::string>{"bsp", "asp"});
  CHECK(split_values("\"1,2\",\"2,3\"") == std::vector<std::string>{"1,2", "2,3"});
  CHECK(split_values("3:x1.5") == std::vector<std::string>{"3:x1.5"});
  CHECK(split_values("a,,b") == std::vector<std::string>{"a", "", "b"});  // an empty value: refused by the grid
  CHECK(split_values("").empty());
  CHECK_THROWS_WITH_AS(split_values("\"1,2"), doctest::Contains("unbalanced quote"), config_error);
}

TEST_CASE("sweep: a spec file gives the shared options and the axes in its own order, and the command line adds to it") {
  temp_folder dir("syncpoint_sweep_spec");
  fs::create_directories(dir.path);
  auto spec = (dir.path / "spec.toml").string();
  std::ofstream(spec) << "out = \"sweeps/one\"\nseeds = [1, 2]\njobs = 3\n"
                         "[train]\nmodel = \"mlp\"\nepochs = 2\nlr-milestones = [0.5, 1]\nprogress = false\n"
                         "[grid]\nstraggler = [\"3:x1.5\", \"3:x2\"]\nprotocol = [\"bsp\", \"elastic-bsp\"]\n"
                         "lr = [0.05, 0.1]\n";
  auto req = cli::parse_sweep_args({spec, "--grid", "workers=4,8", "--workers", "4", "--jobs", "2"});
  CHECK(req.out == "sweeps/one");
  CHECK(req.jobs == 2);  // the command line wins
  CHECK(req.grid.base ==
        std::vector<std::string>{"--model=mlp", "--epochs=2", "--lr-milestones=0.5,1", "--progress=false", "--workers", "4"});
  REQUIRE(req.grid.axes.size() == 5);
  CHECK(req.grid.axes[0].name == "straggler");  // the file's order, not alphabetical
  CHECK(req.grid.axes[1].name == "protocol");
  CHECK(req.grid.axes[2].values == std::vector<std::string>{"0.05", "0.1"});
  CHECK(req.grid.axes[3].name == "workers");
  CHECK(req.grid.axes[4].name == "seed");
  CHECK(req.grid.axes[4].values == std::vector<std::string>{"1", "2"});
  CHECK(cli::parse_sweep_args({spec}).jobs == 3);
  CHECK(cli::parse_sweep_args({spec, "--seeds=7"}).grid.axes.back().values == std::vector<std::string>{"7"});
}

TEST_CASE("sweep: a spec file of several parts runs each part's grid, names cells by part, and reports each part") {
  temp_folder dir("syncpoint_sweep_parts");
  fs::create_directories(dir.path);
  auto spec = (dir.path / "parts.toml").string();
  std::ofstream(spec) << "seeds = [1, 2]\n"
                         "[train]\ndataset = \"synthetic\"\nmodel = \"softmax\"\nepochs = 1\n"
                         "[[part]]\nname = \"two\"\n[part.train]\nworkers = 2\n[part.grid]\nprotocol = [\"bsp\", \"asp\"]\n"
                         "[[part]]\nname = \"link\"\n[part.train]\nworkers = 3\nps-bandwidth = \"50MB/s\"\n"
                         "[part.grid]\nprotocol = [\"bsp\", \"r2sp\", \"asp\"]\n";
  auto req = cli::parse_sweep_args({spec, "--out", (dir.path / "sw").string()});
  REQUIRE(req.grid.parts.size() == 2);
  CHECK(req.grid.parts[1].base == std::vector<std::string>{"--workers=3", "--ps-bandwidth=50MB/s"});
  auto cells = cells_of(req.grid);
  REQUIRE(cells.size() == 10);  // 2 x 2 seeds, then 3 x 2 seeds
  CHECK(cells[0].name == "two: protocol=bsp seed=1");
  CHECK(cells[0].folder == "0000_two_protocol=bsp_seed=1");
  CHECK(cells[4].name == "link: protocol=bsp seed=1");
  CHECK(cells[9].folder == "0009_link_protocol=asp_seed=2");
  CHECK(cells[9].args == std::vector<std::string>{"--dataset=synthetic", "--model=softmax", "--epochs=1", "--workers=3",
                                                  "--ps-bandwidth=50MB/s", "--protocol=asp", "--seed=2"});
  CHECK(grid_from_json(grid_json(req.grid), "x").parts.size() == 2);
  CHECK(grid_json(grid_from_json(grid_json(req.grid), "x")) == grid_json(req.grid));
  // A one-grid sweep keeps the file it always had (no "parts" key).
  CHECK(grid_json(sweep_grid{{"--epochs=1"}, {{"protocol", {"bsp", "asp"}}}, {}}) ==
        "{\"sweep\": 1, \"base\": [\"--epochs=1\"], \"axes\": [{\"name\": \"protocol\", \"values\": [\"bsp\", \"asp\"]}]}\n");
  auto twice = req.grid;
  twice.parts[1].name = "two";
  CHECK_THROWS_WITH_AS(cells_of(twice), doctest::Contains("two parts named 'two'"), config_error);
  auto empty_axis = req.grid;
  empty_axis.parts[0].axes[0].values.clear();
  CHECK_THROWS_WITH_AS(cells_of(empty_axis), doctest::Contains("part 'two': grid axis 'protocol' has no values"),
                       config_error);

  testing::process run({testing::syncpoint_binary(), "sweep", spec, "--out", (dir.path / "sw").string(), "--jobs", "2"},
                       dir.path.string(), "parts");
  REQUIRE_MESSAGE(run.wait(std::chrono::seconds(120)) == 0, run.err());
  auto md = slurp(dir.path / "sw" / "sweep.md");
  CHECK(md.find("## two\n") != std::string::npos);
  CHECK(md.find("## link\n") != std::string::npos);
  auto page = slurp(dir.path / "sw" / "index.html");
  CHECK(page.find("<h2>Part two</h2>") != std::string::npos);
  CHECK(page.find("<h2>Part link</h2>") != std::string::npos);
  CHECK(page.find("time to target / bsp") == std::string::npos);  // no target: final accuracy
  CHECK(fs::exists(dir.path / "sw" / "cells" / "0009_link_protocol=asp_seed=2" / "summary.json"));
  // Another set of parts in the same folder is refused.
  std::ofstream(spec, std::ios::app) << "[[part]]\nname = \"more\"\n[part.grid]\nprotocol = [\"ssp\"]\n";
  CHECK_THROWS_WITH_AS(claim_sweep_dir((dir.path / "sw").string(), cli::parse_sweep_args({spec}).grid),
                       doctest::Contains("the parts differ"), config_error);
  // The report rebuilds the page from the folder.
  auto again = run_shell(testing::syncpoint_binary() + " report " + (dir.path / "sw").string() + " 2>&1");
  CHECK_MESSAGE(again.status == 0, again.output);
  CHECK(slurp(dir.path / "sw" / "index.html") == page);
}

TEST_CASE("sweep: bad spec files and arguments are refused naming the file, line or option") {
  temp_folder dir("syncpoint_sweep_bad_spec");
  fs::create_directories(dir.path);
  auto refused = [&](const std::string& text, const std::string& words) {
    auto spec = (dir.path / "spec.toml").string();
    std::ofstream(spec) << text;
    CHECK_THROWS_WITH_AS(cli::parse_sweep_args({spec}), doctest::Contains(words.c_str()), config_error);
  };
  auto at = [&](int line) { return (dir.path / "spec.toml").string() + " line " + std::to_string(line); };
  refused("[grid\nprotocol = [\"bsp\"]\n", at(1));                          // malformed
  refused("colour = \"red\"\n[grid]\nlr = [0.1]\n", at(1) + ": unknown key 'colour'");
  refused("[grid]\nprotocol = []\n", at(2) + ": grid axis 'protocol' has no values");
  refused("grid = 3\n", at(1) + ": [grid] must be a table");
  refused("jobs = 0\n[grid]\nlr = [0.1]\n", at(1) + ": jobs must be a whole number from 1 to 1024");
  refused("[grid]\nlr = [{ a = 1 }]\n", at(2) + ": a value must be text");
  refused("[train]\nmodel = \"mlp\"\n", "no grid");
  CHECK_THROWS_WITH_AS(cli::parse_sweep_args({(dir.path / "missing.toml").string()}), doctest::Contains("no spec file"),
                       config_error);
  CHECK_THROWS_WITH_AS(cli::parse_sweep_args({"--grid", "protocol"}), doctest::Contains("give NAME=V1,V2"), config_error);
  CHECK_THROWS_WITH_AS(cli::parse_sweep_args({"--grid=lr=1", "--jobs", "0"}), doctest::Contains("--jobs must be"),
                       config_error);
  CHECK_THROWS_WITH_AS(cli::parse_sweep_args({"--grid", "lr=1", "--jobs"}), doctest::Contains("--jobs needs a value"),
                       config_error);
}

TEST_CASE("sweep: on a cluster, the head and token are the sweep's own options, and a node refuses cell options that write files") {
  auto req = cli::parse_sweep_args({"--grid", "protocol=bsp,asp", "--head", "127.0.0.1:4242", "--token-file", "t",
                                    "--tls", "--cert", "c.pem", "--key", "k.pem", "--ca", "ca.pem", "--epochs", "1"});
  CHECK(req.head == "127.0.0.1:4242");
  CHECK(req.token_file == "t");
  CHECK(req.tls);
  CHECK(req.tls_paths.ca == "ca.pem");
  CHECK(req.grid.base == std::vector<std::string>{"--epochs", "1"});  // never passed to the cells
  // --tls is the sweep's switch in every spelling, never a cell's (issue 42: --tls=false went to every cell).
  for (auto [arg, on] : std::vector<std::pair<std::string, bool>>{
         {"--tls=false", false}, {"--tls=off", false}, {"--tls=0", false}, {"--tls=true", true}, {"--tls=on", true}}) {
    CAPTURE(arg);
    auto r = cli::parse_sweep_args({"--grid", "protocol=bsp", "--head", "h:1", arg, "--epochs", "1"});
    CHECK(r.tls == on);
    CHECK(r.grid.base == std::vector<std::string>{"--epochs", "1"});
  }
  CHECK_THROWS_WITH_AS(cli::parse_sweep_args({"--grid", "protocol=bsp", "--head", "h:1", "--tls=maybe"}),
                       doctest::Contains("--tls takes true or false, not 'maybe'"), config_error);
  CHECK_THROWS_WITH_AS(cli::parse_sweep_args({"--grid", "protocol=bsp", "--head", "h:1", "--jobs", "2"}),
                       doctest::Contains("--jobs is for a sweep on this machine"), config_error);
  CHECK_THROWS_WITH_AS(cli::parse_sweep_args({"--grid", "protocol=bsp", "--token", "x"}),
                       doctest::Contains("give --head HOST:PORT"), config_error);
  CHECK(cell_args_refusal({"--epochs", "1", "--clock=virtual", "--seed=3"}).empty());
  CHECK(cell_args_refusal({"--clock", "virtual"}).empty());
  for (auto args : std::vector<std::vector<std::string>>{{"--out", "x"}, {"--out=x"}, {"--resume=d"},
                                                         {"--checkpoint-dir", "d"}, {"--save-model=m"},
                                                         {"--policy-out", "p"}, {"--clock=real"}, {"--clock", "real"},
                                                         {"--config-file=/etc/x.conf"}}) {
    CAPTURE(args.front());
    auto why = cell_args_refusal(args);
    CHECK(why.find("may not give " + args.front().substr(0, args.front().find('='))) != std::string::npos);
  }
  CHECK(is_cell_file("trace.jsonl"));
  CHECK(!is_cell_file("../trace.jsonl"));
}

TEST_CASE("sweep: the folder keeps its grid, and one of another grid, or a folder of something else, is refused") {
  temp_folder dir("syncpoint_sweep_dir");
  sweep_grid g{{"--epochs=1"}, {{"protocol", {"bsp", "asp"}}}};
  CHECK(grid_from_json(grid_json(g), "x").axes[0].values == g.axes[0].values);
  CHECK(grid_from_json(grid_json(g), "x").base == g.base);
  auto d = (dir.path / "s").string();
  claim_sweep_dir(d, g);
  CHECK(fs::is_directory(d + "/cells"));
  claim_sweep_dir(d, g);  // the same grid again: taken up where it was
  sweep_grid other{{"--epochs=1"}, {{"protocol", {"bsp", "ssp"}}}};
  CHECK_THROWS_WITH_AS(claim_sweep_dir(d, other), doctest::Contains((d + " holds a sweep of another grid (the axes differ)").c_str()),
                       config_error);
  sweep_grid base{{"--epochs=2"}, {{"protocol", {"bsp", "asp"}}}};
  CHECK_THROWS_WITH_AS(claim_sweep_dir(d, base), doctest::Contains("the options every cell shares differ"), config_error);
  fs::create_directories(dir.path / "busy");
  std::ofstream(dir.path / "busy" / "notes.txt") << "mine";
  CHECK_THROWS_WITH_AS(claim_sweep_dir((dir.path / "busy").string(), g), doctest::Contains("is not empty and holds no sweep.json"),
                       config_error);
  std::ofstream(dir.path / "busy" / "sweep.json") << "{\"not\": \"a sweep\"}";
  CHECK_THROWS_WITH_AS(claim_sweep_dir((dir.path / "busy").string(), g), doctest::Contains("not a sweep file"), config_error);
}

TEST_CASE("sweep: figures over cells: relative to the first protocol by seed, mean and range, cells without a value counted") {
  report::sweep_result r;
  r.grid = {{}, {{"protocol", {"bsp", "asp"}}, {"straggler", {"3:x2", "3:x4"}}, {"seed", {"1", "2"}}}};
  r.cells = cells_of(r.grid);
  // time to target by cell (-1: not reached), in the grid's order.
  std::vector<double> ttt{2, 4, 6, 8, 1, 3, 3, -1};
  for (size_t i = 0; i < r.cells.size(); ++i) {
    run_summary s;
    s.target_accuracy = 0.8;
    s.time_to_target_s = ttt[i];
    s.final_accuracy = 0.8 + 0.01 * static_cast<double>(i);
    s.samples_per_s = 100 * static_cast<double>(i + 1);
    r.summaries.push_back(s);
  }
  CHECK(report::default_figure(r) == report::sweep_figure::relative_time_to_target);
  CHECK(report::figure_words(r, report::sweep_figure::relative_time_to_target) == "time to target / bsp's");
  using F = report::sweep_figure;
  // asp, 3:x2: seeds 1 and 2 against bsp's: 1/2 and 3/4.
  CHECK(*report::figure_of(r, 4, F::relative_time_to_target) == doctest::Approx(0.5));
  CHECK(*report::figure_of(r, 5, F::relative_time_to_target) == doctest::Approx(0.75));
  CHECK(!report::figure_of(r, 7, F::relative_time_to_target));  // never reached the target
  auto asp_x2 = report::aggregate(r, F::relative_time_to_target, {{"protocol", "asp"}, {"straggler", "3:x2"}});
  CHECK(asp_x2.n() == 2);
  CHECK(asp_x2.mean() == doctest::Approx(0.625));
  CHECK(asp_x2.lo() == doctest::Approx(0.5));
  CHECK(asp_x2.hi() == doctest::Approx(0.75));
  auto asp = report::aggregate(r, F::relative_time_to_target, {{"protocol", "asp"}});  // over straggler and seed
  CHECK(asp.n() == 3);
  CHECK(asp.missing == 1);
  CHECK(asp.mean() == doctest::Approx((0.5 + 0.75 + 0.5) / 3));
  auto acc = report::aggregate(r, F::final_accuracy, {{"straggler", "3:x4"}});
  CHECK(acc.n() == 4);
  CHECK(acc.mean() == doctest::Approx(0.8 + 0.01 * (2 + 3 + 6 + 7) / 4.0));
  r.summaries[0].reset();  // a cell not finished: no value for it, nor for asp's relative figure at its seed
  CHECK(!report::figure_of(r, 0, F::final_accuracy));
  CHECK(!report::figure_of(r, 4, F::relative_time_to_target));

  CHECK(report::numeric_values({"straggler", {"3:x1.5", "3:x2", "3:x4"}}) == std::vector<double>{1.5, 2, 4});
  CHECK(report::numeric_values({"lr", {"0.05", "1e-1"}}) == std::vector<double>{0.05, 0.1});
  CHECK(report::numeric_values({"straggler", {"3:x2", "2:x4"}}).empty());  // other workers: not one number line
  CHECK(report::numeric_values({"ps-bandwidth", {"20MB/s", "1Gbit/s"}}) == std::vector<double>{20e6, 125e6});
  CHECK(report::numeric_values({"ps-bandwidth", {"20MB/s", "fast"}}).empty());
  CHECK(report::numeric_values({"protocol", {"bsp", "asp"}}).empty());
  CHECK(report::parse_figure("final-accuracy") == F::final_accuracy);
  CHECK_THROWS_WITH_AS(report::parse_figure("speed"), doctest::Contains("unknown figure 'speed'"), config_error);
}

TEST_SUITE_BEGIN("process");

TEST_CASE("sweep: a 2x2x2 grid gives the same summaries, byte for byte, with one process or two") {
  temp_folder dir("syncpoint_sweep_jobs");
  std::string grid = std::string(SYNCPOINT_CLI) + " sweep --grid protocol=bsp,asp --grid straggler=3:x2,3:x4 --seeds 1,2 "
                     "--target-accuracy 0.9" + fast;
  auto one = run_shell(grid + " --jobs 1 --out " + (dir.path / "one").string());
  auto two = run_shell(grid + " --jobs 2 --out " + (dir.path / "two").string());
  REQUIRE_MESSAGE(one.status == 0, one.output);
  REQUIRE_MESSAGE(two.status == 0, two.output);
  CHECK(two.output.find("sweep: 8 cells, 2 at once") != std::string::npos);
  size_t compared = 0;
  for (auto& cell : fs::directory_iterator(dir.path / "one" / "cells")) {
    auto name = cell.path().filename();
    auto a = slurp(cell.path() / "summary.json"), b = slurp(dir.path / "two" / "cells" / name / "summary.json");
    REQUIRE(!a.empty());
    CHECK_MESSAGE(a == b, name);
    ++compared;
  }
  CHECK(compared == 8);
  // The table names every cell with its figures, and so does sweep.md.
  auto md = slurp(dir.path / "two" / "sweep.md");
  CHECK(md.find("| protocol | straggler | seed | final acc | to target s | run time s | samples/s |") != std::string::npos);
  CHECK(md.find("| asp | 3:x4 | 2 | 0.") != std::string::npos);
  // The sweep's page: a heatmap of protocol against straggler, a line chart
  // against the straggler factor (a band per protocol), and every cell.
  auto page = slurp(dir.path / "two" / "index.html");
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("<table class='heat' data-rows='protocol' data-cols='straggler'>") != std::string::npos);
  CHECK(page.find("<svg class='chart sweep-line' data-series='2'") != std::string::npos);
  size_t bands = 0;
  for (auto at = page.find("<polygon class='band'"); at != std::string::npos; at = page.find("<polygon class='band'", at + 1))
    ++bands;
  CHECK(bands == 2);
  auto sweep = report::load_sweep((dir.path / "two").string());
  auto asp_x4 = report::aggregate(sweep, report::sweep_figure::relative_time_to_target, {{"protocol", "asp"}, {"straggler", "3:x4"}});
  REQUIRE(asp_x4.n() == 2);
  CHECK(page.find(fmt("%.2f", asp_x4.mean()) + "×") != std::string::npos);
  // `syncpoint report DIR` rebuilds it byte for byte.
  fs::rename(dir.path / "two" / "index.html", dir.path / "two" / "first.html");
  auto rebuilt = run_shell(std::string(SYNCPOINT_CLI) + " report " + (dir.path / "two").string());
  REQUIRE_MESSAGE(rebuilt.status == 0, rebuilt.output);
  CHECK(slurp(dir.path / "two" / "index.html") == page);
  auto other = run_shell(std::string(SYNCPOINT_CLI) + " report " + (dir.path / "two").string() + " --figure nope");
  CHECK(other.status == 2);
  CHECK(other.output.find("unknown figure 'nope'") != std::string::npos);
  // A real browser lays it out: the heatmap's 4 squares, the chart with 2 lines and 2 bands.
  if (run_shell("command -v chromium").status == 0) {
    auto check = dir.path / "two" / "check.html";
    std::ofstream(check) << R"(<!doctype html><html><body><pre id='out'>pending</pre>
<iframe id='f' src='index.html' width='1250' height='900'></iframe><script>
document.getElementById('f').onload = function() {
  var d = this.contentDocument, lines = 0, bands = 0, squares = 0;
  d.querySelectorAll('svg.sweep-line polyline.series').forEach(function(p) { if (p.getTotalLength() > 100) lines++; });
  d.querySelectorAll('svg.sweep-line polygon.band').forEach(function(p) { var b = p.getBBox(); if (b.width > 100) bands++; });
  d.querySelectorAll('table.heat td').forEach(function(td) { if (td.getBoundingClientRect().width >= 60) squares++; });
  document.getElementById('out').textContent = 'lines=' + lines + ' bands=' + bands + ' squares=' + squares;
};
</script></body></html>)";
    auto r = run_shell("timeout 90 chromium --headless --no-sandbox --disable-gpu --allow-file-access-from-files "
                       "--virtual-time-budget=5000 --dump-dom file://" + check.string());
    REQUIRE_MESSAGE(r.status == 0, r.output);
    CHECK_MESSAGE(r.output.find("lines=2 bands=2 squares=4") != std::string::npos, r.output);
  } else {
    MESSAGE("chromium is not installed (apt-get install chromium): the browser check is skipped");
  }
  // Different seeds differ: the grid is not one run eight times.
  CHECK(slurp(dir.path / "one" / "cells" / "0000_protocol=bsp_straggler=3_x2_seed=1" / "summary.json") !=
        slurp(dir.path / "one" / "cells" / "0001_protocol=bsp_straggler=3_x2_seed=2" / "summary.json"));
}

TEST_CASE("sweep: killed mid-way and started again, it runs only the cells that were not finished") {
  // The third cell reads its data from named pipes that nobody writes: it
  // cannot finish on its own, so the sweep is mid-way for as long as the test
  // needs. Killed there, it is started again with the pipes replaced by files.
  temp_folder dir("syncpoint_sweep_resume");
  auto good = dir.path / "good", pipes = dir.path / "pipes";
  fs::create_directories(good);
  fs::create_directories(pipes);
  write_idx_files(good);
  make_idx_pipes(pipes);
  auto out = (dir.path / "sweep").string();
  std::vector<std::string> argv{testing::syncpoint_binary(), "sweep", "--grid", "data=" + good.string() + "," + pipes.string(),
                                "--seeds", "1,2", "--dataset", "idx", "--model", "softmax", "--iter-cost", "5",
                                "--epochs", "1", "--workers", "2", "--jobs", "1", "--out", out};
  std::vector<std::string> finished_before;
  {
    testing::process sweep(argv, dir.path.string(), "first");
    // Two cells finished. With one job at a time, the third (started now or
    // about to be) waits on the pipes and holds the fourth back: the sweep
    // stays at 2 of 4 until it is killed.
    REQUIRE_MESSAGE(sweep.wait_for("sweep: [2/4] data=" + good.string() + " seed=2 done", std::chrono::seconds(120), true),
                    sweep.err());
    for (auto& e : fs::directory_iterator(out + "/cells"))
      if (e.path().extension() != ".partial")
        finished_before.push_back(e.path().filename().string());
    sweep.signal(SIGKILL);
    CHECK(sweep.wait(std::chrono::seconds(30)) == 128 + SIGKILL);
  }
  REQUIRE(finished_before.size() == 2);
  auto stamp = [&](const std::string& name) { return fs::last_write_time(out + "/cells/" + name + "/summary.json"); };
  auto before = stamp(finished_before[0]);
  // The cell's own process died with the sweep: nothing holds the pipes open now.
  for (auto& f : fs::directory_iterator(pipes))
    fs::remove(f.path());
  write_idx_files(pipes);
  testing::process again(argv, dir.path.string(), "again");
  REQUIRE(again.wait(std::chrono::seconds(120)) == 0);
  CHECK_MESSAGE(again.err().find("sweep: 4 cells, 2 already finished") != std::string::npos, again.err());
  CHECK(again.err().find("seed=1 done") != std::string::npos);
  CHECK(again.err().find("[3/4]") != std::string::npos);
  CHECK(again.err().find("[1/4]") == std::string::npos);  // the finished two were not run again
  CHECK(stamp(finished_before[0]) == before);
  size_t finished = 0;
  for (auto& e : fs::directory_iterator(out + "/cells"))
    finished += e.path().extension() != ".partial" && fs::exists(e.path() / "summary.json");
  CHECK(finished == 4);
}

TEST_CASE("sweep: a cell that fails is reported with its error and the others go on, and bad grids exit 2") {
  temp_folder dir("syncpoint_sweep_fail");
  auto out = (dir.path / "s").string();
  // One worker that fails leaves no worker: that cell's run fails; with two, the other goes on.
  auto r = run_shell(std::string(SYNCPOINT_CLI) + " sweep --grid workers=1,2 --fail-worker 0@3 --jobs 1 --out " + out +
                     " --model softmax --dataset synthetic --train-limit 2000 --test-limit 300 --iter-cost 5 --epochs 1");
  CHECK_MESSAGE(r.status == 1, r.output);
  CHECK(r.output.find("| 1 | failed: syncpoint train: every worker was lost; the run failed |") != std::string::npos);
  CHECK(r.output.find("1 of 2 cells failed") != std::string::npos);
  CHECK(fs::exists(out + "/cells/0001_workers=2/summary.json"));
  CHECK(!fs::exists(out + "/cells/0000_workers=1"));
  CHECK(fs::exists(out + "/cells/0000_workers=1.partial/stderr.txt"));

  auto bad = [&](const std::string& args, const std::string& words) {
    auto b = run_shell(std::string(SYNCPOINT_CLI) + " sweep " + args);
    CHECK_MESSAGE(b.status == 2, b.output);
    CHECK_MESSAGE(b.output.find(words) != std::string::npos, b.output);
  };
  bad("--grid bogus=1,2 --out " + out + "x", "grid axis 'bogus' is not an option of train");
  bad("--grid protocol= --out " + out + "x", "grid axis 'protocol' has no values");
  bad("--grid lr=0.1,abc --out " + out + "x", "cell 'lr=abc': invalid value in '--lr=abc'");
  bad("--grid protocol=bsp,nope --out " + out + "x", "cell 'protocol=nope'");
  bad("--grid workers=2,3 --out " + out + fast, out + " holds a sweep of another grid");
  bad("--grid lr=0.1 --clock real --out " + out + "x", "sweep cells run on the virtual clock");
  bad("--grid lr=0.1 --resume x --out " + out + "x", "the sweep places each cell's files itself");
  CHECK(!fs::exists(out + "x"));  // nothing was made for a refused sweep
}

TEST_SUITE_END();
