// Replicated PS shards on a cluster's nodes (--ps-replicas), with real
// processes on loopback: where the copies go, a node hosting a shard's
// primary killed mid-job (the job goes on, nothing restarted), and every copy
// of a shard lost (the job fails, naming each loss; with checkpoints, it
// restarts from the newest with the copies on surviving nodes).
#include "tests/cluster_fixture.hpp"
#include "bench/process.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>

using namespace syncpoint;
using namespace syncpoint::testing;

TEST_CASE("cluster replicas: a node hosting a shard's primary killed mid-job under bsp, asp and ssp, with one "
          "replica: the job trains on with no restart, its replica serving") {
  for (auto protocol : {"bsp", "asp", "ssp"}) {
    CAPTURE(protocol);
    cluster c;
    c.node("a", 2);
    auto& b = c.node("b", 2);
    auto out = c.dir / "out";
    auto sub = c.submit(cat(open_job(protocol, 4), {"--ps-placement", "nodes", "--ps-replicas", "1", "--out", out}),
                        "submit");
    auto at = await(*sub, "PS shards on a+b, b+a");  // each shard's replica on the other node
    CHECK_MESSAGE(c.status().find("0: a+b, 1: b+a") != std::string::npos, c.status());
    at = await(*sub, "] eval ", at);  // every copy and worker runs: the job is training
    b.signal(SIGKILL);
    at = await(*sub, "lost shard 1's primary (copy 0)", at);
    await(*sub, "] eval ", await(*sub, "] eval ", at));  // it trains on: two evaluations
    CHECK_MESSAGE(c.status().find("0: a, 1: a") != std::string::npos, c.status());  // the live copies now
    interrupt(*sub);
    auto err = sub->err();
    CHECK_MESSAGE(err.find("copy 1 serves it now") != std::string::npos, err);
    CHECK_MESSAGE(err.find("lost shard 0's replica (copy 1)") != std::string::npos, err);
    CHECK_MESSAGE(err.find("restarting") == std::string::npos, err);
    auto summary = slurp(out + "/summary.json");
    CHECK(summary.find("resumed_from\": null") != std::string::npos);
    CHECK(json_number(summary, "lost_workers") == 2);  // spread put workers 1 and 3 on b
    auto copies = summary.substr(std::min(summary.find("\"lost_shard_copies\""), summary.size()));
    CHECK_MESSAGE(copies.find("\"shard\": 1, \"copy\": 0") != std::string::npos, summary);  // b's primary
    CHECK_MESSAGE(copies.find("\"shard\": 0, \"copy\": 1") != std::string::npos, summary);  // and replica
    CHECK(json_number(summary, "final_accuracy") > 0.5);
    CHECK(c.head->running());
    CHECK(c.nodes["a"]->running());
  }
}

TEST_CASE("cluster replicas: a shard's replica lost, then its primary: the job fails naming both losses, and the "
          "head stays up") {
  cluster c;
  auto& a = c.node("a", 1);
  auto& b = c.node("b", 1);
  c.node("c", 1);
  // One shard: its primary on a, its replica on b; a worker on each node.
  auto sub = c.submit(cat(open_job("asp", 3), {"--ps-placement", "nodes", "--ps-shards", "1", "--ps-replicas", "1"}),
                      "submit");
  auto at = await(*sub, "PS shards on a+b");
  at = await(*sub, "] eval ", at);
  b.signal(SIGKILL);
  at = await(*sub, "lost shard 0's replica (copy 1)", at);
  a.signal(SIGKILL);
  CHECK(sub->wait(hang_deadline) == 1);
  auto err = sub->err();
  CHECK_MESSAGE(err.find("lost shard 0 of the parameter server") != std::string::npos, err);
  CHECK_MESSAGE(err.find("every copy of it: shard 0's replica (copy 1): its node became unreachable") !=
                  std::string::npos,
                err);
  CHECK_MESSAGE(err.find("then shard 0's primary (copy 0): its node became unreachable") != std::string::npos, err);
  CHECK(c.head->running());
}

