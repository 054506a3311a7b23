// A head that comes back (head --state; docs/cluster.md, "The head dies
// unexpectedly"): killed mid-job and started again on the same folder and
// port, it takes its nodes back as they join again (the same processes), the
// job goes on from its newest checkpoint, and the submitter, which waited,
// reattaches and gets the outcome. A journal that is torn, corrupt or of
// another build is refused at start, naming the file, and left as it is; a
// folder another head holds is refused too.
#include "tests/cluster_fixture.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace syncpoint::testing;
namespace fs = std::filesystem;

namespace {

std::string bytes_of(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A head on `port` (0: a free one) keeping its journal in `state`.
std::unique_ptr<process> state_head(const temp_dir& dir, const std::string& state, int port, const std::string& name,
                                    const std::vector<std::string>& more = {}) {
  return std::make_unique<process>(cat({syncpoint_binary(), "head", "--host", "127.0.0.1", "--port",
                                        std::to_string(port), "--dashboard", "off", "--state", state},
                                       more),
                                   dir.path(), name);
}

// Waits until node `p` has joined a head `n` times (its stdout says so each time).
void await_joins(process& p, int n) {
  size_t at = 0;
  for (int k = 0; k < n; ++k) {
    at = p.wait_for_line([](const std::string& line) { return line.find("joined the head") != std::string::npos; },
                         hang_deadline, false, at);
    REQUIRE_MESSAGE(at != std::string::npos, "node joined " << k << " times, not " << n << "\n" << p.out() << p.err());
  }
}

// A head with --state, nodes a and b (a slot each) and an open bsp job on
// them, checkpointed every 0.3 s: past its first checkpoint and an evaluation
// after it (`at`: the offset in the submitter's stderr).
struct journaled_job {
  temp_dir keep;
  std::string state = keep / "state";
  std::string ck = keep / "ck";
  cluster c{std::vector<std::string>{"--state", state}};
  process& a = c.node("a", 1);
  process& b = c.node("b", 1);
  std::unique_ptr<process> sub =
    c.submit(cat(open_job("bsp", 2), {"--checkpoint-every", "0.3", "--checkpoint-dir", ck, "--out", keep / "out"}),
             "submit");
  size_t at = await(*sub, "] eval ", await(*sub, "checkpoint at"));
};

}  // namespace

TEST_CASE("cluster: the head killed mid-job and started again with --state: the same nodes take the job on from its newest checkpoint, and the submitter gets its outcome") {
  journaled_job j;
  auto& [keep, state, ck, c, a, b, sub, at] = j;
  REQUIRE_MESSAGE(a.out().find("it keeps a journal") != std::string::npos, a.out());
  c.head->signal(SIGKILL);
  CHECK(c.head->wait(hang_deadline) != 0);
  // The nodes and the submitter wait for it.
  await(a, "Waiting up to 120 s for it to come back");
  await(b, "Waiting up to 120 s for it to come back");
  auto lost_at = await(*sub, "waiting up to 120 s for it to come back", at);
  c.head = state_head(c.dir, state, c.port, "head-2");
  REQUIRE_MESSAGE(c.head->wait_for("listening on", hang_deadline), c.head->err());
  auto back = await(*sub, "the head is back: job 1 reattached", lost_at);
  await(*c.head, "job 1 goes on from its newest checkpoint");
  // It trains on: two evaluations after the restart.
  await(*sub, "] eval ", await(*sub, "] eval ", back));
  await_joins(a, 2);
  await_joins(b, 2);
  CHECK(a.running());
  CHECK(b.running());
  CHECK_MESSAGE(c.head->err().find("node 'a' joined") != std::string::npos, c.head->err());
  CHECK_MESSAGE(c.head->err().find("node 'b' joined") != std::string::npos, c.head->err());
  interrupt(*sub);
  CHECK_MESSAGE(sub->out().find("resumed from " + ck) != std::string::npos, sub->out());
  auto summary = slurp(keep / "out" + "/summary.json");
  CHECK(summary.find("\"resumed_from\": \"" + ck + "/checkpoint-") != std::string::npos);
  // The job's end is in the journal: a third head does not carry it on.
  c.head->signal(SIGKILL);
  c.head->wait(hang_deadline);
  c.head = state_head(c.dir, state, c.port, "head-3");
  REQUIRE_MESSAGE(c.head->wait_for("listening on", hang_deadline), c.head->err());
  await_joins(a, 3);
  await_joins(b, 3);
  CHECK_MESSAGE(c.head->err().find("goes on from") == std::string::npos, c.head->err());
}

TEST_CASE("cluster: a replicated job (shards on the nodes, a replica each) goes on from its newest checkpoint when the head comes back, each shard's copies on both nodes again") {
  temp_dir keep;
  std::string state = keep / "state", ck = keep / "ck";
  cluster c{std::vector<std::string>{"--state", state}};
  c.node("a", 1);
  c.node("b", 1);
  auto sub = c.submit(cat(open_job("asp", 2), {"--ps-placement", "nodes", "--ps-replicas", "1", "--checkpoint-every",
                                               "0.3", "--checkpoint-dir", ck, "--out", keep / "out"}),
                      "submit");
  auto at = await(*sub, "PS shards on a+b, b+a");
  at = await(*sub, "] eval ", await(*sub, "checkpoint at", at));
  c.head->signal(SIGKILL);
  CHECK(c.head->wait(hang_deadline) != 0);
  auto lost_at = await(*sub, "waiting up to 120 s for it to come back", at);
  c.head = state_head(c.dir, state, c.port, "head-2");
  REQUIRE_MESSAGE(c.head->wait_for("listening on", hang_deadline), c.head->err());
  auto back = await(*sub, "the head is back: job 1 reattached", lost_at);
  await(*c.head, "job 1 goes on from its newest checkpoint");
  // The job's start on the new head: after the loss (the relay may hand its
  // lines on before the submitter says it reattached), in the order the nodes joined.
  std::string placed;
  back = await_line(
    *sub,
    [&](const std::string& line) {
      auto on = line.find("PS shards on ");
      placed = on == std::string::npos ? "" : line.substr(on);
      return !placed.empty();
    },
    "the job's start on the new head", lost_at);
  CHECK_MESSAGE((placed == "PS shards on a+b, b+a" || placed == "PS shards on b+a, a+b"), placed);
  await(*sub, "] eval ", await(*sub, "] eval ", back));  // it trains on
  interrupt(*sub);
  auto summary = slurp(keep / "out" + "/summary.json");
  CHECK_MESSAGE(summary.find("\"resumed_from\": \"" + ck + "/checkpoint-") != std::string::npos, summary);
}

TEST_CASE("cluster: a head whose --state journal is torn, corrupt or of another build is refused at start, naming the file and leaving it as it is") {
  temp_dir dir;
  auto state = dir / "state";
  {  // a journal written by a head, then stopped as a user would
    auto head = state_head(dir, state, 0, "head-1");
    REQUIRE_MESSAGE(head->wait_for("listening on", hang_deadline), head->err());
    // The folder is this head's: a second head on it is refused.
    auto other = state_head(dir, state, 0, "head-other");
    CHECK(other->wait(hang_deadline) == 2);
    CHECK_MESSAGE(other->err().find("--state " + state + " is in use by another head") != std::string::npos,
                  other->err());
    head->signal(SIGINT);
    CHECK(head->wait(hang_deadline) == 0);
  }
  auto file = state + "/head.journal";
  auto good = bytes_of(file);
  REQUIRE(good.size() > 40);
  struct damage {
    const char* what;
    std::string bytes;
    const char* says;
  };
  auto foreign = good;
  foreign[foreign.find("syncpoint-head-journal") + 22 + 4 + 8] ^= 0x01;  // (magic, format, length) then the build's fingerprint
  std::vector<damage> cases{
    {"torn", good.substr(0, good.size() / 2), "is torn"},
    {"corrupt", good.substr(0, good.size() - 1) + char(good.back() ^ 0x40), "is corrupt"},
    {"another build", foreign, "was written by another build"},
    {"not a journal", "name,slots\na,4\n", "is not a syncpoint head journal"},
  };
  int n = 0;
  for (auto& d : cases) {
    CAPTURE(d.what);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << d.bytes;
    auto head = state_head(dir, state, 0, "head-bad" + std::to_string(n++));
    CHECK(head->wait(hang_deadline) == 2);
    CHECK_MESSAGE(head->err().find(file) != std::string::npos, head->err());
    CHECK_MESSAGE(head->err().find(d.says) != std::string::npos, head->err());
    CHECK(head->out().find("listening on") == std::string::npos);
    CHECK(bytes_of(file) == d.bytes);
  }
}

TEST_CASE("cluster: a node stopped across the head's restart wakes holding its old job's worker, drops it and joins again, and the job waits for it") {
  journaled_job j;
  auto& [keep, state, ck, c, a, b, sub, at] = j;
  b.signal(SIGSTOP);  // it sleeps through the head's loss and return, holding job 1's worker
  c.head->signal(SIGKILL);
  c.head->wait(hang_deadline);
  await(a, "Waiting up to 120 s for it to come back");
  auto lost = await(*sub, "waiting up to 120 s for it to come back", at);
  c.head = state_head(c.dir, state, c.port, "head-2", {"--rejoin-wait", "600"});
  REQUIRE_MESSAGE(c.head->wait_for("listening on", hang_deadline), c.head->err());
  auto back = await(*sub, "job 1 reattached", lost);
  await_joins(a, 2);  // the job waits for b (for 600 s): it cannot go on before b wakes
  CHECK(c.head->err().find("job 1 goes on from its newest checkpoint") == std::string::npos);
  b.signal(SIGCONT);
  await(b, "its jobs' workers and shards here are gone with it");
  await_joins(b, 2);
  auto on = await(*c.head, "job 1 goes on from its newest checkpoint");
  CHECK(c.head->err().rfind("node 'b' joined", on) != std::string::npos);  // b came back first
  back = await(*sub, "] eval ", await(*sub, "] eval ", back));  // b's old worker was never heard of
  CHECK_MESSAGE(sub->err().find("2 workers started on a (1), b (1)", lost) != std::string::npos, sub->err());
  interrupt(*sub);
  CHECK(slurp(keep / "out" + "/summary.json").find("\"resumed_from\": \"" + ck) != std::string::npos);
}
