// `syncpoint sweep --head`: the cells of a sweep on a head and two nodes,
// one per free slot, their files sent back to the submitting process; a node
// killed mid-cell has its cell placed again on the other, with the result a
// local sweep gives.
#include "tests/cluster_fixture.hpp"
#include "tests/helpers.hpp"
#include "bench/process.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <atomic>
#include <future>
#include <thread>
#include <unistd.h>

using namespace syncpoint;
using namespace syncpoint::testing;
namespace fs = std::filesystem;

namespace {

// Waits until a process opens one of the named pipes in `dir` for reading,
// and returns the writing end: the reader stays blocked in its read while the
// test holds it and writes nothing. Each pipe's opener blocks in open() until
// a reader comes (the event); the others are then let go by opening their
// reading ends here.
int await_fifo_reader(const fs::path& dir) {
  std::vector<fs::path> fifos;
  for (auto& f : fs::directory_iterator(dir))
    fifos.push_back(f.path());
  std::promise<int> first;
  std::atomic<bool> taken{false};
  std::vector<std::thread> openers;
  for (auto& f : fifos)
    openers.emplace_back([&, f] {
      int fd = open(f.c_str(), O_WRONLY);  // blocks until a reader opens it
      if (fd >= 0 && !taken.exchange(true))
        first.set_value(fd);
      else if (fd >= 0)
        close(fd);
    });
  auto got = first.get_future();
  bool came = got.wait_for(hang_deadline) == std::future_status::ready;  // a deadline for hangs only
  std::vector<int> readers;
  for (auto& f : fifos)  // lets the openers still blocked go
    readers.push_back(open(f.c_str(), O_RDONLY | O_NONBLOCK));
  for (auto& t : openers)
    t.join();
  for (int r : readers)
    if (r >= 0)
      close(r);
  REQUIRE_MESSAGE(came, "no process opened the pipes in " << dir << " within " << hang_deadline.count() << " s");
  return got.get();
}

}  // namespace

TEST_CASE("cluster: a sweep on a head and two nodes collects every cell, and a node killed mid-cell has its "
          "cell rerun elsewhere with the local result") {
  cluster c;
  // The nodes' cell folders go inside the test's folder: a node killed by
  // SIGKILL leaves its own behind, and the test's is removed at the end.
  setenv("TMPDIR", c.dir.path().c_str(), 1);
  c.node("a", 1);
  c.node("b", 1);
  auto root = fs::path(c.dir.path());
  auto good = root / "good", good2 = root / "good2", pipes = root / "pipes";
  for (auto& d : {good, good2, pipes})
    fs::create_directories(d);
  write_idx_files(good);
  write_idx_files(good2);
  make_idx_pipes(pipes);  // its cell cannot finish while the test holds it
  auto grid = std::vector<std::string>{"--grid", "data=" + good.string() + "," + good2.string() + "," + pipes.string(),
                                       "--seeds", "1", "--dataset", "idx", "--model", "softmax", "--iter-cost", "5",
                                       "--epochs", "1", "--workers", "2"};
  auto sw = c.run("sweep", cat(grid, {"--head", c.address(), "--out", (root / "cs").string()}), "sweep");
  // The third cell starts once one of the first two freed its slot.
  std::string started;
  auto at = await_line(*sw, [&](const std::string& line) {
    bool match = line.find("data=" + pipes.string() + " seed=1 started on node '") != std::string::npos;
    if (match)
      started = line;
    return match;
  }, "the blocking cell's start", 0);
  auto x = started.substr(started.find("node '") + 6, 1);
  REQUIRE((x == "a" || x == "b"));
  auto y = x == "a" ? std::string("b") : std::string("a");
  int fd = await_fifo_reader(pipes);  // x's train process is reading the cell's data: x runs the cell
  // Later readers of the folder find files: the rerun cannot block.
  fs::rename(pipes, root / "pipes.old");
  fs::create_directories(pipes);
  write_idx_files(pipes);
  c.nodes[x]->signal(SIGKILL);
  CHECK(c.nodes[x]->wait(hang_deadline) == 128 + SIGKILL);
  close(fd);
  at = await(*sw, "seed=1 lost with node '" + x + "'", at);
  await(*sw, "data=" + pipes.string() + " seed=1 started on node '" + y + "'", at);
  REQUIRE_MESSAGE(sw->wait(hang_deadline) == 0, sw->err());
  CHECK_MESSAGE(sw->err().find("[3/3]") != std::string::npos, sw->err());
  CHECK(sw->err().find("FAILED") == std::string::npos);
  size_t cells = 0;
  for (auto& e : fs::directory_iterator(root / "cs" / "cells")) {
    CHECK_MESSAGE(e.path().extension() != ".partial", e.path());
    ++cells;
  }
  CHECK(cells == 3);
  CHECK(fs::exists(root / "cs" / "index.html"));
  auto s = c.status();
  CHECK_MESSAGE(s.find("sweep") != std::string::npos, s);

  // The same grid on this machine gives the same runs, byte for byte (virtual clock).
  auto local = c.run("sweep", cat(grid, {"--jobs", "2", "--out", (root / "local").string()}), "local");
  REQUIRE_MESSAGE(local->wait(hang_deadline) == 0, local->err());
  for (auto& e : fs::directory_iterator(root / "local" / "cells")) {
    auto name = e.path().filename();
    for (auto* f : {"summary.json", "trace.jsonl"}) {
      CAPTURE(name);
      CAPTURE(f);
      auto mine = slurp(e.path() / f);
      CHECK(!mine.empty());
      CHECK(mine == slurp(root / "cs" / "cells" / name / f));
    }
  }
}