TEST_CASE("cluster replicas: every copy of a shard lost in a checkpointed job: the job restarts from its newest "
          "checkpoint with the shard's copies on surviving nodes, and trains on") {
  cluster c;
  auto& a = c.node("a", 1);
  auto& b = c.node("b", 1);
  c.node("c", 1);
  c.node("d", 1);
  auto ck = c.dir / "ck";
  auto out = c.dir / "out";
  // One shard: its primary on a, its replica on b; a worker on each node.
  auto sub = c.submit(cat(open_job("bsp", 4), {"--ps-placement", "nodes", "--ps-shards", "1", "--ps-replicas", "1",
                                               "--checkpoint-every", "0.3", "--checkpoint-dir", ck, "--out", out}),
                      "submit");
  auto at = await(*sub, "PS shards on a+b");
  at = await(*sub, "] eval ", await(*sub, "checkpoint at", at));
  b.signal(SIGKILL);
  at = await(*sub, "lost shard 0's replica (copy 1)", at);
  a.signal(SIGKILL);
  at = await(*sub, "restarting from the newest checkpoint", at);
  at = await(*sub, "PS shards on c+d", at);  // each copy on a survivor, apart
  await(*sub, "] eval ", await(*sub, "] eval ", at));  // it trains on: two evaluations
  CHECK_MESSAGE(c.status().find("0: c+d") != std::string::npos, c.status());
  interrupt(*sub);
  auto summary = slurp(out + "/summary.json");
  CHECK_MESSAGE(summary.find("\"resumed_from\": \"" + ck + "/checkpoint-") != std::string::npos, summary);
  CHECK(json_number(summary, "lost_workers") == 2);  // a's and b's
  CHECK(c.head->running());
}

TEST_CASE("cluster replicas: more copies than hosts are refused at submit, naming both counts") {
  cluster c;
  c.node("a", 2);
  c.node("b", 2);
  auto on_nodes = c.submit(cat(small_job("bsp", 4, 1), {"--ps-placement", "nodes", "--ps-replicas", "2"}), "nodes");
  CHECK(on_nodes->wait(hang_deadline) == 2);
  CHECK_MESSAGE(on_nodes->err().find("--ps-replicas 2: each shard's 3 copies need 3 hosts, one each, and the job has 2 "
                                     "(2 nodes hosting its workers)") != std::string::npos,
                on_nodes->err());
  // On the head, the head is one host more: 1 node and the head take one replica, not two.
  auto on_head = c.submit(cat(small_job("bsp", 2, 1), {"--placement", "pack", "--ps-replicas", "2"}), "head");
  CHECK(on_head->wait(hang_deadline) == 2);
  CHECK_MESSAGE(on_head->err().find("and the job has 2 (1 node hosting its workers, and the head)") !=
                  std::string::npos,
                on_head->err());
  auto fits = c.submit(cat(small_job("bsp", 2, 1), {"--placement", "pack", "--ps-replicas", "1"}), "fits");
  REQUIRE_MESSAGE(fits->wait(hang_deadline) == 0, fits->err());
  CHECK_MESSAGE(c.status().find("0: head+a") != std::string::npos, c.status());
}

TEST_CASE("cluster replicas: with --ps-rereplicate a lost copy is made again on a live node, so the shard survives "
          "the loss of its replica's node and then of its primary's, with no checkpoint and no restart") {
  cluster c;
  auto& a = c.node("a", 1);
  auto& b = c.node("b", 1);
  c.node("c", 1);
  auto out = c.dir / "out";
  // One shard: its primary on a, its replica on b; a worker on each node.
  auto sub = c.submit(cat(open_job("asp", 3), {"--ps-placement", "nodes", "--ps-shards", "1", "--ps-replicas", "1",
                                               "--ps-rereplicate", "--out", out}),
                      "submit");
  auto at = await(*sub, "PS shards on a+b");
  at = await(*sub, "] eval ", at);
  b.signal(SIGKILL);
  at = await(*sub, "lost shard 0's replica (copy 1)", at);
  at = await(*sub, "shard 0's copy 1 made again on node c", at);  // the one live node without a copy of it
  at = await(*sub, "] eval ", at);
  CHECK_MESSAGE(c.status().find("0: a+c") != std::string::npos, c.status());
  a.signal(SIGKILL);
  at = await(*sub, "lost shard 0's primary (copy 0)", at);
  at = await(*sub, "shard 0's copy 0 made again on node c", at);  // c is all there is: both copies share it
  await(*sub, "] eval ", await(*sub, "] eval ", at));  // it trains on: two evaluations
  CHECK_MESSAGE(c.status().find("0: c+c") != std::string::npos, c.status());
  interrupt(*sub);
  auto err = sub->err();
  CHECK_MESSAGE(err.find("restarting") == std::string::npos, err);
  auto summary = slurp(out + "/summary.json");
  auto made = summary.substr(std::min(summary.find("\"remade_shard_copies\""), summary.size()));
  CHECK_MESSAGE(made.find("\"shard\": 0, \"copy\": 1") != std::string::npos, summary);
  CHECK_MESSAGE(made.find("\"shard\": 0, \"copy\": 0") != std::string::npos, summary);
  CHECK_MESSAGE(made.find("\"host\": \"node c\"") != std::string::npos, summary);
  CHECK(json_number(summary, "lost_workers") == 2);
  CHECK(c.head->running());
}

