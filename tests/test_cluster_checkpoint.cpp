// Checkpoints on a real cluster: the head writes them while the job runs;
// when the head is killed, the same submit with --resume, to a new head,
// finishes the job from the newest one and says so.
#include "tests/cluster_fixture.hpp"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <sstream>
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
  // An open job (it runs until the test ends it), checkpointed every 0.3 s.
  auto job = cat(open_job("bsp", 2), {"--straggler", "1:+5ms", "--checkpoint-every", "0.3",
                                      "--checkpoint-dir", ck});
  {
    cluster first;
    first.node("a", 2);
    auto sub = first.submit(cat(job, {"--out", (fs::path(keep.path()) / "lost").string()}), "submit-1");
    auto at = await(*sub, "checkpoint at");
    await(*sub, "] eval ", at);  // a little further on
    first.head->signal(SIGKILL);
    CHECK(sub->wait(hang_deadline) == 1);  // "lost the connection to the head"
    CHECK(sub->err().find("lost the connection to the head") != std::string::npos);
  }
  auto saved = checkpoints(ck);
  REQUIRE(!saved.empty());
  auto newest = saved.back();
  cluster second;
  second.node("b", 2);
  // An option that disagrees with the checkpoint is refused by the head, naming it.
  auto wrong = second.submit(cat(job, {"--resume", ck, "--lr", "0.2"}), "submit-wrong");
  CHECK(wrong->wait(hang_deadline) == 2);
  CHECK_MESSAGE(wrong->err().find("--lr is 0.20000000000000001 here but 0.10000000000000001") != std::string::npos,
                wrong->err());
  auto out = (fs::path(keep.path()) / "resumed").string();
  auto sub = second.submit(cat(job, {"--resume", ck, "--out", out}), "submit-2");
  await(*sub, "] eval ", await(*sub, "] eval "));  // two evaluations: it trained on from there
  interrupt(*sub);
  CHECK_MESSAGE(sub->out().find("resumed from " + newest) != std::string::npos, sub->out());
  auto summary = slurp(out + "/summary.json");
  CHECK(summary.find("\"resumed_from\": \"" + newest + "\"") != std::string::npos);
  auto resumed_at = json_number(summary, "resumed_at_s");
  CHECK(resumed_at > 0.2);
  // The checkpoint's samples (its name: checkpoint-<samples>.bin) were all computed before it,
  // and their computations came with it in the trace; the resumed job pushed more.
  auto name = fs::path(newest).filename().string();
  auto at_checkpoint = std::atof(name.c_str() + name.find('-') + 1);
  CHECK(json_number(summary, "samples") > at_checkpoint);
  std::istringstream trace(slurp(out + "/trace.jsonl"));
  double before = 0, after = 0;
  for (std::string line; std::getline(trace, line);)
    if (line.find("\"kind\": \"compute\"") != std::string::npos)
      ++(json_number(line, "t0") < resumed_at ? before : after);
  CHECK(before * 64 >= at_checkpoint);  // batch 64
  CHECK(after >= 1);
  CHECK(json_number(slurp(out + "/trace.jsonl"), "t0") < resumed_at);  // it starts before the resume
}
