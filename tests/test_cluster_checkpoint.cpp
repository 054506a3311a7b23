// Checkpoints on a real cluster: the head writes them while the job runs;
// when the head is killed, the same submit with --resume, to a new head,
// finishes the job from the newest one and says so.
#include "tests/cluster_fixture.hpp"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <thread>

using namespace syncpoint::testing;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> checkpoints(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".bin")
      out.push_back(it->path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("cluster: the head killed mid-job, the job resubmitted with --resume to a new head finishes from the newest checkpoint") {
  temp_dir keep;  // outlives both clusters
  auto ck = (fs::path(keep.path()) / "ck").string();
  // 20 epochs of a small job, slowed so that it runs for a few seconds.
  auto job = cat(small_job("bsp", 2, 20), {"--straggler", "1:+5ms", "--checkpoint-every", "0.3",
                                           "--checkpoint-dir", ck});
  {
    cluster first;
    first.node("a", 2);
    auto sub = first.submit(cat(job, {"--out", (fs::path(keep.path()) / "lost").string()}), "submit-1");
    REQUIRE_MESSAGE(sub->wait_for("checkpoint at", 60s, true), sub->err());
    REQUIRE_MESSAGE(sub->wait_for("eval", 30s, true), sub->err());  // a little further on
    first.head->signal(SIGKILL);
    CHECK(sub->wait(20s) == 1);  // "lost the connection to the head"
    CHECK(sub->err().find("lost the connection to the head") != std::string::npos);
  }
  auto saved = checkpoints(ck);
  REQUIRE(!saved.empty());
  auto newest = saved.back();
  cluster second;
  second.node("b", 2);
  // An option that disagrees with the checkpoint is refused by the head, naming it.
  auto wrong = second.submit(cat(job, {"--resume", ck, "--lr", "0.2"}), "submit-wrong");
  CHECK(wrong->wait(30s) == 2);
  CHECK_MESSAGE(wrong->err().find("--lr is 0.20000000000000001 here but 0.10000000000000001") != std::string::npos,
                wrong->err());
  auto out = (fs::path(keep.path()) / "resumed").string();
  auto sub = second.submit(cat(job, {"--resume", ck, "--out", out}), "submit-2");
  REQUIRE_MESSAGE(sub->wait(120s) == 0, sub->err());
  CHECK_MESSAGE(sub->out().find("resumed from " + newest) != std::string::npos, sub->out());
  auto summary = slurp(out + "/summary.json");
  CHECK(summary.find("\"resumed_from\": \"" + newest + "\"") != std::string::npos);
  CHECK(json_number(summary, "resumed_at_s") > 0.2);
  CHECK(json_number(summary, "samples") >= 20 * 4000);
  // The trace goes back to the start of the first run: it was in the checkpoint.
  auto trace = slurp(out + "/trace.jsonl");
  CHECK(json_number(trace, "t0") < json_number(summary, "resumed_at_s") / 2);  // from near the run's start
  CHECK(std::count(trace.begin(), trace.end(), '\n') > 1000);
}
