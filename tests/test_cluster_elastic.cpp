// An elastic job (submit --elastic): it starts on the free slots, grows when
// a node joins, and a lost node's workers come back on a node that joins
// later; the summary shows each change.
#include "tests/cluster_fixture.hpp"

#include <csignal>

using namespace syncpoint::testing;

TEST_CASE("cluster: an elastic job grows when a node joins, and a lost node's workers come back on a new one") {
  cluster c;
  auto& a = c.node("a", 2);
  // Long enough (a slowed worker) for nodes to come and go during the job.
  auto job = cat(small_job("bsp", 4, 150), {"--straggler", "1:+5ms", "--eval-every", "5", "--elastic"});
  auto out = c.dir.path() + "/elastic";
  auto sub = c.submit(cat(job, {"--out", out}), "submit");
  REQUIRE_MESSAGE(sub->wait_for("2 of 4 workers started", 30s, true), sub->err());
  c.node("b", 2);
  REQUIRE_MESSAGE(sub->wait_for("worker 3 joined (node b)", 30s, true), sub->err());
  CHECK(sub->err().find("worker 2 joined (node b)") != std::string::npos);
  a.signal(SIGKILL);
  REQUIRE_MESSAGE(sub->wait_for("worker 1 lost", 30s, true), sub->err());
  c.node("c", 2);
  REQUIRE_MESSAGE(sub->wait_for("worker 1 joined (node c)", 30s, true), sub->err());
  REQUIRE_MESSAGE(sub->wait(120s) == 0, sub->err());
  auto summary = slurp(out + "/summary.json");
  for (auto where : {"\"worker\": 2, \"t_s\"", "\"worker\": 0, \"t_s\""})
    CHECK_MESSAGE(summary.find(where) != std::string::npos, summary);
  CHECK(summary.find("\"where\": \"node b\"") != std::string::npos);
  CHECK(summary.find("\"where\": \"node c\"") != std::string::npos);
  CHECK(summary.find("(node a)") != std::string::npos);  // the losses name the node they happened on
  CHECK(json_number(summary, "samples") >= 150 * 4000);
  CHECK(sub->out().find("worker 3 joined at") != std::string::npos);
  // Before its node joined, worker 3 did nothing; after, it trained.
  auto trace = slurp(out + "/trace.jsonl");
  CHECK(trace.find("\"kind\": \"push\", \"worker\": 3") != std::string::npos);
  // A job that is not elastic still needs all its slots.
  auto strict = c.submit(small_job("bsp", 8, 1), "strict");
  CHECK(strict->wait(30s) == 2);
  CHECK(strict->err().find("the job needs 8 worker slots") != std::string::npos);
}

TEST_CASE("cluster: an elastic job takes the slots another job frees when it ends") {
  cluster c;
  c.node("a", 3);
  auto other = c.submit(cat(small_job("bsp", 2, 20), {"--straggler", "1:+5ms"}), "other");
  REQUIRE_MESSAGE(other->wait_for("workers started", 30s, true), other->err());
  auto sub = c.submit(cat(small_job("bsp", 3, 60), {"--straggler", "1:+5ms", "--eval-every", "5", "--elastic"}),
                      "elastic");
  REQUIRE_MESSAGE(sub->wait_for("1 of 3 workers started", 30s, true), sub->err());
  CHECK(other->wait(60s) == 0);
  REQUIRE_MESSAGE(sub->wait_for("worker 2 joined (node a)", 30s, true), sub->err());
  CHECK(sub->err().find("worker 1 joined (node a)") != std::string::npos);
  CHECK(sub->wait(120s) == 0);
}
