// Your own node program (examples/own_node.cpp: the command plus the
// autoencoder's module and loop) as a cluster's head and nodes: the loop it
// registers trains across processes, and a job is refused at submit when a
// node that would host its workers runs a program without its loop.
#include "tests/cluster_fixture.hpp"

#include <doctest/doctest.h>

using namespace syncpoint::testing;

namespace {

std::vector<std::string> autoencoder_job(int workers) {
  return {"--model", "autoencoder", "--loop", "reconstruct", "--optimizer", "adam", "--lr", "0.002",
          "--workers", std::to_string(workers), "--train-limit", "6000", "--test-limit", "1000",
          "--epochs", "1", "--eval-every", "0.5", "--placement", "spread"};
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