namespace {

// The samples of the first evaluation line after byte `from` (its offset past it in `at`).
uint64_t samples_after(process& p, size_t& at) {
  auto from = at;
  at = await(p, "] eval ", from);
  auto err = p.err();
  auto line = err.rfind("samples=", at);
  REQUIRE(line != std::string::npos);
  REQUIRE(line >= from);
  return std::strtoull(err.c_str() + line + 8, nullptr, 10);
}

// Nodes a, b and c of one slot each and an elastic asp job with one shard, its primary on a and
// its replica on b; b is lost, and the replica made again on c. The submitter, and its output's
// offset past that line.
std::pair<std::unique_ptr<process>, size_t> replica_made_on_c(cluster& c) {
  c.node("a", 1);
  c.node("b", 1);
  c.node("c", 1);
  auto sub = c.submit(cat(open_job("asp", 3), {"--elastic", "--ps-placement", "nodes", "--ps-shards", "1",
                                               "--ps-replicas", "1", "--ps-rereplicate", "--out", c.dir / "out"}),
                      "submit");
  auto at = await(*sub, "PS shards on a+b");
  at = await(*sub, "] eval ", at);
  c.nodes["b"]->signal(SIGKILL);
  at = await(*sub, "shard 0's copy 1 made again on node c", at);
  return {std::move(sub), at};
}

}  // namespace

TEST_CASE("cluster replicas: a node that joins again has another bulk channel, and a copy made on it later is "
          "reached there, not on CAF") {
  cluster c;
  auto [sub, at] = replica_made_on_c(c);
  c.node("b", 1);  // b's process again, with its bulk channel on another port
  at = await(*sub, "joined (node b)", at);
  c.nodes["a"]->signal(SIGKILL);
  at = await(*sub, "shard 0's copy 0 made again on node b", at);  // the one live node without a copy of it
  at = await(*sub, "] eval ", await(*sub, "] eval ", at));
  interrupt(*sub);
  // By the end every live worker had the news of b's copy (its releases waited for its answer):
  // c's reached it on the bulk channel of b's second process, not at the first one's port.
  for (auto& [name, node] : c.nodes)
    CHECK_MESSAGE(node->err().find("go on CAF") == std::string::npos, name << ":\n" << node->err());
}

TEST_CASE("cluster replicas: a copy's node lost while the coordinator waits for its sync (after a worker joined): the "
          "job goes on, though CAF never answers a request to a process that died") {
  // The head notices a silent node only at its kill (not after 3 s of silence): a stays a member,
  // stopped, until the sync is out.
  cluster c({"--middleman.connection-timeout=120s"});
  auto [sub, at] = replica_made_on_c(c);
  // a stops (the primary's node): it answers nothing, and keeps its connections. b joins again, and
  // the coordinator syncs with every copy of another process once the job's worker there joins;
  // that worker starts with a group that names a's copy, and hears of its loss before its start.
  auto& a = *c.nodes["a"];
  a.signal(SIGSTOP);
  c.node("b", 1);
  at = await(*sub, "joined (node b)", at);
  a.signal(SIGKILL);  // the sync to a's copy never comes back
  at = await(*sub, "lost shard 0's primary (copy 0)", at);
  auto before = samples_after(*sub, at);
  auto later = samples_after(*sub, at);
  later = samples_after(*sub, at);
  CHECK_MESSAGE(later > before, sub->err());  // it trains on: the workers' replies were released
  interrupt(*sub);
  CHECK(sub->err().find("restarting") == std::string::npos);
}
