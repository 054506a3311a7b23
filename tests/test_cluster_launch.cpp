// syncpoint launch (cli/launch_cmd.cpp) as a launcher runs it: every process
// the same command, its rank from the variables. Rank 0 becomes the head and
// submits, the others join as nodes, each exits with the job's outcome, and
// rank 0 writes the files. With torchrun's variables given by hand here; with
// Open MPI's mpirun when it is installed.
#include "tests/cluster_fixture.hpp"

#include <doctest/doctest.h>

using namespace syncpoint::testing;

namespace {

// A port no one listens on now (the kernel's pick for a socket bound to port 0, then closed).
int free_port() {
  loopback_socket probe(false);
  REQUIRE(probe.ok());
  return probe.port();
}

// `syncpoint launch [own] -- job` as rank `rank` of `world`, torchrun's variables set.
std::unique_ptr<process> rank_process(temp_dir& dir, int rank, int world, int port,
                                      const std::vector<std::string>& own, const std::vector<std::string>& job) {
  auto argv = cat({"/usr/bin/env", "RANK=" + std::to_string(rank), "WORLD_SIZE=" + std::to_string(world),
                   "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port), syncpoint_binary(), "launch"},
                  own);
  argv.push_back("--");
  return std::make_unique<process>(cat(argv, job), dir.path(), "rank" + std::to_string(rank));
}

}  // namespace

TEST_CASE("launch: three ranks with torchrun's variables train bsp with 2 workers, and rank 0 writes the files") {
  temp_dir dir;
  int port = free_port();
  auto out = dir / "run";
  auto job = cat(small_job("bsp", 2, 2), {"--out", out});
  std::vector<std::unique_ptr<process>> ranks;
  for (int r = 2; r >= 0; --r)  // the nodes first: they wait for the head
    ranks.push_back(rank_process(dir, r, 3, port, {}, job));
  for (auto& p : ranks)
    CHECK_MESSAGE(p->wait(hang_deadline) == 0, p->err());
  auto& head = *ranks.back();
  CHECK(head.err().find("job 1 accepted by the head at 127.0.0.1:" + std::to_string(port)) != std::string::npos);
  auto summary = slurp(out + "/summary.json");
  CHECK(json_number(summary, "workers") == 2);
  CHECK(json_number(summary, "final_accuracy") > 0.8);
  CHECK(json_number(summary, "lost_workers") == 0);
  for (int i : {0, 1})  // ranks 2 and 1, each a node with one slot
    CHECK_MESSAGE(ranks[static_cast<size_t>(i)]->out().find("-rank" + std::to_string(2 - i) + "' joined the head at 127.0.0.1:" +
                                                             std::to_string(port) + " with 1 slot") != std::string::npos,
                  ranks[static_cast<size_t>(i)]->out());
}

TEST_CASE("launch: a rank out of the world, or a head that never comes, is refused by name") {
  temp_dir dir;
  int port = free_port();
  auto bad = rank_process(dir, 3, 3, port, {}, small_job("bsp", 2, 1));
  CHECK(bad->wait(hang_deadline) == 2);
  CHECK_MESSAGE(bad->err().find("syncpoint launch: RANK='3': must be a rank from 0 to WORLD_SIZE - 1 = 2") !=
                  std::string::npos,
                bad->err());
  auto lonely = rank_process(dir, 1, 2, port, {"--wait", "2"}, small_job("bsp", 2, 1));
  CHECK(lonely->wait(hang_deadline) == 2);
  CHECK_MESSAGE(lonely->err().find("cannot connect to 127.0.0.1:" + std::to_string(port)) != std::string::npos,
                lonely->err());
  CHECK(lonely->err().find("(tried for 2 s)") != std::string::npos);
  auto no_slots = rank_process(dir, 1, 2, port, {"--slots", "0"}, small_job("bsp", 2, 1));
  CHECK(no_slots->wait(hang_deadline) == 2);
  CHECK_MESSAGE(no_slots->err().find("--slots must be auto or a number in 1..4096, got '0'") != std::string::npos,
                no_slots->err());
  // Rank 0 whose nodes never come: it says how many joined, and ends its head.
  auto alone = rank_process(dir, 0, 3, port, {"--wait", "3"}, small_job("bsp", 2, 1));
  CHECK(alone->wait(hang_deadline) == 1);
  CHECK_MESSAGE(alone->err().find("not ready within --wait 3 s: 0 of 2 nodes joined") != std::string::npos,
                alone->err());
}

TEST_CASE("launch: Open MPI's mpirun starts three ranks that train bsp with 2 workers") {
  REQUIRE_MESSAGE(::access("/usr/bin/mpirun", X_OK) == 0, "mpirun is missing: scripts/setup.sh installs openmpi-bin");
  temp_dir dir;
  auto out = dir / "run";
  std::vector<std::string> argv{"/usr/bin/mpirun"};
  if (::geteuid() == 0)
    argv.push_back("--allow-run-as-root");  // (Open MPI refuses root without it)
  argv = cat(argv, {"--oversubscribe", "-np", "3", syncpoint_binary(), "launch", "--"});
  process mpirun(cat(argv, cat(small_job("bsp", 2, 2), {"--out", out})), dir.path(), "mpirun");
  REQUIRE_MESSAGE(mpirun.wait(hang_deadline) == 0, mpirun.out() << mpirun.err());
  auto summary = slurp(out + "/summary.json");
  CHECK(json_number(summary, "workers") == 2);
  CHECK(json_number(summary, "final_accuracy") > 0.8);
  CHECK(mpirun.out().find("-rank1' joined the head at 127.0.0.1:") != std::string::npos);
  CHECK(mpirun.out().find("-rank2' joined the head at 127.0.0.1:") != std::string::npos);
}

TEST_CASE("launch: SIGUSR1 takes a checkpoint now, status shows each node's host and rank, and after SIGTERM "
          "every rank exits with the job's outcome") {
  temp_dir dir;
  int port = free_port();
  auto out = dir / "run";
  auto ckpt = dir / "ckpt";
  // No period: the only checkpoint is the one the signal asks for.
  auto job = cat(open_job("bsp", 2), {"--progress", "--checkpoint-dir", ckpt, "--out", out});
  std::vector<std::unique_ptr<process>> ranks;
  for (int r = 2; r >= 0; --r)
    ranks.push_back(rank_process(dir, r, 3, port, {}, job));
  auto& rank0 = *ranks.back();
  auto at = await(rank0, "] eval ");  // the job runs

  auto status = run_shell(syncpoint_binary() + " status --head 127.0.0.1:" + std::to_string(port));
  REQUIRE_MESSAGE(status.status == 0, status.output);
  auto host = run_shell("hostname").output;
  host.erase(host.find_last_not_of("\n") + 1);
  for (int r : {1, 2}) {
    auto row = status.output.find(host + "-rank" + std::to_string(r) + " ");
    REQUIRE_MESSAGE(row != std::string::npos, status.output);
    auto line = status.output.substr(row, status.output.find('\n', row) - row);
    CHECK_MESSAGE(line.find(" torchrun " + std::to_string(r) + " ") != std::string::npos, line);
    CHECK_MESSAGE(line.find(" " + host + " ") != std::string::npos, line);
  }

  for (auto& p : ranks)  // as Slurm's --signal=USR1@T does: every task hears it
    p->signal(SIGUSR1);
  await(rank0, "checkpoint on request (SIGUSR1)", at);
  at = await(rank0, "checkpoint at", at);
  auto written = std::filesystem::directory_iterator(ckpt);
  CHECK_MESSAGE(std::any_of(begin(written), end(written),
                            [](auto& e) { return e.path().filename().string().rfind("checkpoint-", 0) == 0; }),
                rank0.err());
  for (auto& p : ranks)
    CHECK_MESSAGE(p->running(), p->err());  // USR1 ended no one

  for (auto& p : ranks)  // scancel, or the time limit: every task hears SIGTERM
    p->signal(SIGTERM);
  for (auto& p : ranks)
    CHECK_MESSAGE(p->wait(hang_deadline) == 128 + SIGTERM, p->err());
  CHECK_MESSAGE(rank0.err().find("stopped early: its submitter was interrupted (SIGTERM)") != std::string::npos,
                rank0.err());
  CHECK(std::filesystem::exists(out + "/summary.json"));
  for (int i : {0, 1})
    CHECK_MESSAGE(ranks[static_cast<size_t>(i)]->err().find("the job's exit code is 143") != std::string::npos,
                  ranks[static_cast<size_t>(i)]->err());
}
