// The `syncpoint` command as a user runs it; its refusals of bad input are
// tests/test_cli_refusals.cpp.
#include "tests/cli_run.hpp"
#include "tests/helpers.hpp"
#include "tests/small_job.hpp"  // checkpoint_files

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

using syncpoint::testing::slurp;
const auto& run = syncpoint::testing::run_cli;
const auto& fast = syncpoint::testing::fast_job;

}  // namespace

// Every case in this file starts the syncpoint command:
// scripts/soak-tests.sh runs this suite under load.
TEST_SUITE_BEGIN("process");

TEST_CASE("cli: train writes trace.jsonl and summary.json with the documented keys") {
  auto dir = std::filesystem::temp_directory_path() / "syncpoint_cli_train";
  std::filesystem::remove_all(dir);
  auto r = run("train --protocol ssp --staleness 2 --workers 3 --epochs 1 --target-accuracy 0.5"
               " --straggler 2:x3 --out " + dir.string() + fast);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(r.output.find("protocol ssp: 3 workers, virtual clock") != std::string::npos);
  std::ifstream in(dir / "summary.json");
  std::stringstream ss;
  ss << in.rdbuf();
  auto s = ss.str();
  for (auto key : {"\"protocol\": \"ssp\"", "\"workers\": 3", "\"clock\": \"virtual\"", "\"seed\": 1",
                   "\"run_time_s\"", "\"samples\"", "\"samples_per_s\"", "\"final_accuracy\"",
                   "\"target_accuracy\": 0.5", "\"time_to_target_s\"", "\"mean_compute_ratio\"",
                   "\"staleness_mean\"", "\"staleness_max\"", "\"barriers\"", "\"per_worker\"",
                   "\"iterations\"", "\"compute_s\"", "\"comm_s\"", "\"wait_s\"", "\"compute_ratio\""})
    CHECK_MESSAGE(s.find(key) != std::string::npos, key);
  std::ifstream trace(dir / "trace.jsonl");
  std::string line;
  int compute = 0, lines = 0;
  while (std::getline(trace, line)) {
    ++lines;
    CHECK(line.front() == '{');
    CHECK(line.back() == '}');
    compute += line.find("\"kind\": \"compute\"") != std::string::npos;
  }
  CHECK(compute > 10);
  CHECK(lines > compute);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: compare prints a table and writes a report") {
  auto dir = std::filesystem::temp_directory_path() / "syncpoint_cli_compare";
  std::filesystem::remove_all(dir);
  auto r = run("compare --protocols bsp,asp --epochs 1 --straggler 3:x4 --out " + dir.string() + fast);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(r.output.find("| bsp ") != std::string::npos);
  CHECK(r.output.find("| asp ") != std::string::npos);
  CHECK(std::filesystem::exists(dir / "bsp" / "summary.json"));
  CHECK(std::filesystem::exists(dir / "asp" / "trace.jsonl"));
  CHECK(std::filesystem::exists(dir / "index.html"));
  CHECK(std::filesystem::exists(dir / "comparison.md"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: compare takes protocols with values of their own: H, F and the compressor as axes") {
  auto dir = std::filesystem::temp_directory_path() / "syncpoint_cli_compare_variants";
  std::filesystem::remove_all(dir);
  auto r = run("compare --protocols 'bsp,diloco(H=4,inner-optimizer=sgd,inner-lr=0.1),"
               "diloco(H=4,inner-optimizer=sgd,inner-lr=0.1,compress=int4)' --epochs 2 --out " + dir.string() + fast);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  // Two rows of diloco, told apart by their labels: the compressor is in the second's.
  auto rows = [&](const std::string& label) {
    size_t n = 0;
    for (auto at = r.output.find(label); at != std::string::npos; at = r.output.find(label, at + 1))
      ++n;
    return n;
  };
  CHECK(rows("| diloco(H=4,inner-optimizer=sgd,inner-lr=0.1) ") == 2);
  CHECK(rows("| diloco(H=4,inner-optimizer=sgd,inner-lr=0.1) int4 ") == 1);
  auto folder = dir / "diloco-H4-inner-optimizersgd-inner-lr0.1-compressint4";
  REQUIRE(std::filesystem::exists(folder / "summary.json"));
  auto summary = syncpoint::testing::slurp((folder / "summary.json").string());
  CHECK(summary.find("\"compress\": \"int4\"") != std::string::npos);
  auto page = syncpoint::testing::slurp((dir / "index.html").string());
  CHECK(page.find("Communication and quality") != std::string::npos);
  std::filesystem::remove_all(dir);
  // train names its run the same way, so that a report of separate runs tells them apart.
  r = run("train --protocol diloco --local-steps 4 --inner-optimizer sgd --compress int4 --epochs 0.5 --out " +
          (dir / "one").string() + fast);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  auto one = syncpoint::testing::slurp((dir / "one" / "run.json").string());
  CHECK_MESSAGE(one.find("\"label\": \"diloco(H=4,inner-optimizer=sgd) int4\"") != std::string::npos, one);
  std::filesystem::remove_all(dir);
  auto bad = run("compare --protocols 'bsp,diloco(Q=3)' --epochs 1" + fast);
  CHECK(bad.status == 2);
  CHECK_MESSAGE(bad.output.find("diloco has no option 'Q'") != std::string::npos, bad.output);
  bad = run("compare --protocols 'bsp,diloco(H=4' --epochs 1" + fast);
  CHECK(bad.status == 2);
  CHECK_MESSAGE(bad.output.find("opens a parenthesis it does not close") != std::string::npos, bad.output);
}

TEST_CASE("cli: syncpoint zipline follows the PROTOCOLS.md contract") {
  auto dir = std::filesystem::temp_directory_path() / "syncpoint_cli_zipline";
  std::filesystem::create_directories(dir);
  auto write = [&](const char* name, const char* text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  auto good = write("good.csv", "5,10,20,30\n0,3,6,9\n1,7,14,21\n");
  auto r = run("zipline --input " + good + " --variant all --repeat 3");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  for (auto v : {"zipline", "zipline-opt", "zipline-opt-bs"})
    CHECK(r.output.find(std::string("{\"variant\": \"") + v +
                        "\", \"n\": 3, \"R\": 4, \"span\": 2, \"barrier\": 7, \"stops\": [0,2,1], \"micros\": ") !=
          std::string::npos);
  r = run("zipline --random 20,15 --seed 4");
  CHECK(r.status == 0);
  CHECK(r.output.find("\"variant\": \"zipline-opt-bs\", \"n\": 20, \"R\": 15") != std::string::npos);
  struct bad {
    const char* name;
    const char* text;
    const char* message;
  };
  for (auto b : {bad{"ragged.csv", "1,2,3\n4,5\n", ":2: 2 values, but line 1 has 3"},
                 bad{"word.csv", "1,2\n3,x\n", ":2: 'x' in column 2 is not a number"},
                 bad{"down.csv", "1,2\n3,2\n", ":2: not ascending at column 2 (2 after 3)"},
                 bad{"empty.csv", "", ":1: empty file"},
                 bad{"gap.csv", "1,2\n\n3,4\n", ":2: empty line between rows"},
                 bad{"cell.csv", "1,\n3,4\n", ":1: '' in column 2 is not a number"},
                 bad{"nan.csv", "1,nan\n3,4\n", ":1: 'nan' in column 2 is not a number"},
                 bad{"inf.csv", "1,2\ninf,4\n", ":2: 'inf' in column 1 is not a number"}}) {
    auto path = write(b.name, b.text);
    r = run("zipline --input " + path);
    CHECK_MESSAGE(r.status == 2, b.name);
    CHECK_MESSAGE(r.output == "syncpoint zipline: " + path + b.message + "\n", r.output);
  }
  r = run("zipline --input " + (dir / "missing.csv").string());
  CHECK(r.status == 2);
  CHECK(r.output.find("missing.csv: cannot open") != std::string::npos);
  r = run("zipline --random 5");
  CHECK(r.status == 2);
  CHECK(r.output.find("syncpoint zipline: --random '5' must be N,R with N, R >= 1 (and N*R <= 1e8)") != std::string::npos);
  r = run("zipline --random 5,5 --variant quick");
  CHECK(r.status == 2);
  CHECK(r.output.find("syncpoint zipline: unknown ZipLine variant 'quick' (valid: zipline, zipline-opt, "
                      "zipline-opt-bs, or all)") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: protocol options come from the registry: flags, --param, a config file, the listing") {
  auto r = run("protocols");
  CHECK(r.status == 0);
  CHECK(r.output.find("--staleness") != std::string::npos);
  CHECK(r.output.find("--zipline-variant") != std::string::npos);
  r = run("train --protocol ssp --staleness=-1" + fast);
  CHECK(r.status == 2);
  CHECK(r.output.find("invalid value in '--staleness=-1' (must be in 0..1e+09)") != std::string::npos);
  r = run("train --protocol elastic-bsp --param lookahead=0" + fast);
  CHECK(r.status == 2);
  CHECK(r.output.find("invalid value in '--lookahead=0'") != std::string::npos);
  auto dir = std::filesystem::temp_directory_path() / "syncpoint-cli-config";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "job.ini") << "[global]\nstaleness=6\n";
  r = run("compare --protocols ssp --epochs 0.2 --config-file=" + (dir / "job.ini").string() + fast);
  CHECK(r.status == 0);
  CHECK_MESSAGE(r.output.find("ssp(s=6)") != std::string::npos, r.output);
  r = run("compare --protocols ssp --epochs 0.2 -s 2" + fast);  // the short flag still works
  CHECK_MESSAGE(r.output.find("ssp(s=2)") != std::string::npos, r.output);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: a switch works bare, a flag takes true or false, and no option takes the next option as its value") {
  auto dir = std::filesystem::temp_directory_path() / ("syncpoint-cli-flags-" + std::to_string(getpid()));
  // --online is on/off: bare, it means on, and --workers is still read as an option.
  auto r = run("train --protocol sync-switch --online --workers 2 --epochs 0.2 --out " + (dir / "on").string() + fast);
  CHECK_MESSAGE(r.status == 0, r.output);
  auto on = syncpoint::testing::slurp(dir / "on/run.json");
  CHECK_MESSAGE(on.find("\"label\": \"sync-switch(online=on)\"") != std::string::npos, on);
  CHECK_MESSAGE(syncpoint::testing::slurp(dir / "on/summary.json").find("\"workers\": 2") != std::string::npos,
                syncpoint::testing::slurp(dir / "on/summary.json"));
  r = run("train --protocol sync-switch --online off -w 2 --epochs 0.2 --out " + (dir / "off").string() + fast);
  CHECK_MESSAGE(r.status == 0, r.output);
  auto off = syncpoint::testing::slurp(dir / "off/run.json");
  CHECK_MESSAGE(off.find("\"label\": \"sync-switch\"") != std::string::npos, off);  // the default
  // A boolean flag takes a following true or false, bare it means true.
  r = run("train --protocol asp --epochs 0.2 --progress false" + fast);
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.output.find("[asp] eval") == std::string::npos);
  // A missing value is refused naming the option and what it expects.
  const auto& refused = syncpoint::testing::check_refused;
  refused("train --lr --workers 2" + fast,
          "syncpoint train: option '--lr' needs a value (a number), not the option '--workers' after it");
  refused("train" + fast + " --workers", "syncpoint train: option '--workers' needs a value (an integer)");
  refused("train --protocol elastic-bsp" + fast + " --zipline-variant",
          "syncpoint train: option '--zipline-variant' needs a value (zipline, zipline-opt or zipline-opt-bs)");
  refused("train --protocol sync-switch --online maybe" + fast, "--online");
  refused("train --progress maybe" + fast, "unexpected argument 'maybe'");
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: --ps-bandwidth takes units and refuses a malformed rate") {
  auto r = run("train --ps-bandwidth 25XB/s" + fast);
  CHECK(r.status == 2);
  CHECK(r.output.find("invalid value in '--ps-bandwidth=25XB/s' (expected a rate such as 25MB/s") != std::string::npos);
  r = run("train --ps-bandwidth 1Gbit/s --epochs 0.1" + fast);
  CHECK_MESSAGE(r.status == 0, r.output);
}

TEST_CASE("cli: a virtual run without --iter-cost is reproducible from its command line, byte for byte") {
  auto dir = std::filesystem::temp_directory_path() / "syncpoint-cli-repro";
  std::filesystem::remove_all(dir);
  const std::string job = "train --protocol asp --model softmax --dataset synthetic --train-limit 2000 "
                          "--test-limit 300 --epochs 0.5 --straggler 1:x2 --progress=false";
  auto a = run(job + " --out " + (dir / "a").string());
  auto b = run(job + " --out " + (dir / "b").string());
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  auto ta = slurp(dir / "a" / "trace.jsonl");
  CHECK(ta.size() > 1000);
  CHECK(ta == slurp(dir / "b" / "trace.jsonl"));
  auto sa = slurp(dir / "a" / "summary.json");
  CHECK(sa == slurp(dir / "b" / "summary.json"));
  CHECK(sa.find("\"iter_cost_ms\": 0.075") != std::string::npos);  // softmax at batch 64
  CHECK(sa.find("\"iter_cost_source\": \"model table\"") != std::string::npos);
  auto m = run(job + " --iter-cost measure --out " + (dir / "m").string());
  CHECK(m.status == 0);
  CHECK(slurp(dir / "m" / "summary.json").find("\"iter_cost_source\": \"measured\"") != std::string::npos);
  auto bad = run(job + " --iter-cost fast");
  CHECK(bad.status == 2);
  CHECK(bad.output.find("invalid value in '--iter-cost=fast' (expected ms per iteration or 'measure')") != std::string::npos);
  std::filesystem::remove_all(dir);
}

namespace {

// A number from summary.json ("key": value); NaN if absent or null.
double json_number(const std::string& json, const std::string& key) {
  auto at = json.find("\"" + key + "\": ");
  if (at == std::string::npos)
    return std::nan("");
  auto text = json.c_str() + at + key.size() + 4;
  char* end = nullptr;
  double x = std::strtod(text, &end);
  return end == text ? std::nan("") : x;
}

}  // namespace

TEST_CASE("cli: compare stops every protocol at the target or at the shared time cap") {
  auto dir = std::filesystem::temp_directory_path() / "syncpoint_cli_compare_rule";
  std::filesystem::remove_all(dir);
  // ASP (no waiting for the 4x straggler) reaches 0.95 at about 0.04 s; BSP needs about 0.16 s.
  auto r = run("compare --protocols bsp,asp --straggler 3:x4 --max-time 0.1 --target-accuracy 0.95"
               " --eval-every 0.1 --out " + dir.string() + fast);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(r.output.find("every run stops at test accuracy 0.95 or at the time cap, 0.1 s (--max-time)") !=
        std::string::npos);
  auto asp = slurp(dir / "asp" / "summary.json");
  auto bsp = slurp(dir / "bsp" / "summary.json");
  // ASP stopped where it reached the target, at the first evaluation at or above it.
  double asp_target = json_number(asp, "time_to_target_s");
  REQUIRE(asp_target > 0);
  CHECK(asp_target < 0.1);
  CHECK(json_number(asp, "run_time_s") <= asp_target + 0.021);  // in-flight iterations end (4x: 20 ms)
  CHECK(json_number(asp, "final_accuracy") >= 0.95);
  // BSP ran on to the cap without reaching it.
  CHECK(bsp.find("\"time_to_target_s\": null") != std::string::npos);
  CHECK(json_number(bsp, "run_time_s") >= 0.1);
  CHECK(json_number(bsp, "run_time_s") < 0.1 + 0.021);  // at most one 4x iteration past it
  CHECK(r.output.find("acc@" + std::to_string(static_cast<long long>(
                        std::min(json_number(asp, "samples"), json_number(bsp, "samples"))))) !=
        std::string::npos);

  // Without --max-time the cap is the first protocol's run time for --epochs, and a target
  // nobody reaches lets every run go on to it.
  std::filesystem::remove_all(dir);
  r = run("compare --protocols bsp,asp --straggler 3:x4 --epochs 0.5 --target-accuracy 0.999 --out " +
          dir.string() + fast);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(r.output.find("(bsp's run time for 0.5 epochs at lr 0.05; --max-time sets it)") != std::string::npos);
  asp = slurp(dir / "asp" / "summary.json");
  bsp = slurp(dir / "bsp" / "summary.json");
  double cap = json_number(bsp, "run_time_s");
  CHECK(cap > 0);
  CHECK(json_number(asp, "run_time_s") == doctest::Approx(cap).epsilon(0.02));
  CHECK(json_number(asp, "samples") > 2 * json_number(bsp, "samples"));  // same time, more samples
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: compare --tune-lr runs every protocol at every lr and reports each at its best") {
  auto r = run("compare --protocols asp --tune-lr 0.001,0.05 --max-time 0.1 --target-accuracy 0.9" + fast);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(r.output.find("every protocol at every learning rate:") != std::string::npos);
  CHECK(r.output.find("| asp lr=0.001 ") != std::string::npos);
  CHECK(r.output.find("at the shared learning rate 0.05:") != std::string::npos);
  auto best = r.output.find("each protocol at its best learning rate");
  REQUIRE(best != std::string::npos);
  CHECK(r.output.find("| asp lr=0.05 ", best) != std::string::npos);  // 0.001 is far too slow
  CHECK(r.output.find("| asp lr=0.001 ", best) == std::string::npos);
  r = run("compare --protocols asp --tune-lr 0.05,fast" + fast);
  CHECK(r.status == 2);
  CHECK(r.output.find("--tune-lr: 'fast' is not a positive learning rate") != std::string::npos);
}

TEST_CASE("cli: checkpoints from the command line: written, resumed, and bad ones refused with exit 2") {
  auto dir = std::filesystem::temp_directory_path() / ("syncpoint-cli-checkpoint-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  auto ck = (dir / "ck").string();
  auto job = " --protocol bsp --workers 2 --epochs 2 --straggler 1:x2" + fast;
  auto r = run("train" + job + " --checkpoint-every 0.05 --checkpoint-dir " + ck + " --checkpoint-keep 2");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  auto files = syncpoint::testing::checkpoint_files(ck);
  CHECK(files.size() == 2);  // --checkpoint-keep
  r = run("train" + job + " --resume " + ck);
  CHECK(r.status == 0);
  CHECK(r.output.find("resumed from " + files.back().string()) != std::string::npos);
  r = run("train" + job + " --resume " + files.front().string());  // a file: that checkpoint
  CHECK(r.status == 0);
  CHECK(r.output.find("resumed from " + files.front().string()) != std::string::npos);
  r = run("train" + job + " --checkpoint-every 0.5");
  CHECK(r.status == 2);
  CHECK(r.output.find("--checkpoint-every needs --checkpoint-dir DIR") != std::string::npos);
  r = run("train" + job + " --checkpoint-every 0.05 --checkpoint-dir /proc/no-such-place");
  CHECK(r.status == 2);
  CHECK(r.output.find("--checkpoint-dir /proc/no-such-place: cannot write there") != std::string::npos);
  r = run("train" + job + " --resume " + ck + " --batch 32");
  CHECK(r.status == 2);
  CHECK(r.output.find("--batch is 32 here but 64 in the checkpointed run") != std::string::npos);
  // The newest checkpoint cut short: refused, naming it, and the older one is not used silently.
  auto bytes = syncpoint::testing::slurp(files.back().string());
  std::ofstream(files.back(), std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
  r = run("train" + job + " --resume " + ck);
  CHECK(r.status == 2);
  CHECK(r.output.find("checkpoint '" + files.back().string() + "': truncated") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: simulate runs 1024 workers of every built-in protocol, and refuses what it cannot do with exit 2") {
  for (auto p : {"bsp", "asp", "ssp", "elastic-bsp", "wbsp", "wbsp-overlap", "r2sp", "sync-switch"}) {
    CAPTURE(p);
    auto r = run(std::string("simulate -w 1024 -k 10 --straggler 3:x4 --progress=false -p ") + p);
    CHECK(r.status == 0);
    CHECK(r.output.find(" 1024 workers, 10 iterations each, as mlp (0.7 ms per iteration, model table") !=
          std::string::npos);
    CHECK(r.output.find("the coordinator took ") != std::string::npos);
  }
  auto bsp = run("simulate -w 64 -k 5 -p bsp --iter-cost 2 --straggler 1:x3 --progress=false");
  CHECK(bsp.output.find("simulated time 0.030 s, 20480 samples") != std::string::npos);  // 5 rounds of 3 x 2 ms
  auto r = run("simulate -k 0 --progress=false");
  CHECK(r.status == 2);
  CHECK(r.output.find("syncpoint simulate: --iterations must be at least 1") != std::string::npos);
  r = run("simulate --clock real");
  CHECK(r.status == 2);
  CHECK(r.output.find("unknown option '--clock") != std::string::npos);  // simulate has no clock to choose
  r = run("simulate --epochs 3");
  CHECK(r.status == 2);
  CHECK(r.output.find("unknown option '--epochs") != std::string::npos);  // it runs --iterations
  r = run("simulate -w 5000 --progress=false");
  CHECK(r.status == 2);
  CHECK(r.output.find("--workers must be in 1..4096") != std::string::npos);
  r = run("simulate --iter-cost measure --progress=false");
  CHECK(r.status == 2);
  CHECK(r.output.find("--iter-cost measure is for train") != std::string::npos);
  r = run("simulate -k 20000 --progress=false");  // 20000 x 64 samples: over 1e6
  CHECK(r.status == 2);
  CHECK(r.output.find("--iterations x --batch at most 1e6") != std::string::npos);
}

TEST_SUITE_END();
