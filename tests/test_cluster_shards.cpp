// PS shards on a cluster's nodes (--ps-placement nodes), with real processes
// on loopback: the model they train, where status says they run, and what a
// job does when a node hosting a shard dies.
#include "runtime/records/model_file.hpp"
#include "tests/cluster_fixture.hpp"
#include "bench/process.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <algorithm>
#include <cmath>

using namespace syncpoint;
using namespace syncpoint::testing;
namespace fs = std::filesystem;

namespace {

// The largest difference between two saved models' values (same version required).
double model_distance(const std::string& a_path, const std::string& b_path) {
  auto a = load_model_file(a_path);
  auto b = load_model_file(b_path);
  CHECK(a.version == b.version);
  REQUIRE(a.values.size() == b.values.size());
  double max_diff = 0;
  for (size_t i = 0; i < a.values.size(); ++i)
    max_diff = std::max(max_diff, std::abs(double(a.values.data()[i]) - double(b.values.data()[i])));
  return max_diff;
}

// Whether processes here can share memory as the bulk channel's rings do
// (runtime/cluster/dataplane/shm_ring.cpp): a boot id, and room in /dev/shm.
bool shared_memory_here() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(boot, id);
  auto name = "/syncpoint-probe-" + std::to_string(getpid());
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0)
    return false;
  bool room = posix_fallocate(fd, 0, 1 << 20) == 0;
  close(fd);
  shm_unlink(name.c_str());
  return room && !id.empty();
}

}  // namespace

TEST_CASE("cluster shards: a 4-worker BSP job with a PS shard on each of two nodes ends with the model of the same "
          "job in one process") {
  cluster c;
  c.node("a", 2);
  c.node("b", 2);
  auto job = small_job("bsp", 4, 2);
  auto sub = c.submit(cat(job, {"--ps-placement", "nodes", "--out", c.dir / "cluster", "--save-model",
                                c.dir / "cluster.model"}),
                      "submit");
  REQUIRE_MESSAGE(sub->wait(hang_deadline) == 0, sub->err());
  CHECK_MESSAGE(sub->err().find("4 workers started on a (2), b (2); PS shards on a, b") != std::string::npos,
                sub->err());
  // Each worker reaches the other node's shard on the bulk channel, its own node's through CAF's pointer;
  // the nodes share this machine, so the floats go through shared memory where it lets them.
  std::string how = shared_memory_here() ? ", through shared memory" : "";
  CHECK_MESSAGE(c.nodes["a"]->err().find(": shard 1 on the bulk channel" + how) != std::string::npos,
                c.nodes["a"]->err());
  CHECK_MESSAGE(c.nodes["b"]->err().find(": shard 0 on the bulk channel" + how) != std::string::npos,
                c.nodes["b"]->err());
  auto local = c.run("train", cat(job, {"--clock", "real", "--out", c.dir / "local", "--save-model",
                                        c.dir / "local.model"}),
                     "train");
  REQUIRE_MESSAGE(local->wait(hang_deadline) == 0, local->err());
  CHECK(model_distance(c.dir / "cluster.model", c.dir / "local.model") < 1e-4);  // a round's summation order
  auto sa = slurp(c.dir / "cluster/summary.json");
  auto sb = slurp(c.dir / "local/summary.json");
  CHECK(json_number(sa, "samples") == json_number(sb, "samples"));
  CHECK(json_number(sa, "final_accuracy") == doctest::Approx(json_number(sb, "final_accuracy")).epsilon(0.003));
}

