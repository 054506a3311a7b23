// An elastic job (submit --elastic): it starts on the free slots, grows when
// a node joins, and a lost node's workers come back on a node that joins
// later; the summary shows each change.
#include "tests/cluster_fixture.hpp"

#include <csignal>

using namespace syncpoint::testing;

TEST_CASE("cluster: an elastic job grows when a node joins, and a lost node's workers come back on a new one") {
  cluster c;
  auto& a = c.node("a", 2);
  // An open job: nodes come and go while it runs, and the test ends it.
  auto job = cat(open_job("bsp", 4), {"--straggler", "1:+5ms", "--elastic"});
  auto out = c.dir.path() + "/elastic";
  auto sub = c.submit(cat(job, {"--out", out}), "submit");
  auto at = await(*sub, "2 of 4 workers started");
  c.node("b", 2);
  at = std::max(await(*sub, "worker 2 joined (node b)", at), await(*sub, "worker 3 joined (node b)", at));
  a.signal(SIGKILL);
  at = std::max(await(*sub, "worker 0 lost", at), await(*sub, "worker 1 lost", at));
  c.node("c", 2);
  at = std::max(await(*sub, "worker 0 joined (node c)", at), await(*sub, "worker 1 joined (node c)", at));
  await(*sub, "] eval ", at);  // trained on after they came back
  interrupt(*sub);
  auto summary = slurp(out + "/summary.json");
  for (auto where : {"\"worker\": 2, \"t_s\"", "\"worker\": 0, \"t_s\""})
    CHECK_MESSAGE(summary.find(where) != std::string::npos, summary);
  CHECK(summary.find("\"where\": \"node b\"") != std::string::npos);
  CHECK(summary.find("\"where\": \"node c\"") != std::string::npos);
  CHECK(summary.find("(node a)") != std::string::npos);  // the losses name the node they happened on
  CHECK(json_number(summary, "lost_workers") == 2);
  CHECK(sub->out().find("worker 3 joined at") != std::string::npos);
  // Before its node joined, worker 3 did nothing; after, it trained.
  auto trace = slurp(out + "/trace.jsonl");
  CHECK(trace.find("\"kind\": \"push\", \"worker\": 3") != std::string::npos);
  // A job that is not elastic still needs all its slots.
  auto strict = c.submit(small_job("bsp", 8, 1), "strict");
  CHECK(strict->wait(hang_deadline) == 2);
  CHECK(strict->err().find("the job needs 8 worker slots") != std::string::npos);
}

TEST_CASE("cluster: an elastic job takes the slots another job frees when it ends") {
  cluster c;
  c.node("a", 3);
  auto other = c.submit(open_job("bsp", 2), "other");
  await(*other, "workers started");
  auto sub = c.submit(cat(open_job("bsp", 3), {"--elastic"}), "elastic");
  auto at = await(*sub, "1 of 3 workers started");
  interrupt(*other);  // its two slots are free now
  at = std::max(await(*sub, "worker 1 joined (node a)", at), await(*sub, "worker 2 joined (node a)", at));
  await(*sub, "] eval ", at);
  interrupt(*sub);
}
