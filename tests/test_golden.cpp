// The golden table (issue 42, tests/golden/runs.txt): one fixed virtual-clock
// job per protocol, and the final accuracy, samples and run time it gives.
// The virtual clock reproduces a run bit for bit, so any change to how a
// protocol decides, how the PS steps, how a worker samples or how time is
// charged moves a figure here. A change that moves one updates the table and
// says why in its commit message; a refactoring moves none.
//
// The runs pin OpenBLAS's kernels (Haswell) and ATen's (AVX2), which every
// x86-64 CPU with AVX2 runs alike: otherwise a CPU with other kernels sums in
// another order and the figures move in the last bits for no reason of ours.
#include "tests/helpers.hpp"
#include "bench/process.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace syncpoint::testing;

namespace {

struct golden_row {
  std::string protocol, accuracy, samples, run_time;
};

std::vector<std::string> golden_job() {
  return {"--workers", "4", "--model", "mlp", "--straggler", "3:x4", "--epochs", "1", "--iter-cost", "10",
          "--seed", "1", "--progress=false"};
}

std::vector<golden_row> read_table(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  std::vector<golden_row> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream fields(line);
    golden_row r;
    fields >> r.protocol >> r.accuracy >> r.samples >> r.run_time;
    REQUIRE_MESSAGE(!r.run_time.empty(), path << ": a line without four fields: " << line);
    rows.push_back(r);
  }
  return rows;
}

// The number of "key" in a summary.json, as its text is written.
std::string json_text(const std::string& json, const std::string& key) {
  auto at = json.find("\"" + key + "\": ");
  if (at == std::string::npos)
    return "(missing)";
  at += key.size() + 4;
  auto end = json.find_first_of(",}", at);
  return json.substr(at, end - at);
}

bool cpu_has_avx2() {
  std::ifstream in("/proc/cpuinfo");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return all.find(" avx2") != std::string::npos && all.find(" fma") != std::string::npos;
}

}  // namespace

TEST_CASE("golden: every protocol's fixed virtual-clock run gives the table's accuracy, samples and run time") {
  auto table = std::string(SYNCPOINT_SOURCE_DIR) + "/tests/golden/runs.txt";
  auto rows = read_table(table);
  REQUIRE(rows.size() >= 9);
  if (!cpu_has_avx2()) {
    MESSAGE("this CPU has no AVX2 and FMA: the pinned kernels cannot run, the golden table is not checked");
    return;
  }
  temp_dir dir;
  std::vector<std::string> moved;
  // Two at a time: one core each.
  for (size_t first = 0; first < rows.size(); first += 2) {
    std::vector<std::unique_ptr<process>> running;
    for (size_t i = first; i < std::min(rows.size(), first + 2); ++i) {
      std::vector<std::string> argv{"/usr/bin/env", "OPENBLAS_CORETYPE=Haswell", "ATEN_CPU_CAPABILITY=avx2",
                                    "OPENBLAS_NUM_THREADS=1", syncpoint_binary(), "train", "--protocol",
                                    rows[i].protocol, "--out", dir / rows[i].protocol};
      auto job = golden_job();
      argv.insert(argv.end(), job.begin(), job.end());
      running.push_back(std::make_unique<process>(argv, dir.path(), rows[i].protocol));
    }
    for (size_t j = 0; j < running.size(); ++j) {
      auto& row = rows[first + j];
      CAPTURE(row.protocol);
      REQUIRE_MESSAGE(running[j]->wait(std::chrono::minutes(10)) == 0, running[j]->err());
      auto summary = slurp(dir / row.protocol + "/summary.json");
      golden_row got{row.protocol, json_text(summary, "final_accuracy"), json_text(summary, "samples"),
                     json_text(summary, "run_time_s")};
      CHECK(got.accuracy == row.accuracy);
      CHECK(got.samples == row.samples);
      CHECK(got.run_time == row.run_time);
      if (got.accuracy != row.accuracy || got.samples != row.samples || got.run_time != row.run_time)
        moved.push_back(got.protocol + " " + got.accuracy + " " + got.samples + " " + got.run_time);
    }
  }
  if (!moved.empty()) {
    std::string lines;
    for (auto& m : moved)
      lines += "  " + m + "\n";
    FAIL("the golden runs moved. If this change means to move them, put these lines in tests/golden/runs.txt "
         "and say why in the commit message:\n"
         << lines);
  }
}