TEST_CASE("cluster shards: a sparse ctr job with its table on the shards of two nodes trains as the same job in one "
          "process, its keys and rows on the bulk channel") {
  cluster c;
  c.node("a", 2);
  c.node("b", 2);
  std::vector<std::string> job{"--protocol", "bsp", "--workers", "4", "--model", "ctr:fields=4,width=4,hidden=8",
                               "--dataset", "clicks:keys=300,fields=4,numeric=2", "--train-limit", "1600",
                               "--test-limit", "300", "--batch", "16", "--epochs", "1", "--seed", "3", "--lr", "0.1",
                               "--momentum", "0", "--eval-every", "0.5"};
  auto sub = c.submit(cat(job, {"--ps-placement", "nodes", "--out", c.dir / "cluster"}), "submit");
  REQUIRE_MESSAGE(sub->wait(hang_deadline) == 0, sub->err());
  CHECK_MESSAGE(sub->err().find("PS shards on a, b") != std::string::npos, sub->err());
  // Each worker reaches the other node's shard on the bulk channel, keys and rows in its frames.
  std::string how = shared_memory_here() ? ", through shared memory" : "";
  CHECK_MESSAGE(c.nodes["a"]->err().find(": shard 1 on the bulk channel" + how) != std::string::npos,
                c.nodes["a"]->err());
  CHECK_MESSAGE(c.nodes["b"]->err().find(": shard 0 on the bulk channel" + how) != std::string::npos,
                c.nodes["b"]->err());
  auto local = c.run("train", cat(job, {"--clock", "real", "--out", c.dir / "local"}), "train");
  REQUIRE_MESSAGE(local->wait(hang_deadline) == 0, local->err());
  auto sa = slurp(c.dir / "cluster/summary.json");
  auto sb = slurp(c.dir / "local/summary.json");
  CHECK(json_number(sa, "samples") == json_number(sb, "samples"));
  // bsp: the same rounds, up to their summation order (real clock, arrivals in any order).
  CHECK(json_number(sa, "final_accuracy") == doctest::Approx(json_number(sb, "final_accuracy")).epsilon(0.01));
}

TEST_CASE("cluster shards: a sparse job's checkpoint holds the nodes' rows, and a job resumed from it on the nodes' "
          "shards goes on from those rows") {
  cluster c;
  c.node("a", 2);
  c.node("b", 2);
  auto ck = c.dir / "ckpt";
  // An open job (it trains until the test ends it), checkpointed every 0.3 s.
  std::vector<std::string> job{"--protocol", "bsp", "--workers", "4", "--model",
                               "ctr:fields=4,width=4,hidden=8,opt=adagrad", "--dataset",
                               "clicks:keys=300,fields=4,numeric=2", "--train-limit", "6000", "--test-limit", "1000",
                               "--batch", "16", "--epochs", "100000", "--max-time", "900", "--seed", "3", "--lr",
                               "0.1", "--momentum", "0", "--eval-every", "0.5", "--ps-placement", "nodes",
                               "--checkpoint-every", "0.3", "--checkpoint-dir", ck};
  auto first = c.submit(cat(job, {"--out", c.dir / "first"}), "first");
  size_t at = 0;
  for (int i = 0; i < 4; ++i)  // it learned for a while (AUC 0.56 at the start, 0.64 after two epochs)
    at = await(*first, "] eval ", at);
  await(*first, "checkpoint at", at);
  interrupt(*first);
  std::vector<std::string> saved;
  for (auto& e : fs::directory_iterator(ck))
    if (e.path().extension() == ".bin")
      saved.push_back(e.path().string());
  std::sort(saved.begin(), saved.end());
  REQUIRE(!saved.empty());
  auto from = saved.back();
  auto out = c.dir / "resumed";
  auto second = c.submit(cat(job, {"--resume", from, "--out", out}), "resumed");
  await(*second, "] eval ", await(*second, "] eval "));  // trained on from there
  interrupt(*second);
  auto summary = slurp(out + "/summary.json");
  CHECK(summary.find("\"resumed_from\": \"" + from + "\"") != std::string::npos);
  auto resumed_at = json_number(summary, "resumed_at_s");
  // The rows came back: the first AUC after the resume is about the last before it (fresh rows,
  // drawn again, would have put the model back near its start).
  double before = -1, after = -1;
  std::istringstream trace(slurp(out + "/trace.jsonl"));
  for (std::string line; std::getline(trace, line);)
    if (line.find("\"kind\": \"metric\"") != std::string::npos && line.find("\"note\": \"auc\"") != std::string::npos) {
      if (json_number(line, "t0") < resumed_at)
        before = json_number(line, "value");
      else if (after < 0)
        after = json_number(line, "value");
    }
  REQUIRE(before > 0);
  REQUIRE(after > 0);
  MESSAGE("AUC before the checkpoint " << before << ", after the resume " << after);
  CHECK(std::abs(after - before) < 0.02);
}

