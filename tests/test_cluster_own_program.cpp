// Your own node program (examples/own_node.cpp: the command plus the
// autoencoder's module and loop) as a cluster's head and nodes: the loop it
// registers trains across processes, a job is refused at submit when a node
// that would host its workers runs a program without its loop, and an elastic
// job grows only onto nodes whose program has it.
#include "tests/cluster_fixture.hpp"

#include <doctest/doctest.h>

using namespace syncpoint::testing;

namespace {

std::vector<std::string> autoencoder_job(int workers, const std::string& epochs = "1") {
  return {"--model", "autoencoder", "--loop", "reconstruct", "--optimizer", "adam", "--lr", "0.002",
          "--workers", std::to_string(workers), "--train-limit", "6000", "--test-limit", "1000",
          "--epochs", epochs, "--eval-every", "0.5", "--placement", "spread"};
}

}  // namespace

TEST_CASE("cluster: the user's own node program trains its autoencoder loop on a head and two nodes") {
  cluster c(SYNCPOINT_EXAMPLE_OWN_NODE, {});
  c.node("a", 1);
  c.node("b", 1);
  auto out = c.dir / "ae";
  auto sub = c.submit(cat(autoencoder_job(2), {"--out", out}), "submit");
  REQUIRE_MESSAGE(sub->wait(hang_deadline) == 0, sub->err());
  std::ifstream trace(out + "/trace.jsonl");
  REQUIRE(trace);
  double first = -1, last = -1;
  int workers_seen[2] = {0, 0};
  for (std::string line; std::getline(trace, line);) {
    if (line.find("\"kind\": \"metric\"") != std::string::npos && line.find("\"note\": \"mse\"") != std::string::npos) {
      last = json_number(line, "value");
      if (first < 0)
        first = last;
    }
    if (line.find("\"kind\": \"compute\"") != std::string::npos)
      ++workers_seen[line.find("\"worker\": 1,") != std::string::npos ? 1 : 0];
  }
  CHECK(workers_seen[0] > 10);
  CHECK(workers_seen[1] > 10);
  MESSAGE("held-out reconstruction mse: " << first << " -> " << last);
  CHECK(first > 0);
  CHECK(last < 0.45);
  CHECK(last < first);
}

TEST_CASE("cluster: a job is refused at submit when a node that would host it lacks its loop, naming both") {
  cluster c(SYNCPOINT_EXAMPLE_OWN_NODE, {});
  c.node("mine", 1);
  c.node("plain", 1, syncpoint_binary());  // the stock command: no autoencoder, no loop "reconstruct"
  auto sub = c.submit(autoencoder_job(2), "submit");
  CHECK(sub->wait(hang_deadline) == 2);
  CHECK_MESSAGE(sub->err().find("node 'plain' lacks the loop 'reconstruct' (its program registers classify)") !=
                  std::string::npos,
                sub->err());
}

TEST_CASE("cluster: an elastic job is not offered the slots of a node that lacks its loop, and grows onto one that has it") {
  cluster c(SYNCPOINT_EXAMPLE_OWN_NODE, {});
  c.node("mine", 1);
  auto out = c.dir / "elastic";
  // An open job (it does not end on its own within the test): 2 workers, 1 to start.
  auto sub = c.submit(cat(autoencoder_job(2, "100000"), {"--elastic", "--max-time", "900", "--out", out}), "elastic");
  auto at = await(*sub, "1 of 2 workers started");  // on "mine"
  c.node("plain", 1, syncpoint_binary());  // the stock command: no loop "reconstruct"
  await(*c.head, "is not offered the slots of node 'plain': node 'plain' lacks the loop 'reconstruct'");
  c.node("mine2", 1);
  at = await(*sub, "worker 1 joined (node mine2)", at);
  await(*sub, "] eval ", at);  // trained on with it
  interrupt(*sub);
  auto summary = slurp(out + "/summary.json");
  CHECK(summary.find("\"where\": \"node mine2\"") != std::string::npos);
  CHECK(summary.find("plain") == std::string::npos);
  CHECK(json_number(summary, "lost_workers") == 0);
}