TEST_CASE("cluster shards: status shows where each shard of a running job is, and --ps-shards places them round "
          "robin") {
  cluster c;
  c.node("a", 2);
  c.node("b", 2);
  auto sub = c.submit(cat(open_job("asp", 4), {"--ps-placement", "nodes", "--ps-shards", "3"}), "submit");
  await(*sub, "] eval ");  // every shard and worker runs: the job is training
  auto s = c.status();
  CHECK_MESSAGE(s.find("PS SHARDS") != std::string::npos, s);
  CHECK_MESSAGE(s.find("0: a, 1: b, 2: a") != std::string::npos, s);
  interrupt(*sub);
  auto head_job = c.submit(small_job("asp", 2, 1), "on-head");  // the default: on the head
  REQUIRE_MESSAGE(head_job->wait(hang_deadline) == 0, head_job->err());
  CHECK(head_job->err().find("PS shards on") == std::string::npos);
  CHECK_MESSAGE(c.status().find("0: head") != std::string::npos, c.status());
}

TEST_CASE("cluster shards: a node hosting a shard killed mid-job without checkpoints: the job fails naming the lost "
          "shard, and the head stays up") {
  cluster c;
  c.node("a", 2);
  auto& b = c.node("b", 2);
  auto sub = c.submit(cat(open_job("bsp", 4), {"--ps-placement", "nodes"}), "submit");
  await(*sub, "] eval ");
  b.signal(SIGKILL);
  CHECK(sub->wait(hang_deadline) == 1);
  CHECK_MESSAGE(sub->err().find("lost shard 1 of the parameter server") != std::string::npos, sub->err());
  CHECK(c.head->running());
  auto bad = c.submit(cat(small_job("bsp", 2, 1), {"--ps-placement", "elsewhere"}), "bad");
  CHECK(bad->wait(hang_deadline) == 2);
  CHECK_MESSAGE(bad->err().find("--ps-placement must be head or nodes") != std::string::npos, bad->err());
}

TEST_CASE("cluster shards: a node hosting a shard killed mid-job with checkpoints on: the job goes on from the newest "
          "checkpoint with the shard placed again, the node's workers lost, and says so") {
  cluster c;
  c.node("a", 2);
  auto& b = c.node("b", 2);
  auto out = c.dir / "out";
  auto sub = c.submit(cat(open_job("bsp", 4), {"--ps-placement", "nodes", "--checkpoint-every", "0.3",
                                               "--checkpoint-dir", c.dir / "ck", "--out", out}),
                      "submit");
  auto at = await(*sub, "checkpoint at");  // a checkpoint to go on from exists
  b.signal(SIGKILL);
  at = await(*sub, "restarting from the newest checkpoint", at);
  // Shard 1 placed again, on a; b's workers are gone with it.
  at = await(*sub, "2 of 4 workers started (the rest were lost with their node) on a (2); PS shards on a, a", at);
  await(*sub, "] eval ", await(*sub, "] eval ", at));  // it trains on: two evaluations
  interrupt(*sub);
  auto err = sub->err();
  CHECK_MESSAGE(err.find("lost shard 1 of the parameter server (node b): restarting from the newest checkpoint") !=
                  std::string::npos,
                err);
  CHECK_MESSAGE(sub->out().find("resumed from " + c.dir / "ck") != std::string::npos, sub->out());
  auto summary = slurp(out + "/summary.json");
  CHECK(summary.find("\"resumed_from\": \"" + c.dir / "ck") != std::string::npos);
  CHECK(json_number(summary, "lost_workers") == 2);  // spread put workers 1 and 3 on b
  CHECK(summary.find("node b") != std::string::npos);
  CHECK(json_number(summary, "final_accuracy") > 0.5);
}

TEST_CASE("cluster shards: the only node, hosting every worker and the shard, killed with checkpoints on: the restart "
          "has no worker left and the job fails saying so") {
  cluster c;
  auto& a = c.node("a", 2);
  auto sub = c.submit(cat(open_job("bsp", 2), {"--ps-placement", "nodes", "--checkpoint-every", "0.3",
                                               "--checkpoint-dir", c.dir / "ck"}),
                      "submit");
  await(*sub, "checkpoint at");
  a.signal(SIGKILL);
  CHECK(sub->wait(hang_deadline) == 1);
  auto err = sub->err();
  CHECK_MESSAGE(err.find("lost shard 0 of the parameter server (node a): restarting") != std::string::npos, err);
  CHECK_MESSAGE(err.find("PS shards on head") != std::string::npos, err);  // placed again, on the head
  CHECK_MESSAGE(err.find("every worker was lost; the job failed") != std::string::npos, err);
  CHECK(c.head->running());
}
