// The checkpoint file: a round trip, and every way a file can be wrong.
#include "runtime/checkpoint_file.hpp"
#include "runtime/job_config.hpp"
#include "tests/helpers.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace syncpoint;
using syncpoint::testing::slurp;
namespace fs = std::filesystem;

namespace {

checkpoint sample(uint64_t samples) {
  checkpoint c;
  c.head = {checkpoint_format, "mlp", 4, "wbsp"};
  c.state.time_ns = 1234567;
  c.state.samples = samples;
  c.state.version = 17;
  c.state.weights = {0.5f, -1.25f, 3.0f, 1e-7f};
  c.state.velocity = {0.1f, 0.2f, -0.3f, 0};
  c.state.mean_staleness = 2.5;
  c.state.workers = {{5, 320, "12345 678", 64}, {4, 256, "9 10 11", 32}};
  c.state.protocol_state = std::string("\0\1round", 7);
  c.state.trace = {{"compute", 0, 10, 20, 1, 0, 0.75, ""}, {"phase", -1, 30, 30, 64, 3, 0, "bsp>asp share"}};
  return c;
}

void spit(const std::string& f, const std::string& bytes) {
  std::ofstream(f, std::ios::binary | std::ios::trunc) << bytes;
}

struct folder {
  fs::path path = fs::temp_directory_path() / ("syncpoint_checkpoints_" + std::to_string(getpid()));
  folder() { fs::remove_all(path); }
  ~folder() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("checkpoint: written atomically and read back field for field, and the newest is the one with most samples") {
  folder dir;
  auto first = write_checkpoint(dir.path.string(), sample(640));
  auto second = write_checkpoint(dir.path.string(), sample(1280));
  CHECK(fs::path(first).filename() == "checkpoint-000000000640.bin");
  CHECK(newest_checkpoint(dir.path.string()) == second);
  CHECK_FALSE(fs::exists(dir.path / ".checkpoint.tmp"));
  auto want = sample(1280);
  auto got = read_checkpoint(second, want.head);
  CHECK(got.state.time_ns == want.state.time_ns);
  CHECK(got.state.samples == 1280);
  CHECK(got.state.version == 17);
  CHECK(got.state.weights == want.state.weights);
  CHECK(got.state.velocity == want.state.velocity);
  CHECK(got.state.mean_staleness == 2.5);
  REQUIRE(got.state.workers.size() == 2);
  CHECK(got.state.workers[1].rng_state == "9 10 11");
  CHECK(got.state.workers[1].batch == 32);
  CHECK(got.state.protocol_state == want.state.protocol_state);
  REQUIRE(got.state.trace.size() == 2);
  CHECK(got.state.trace[1].note == "bsp>asp share");
  CHECK(got.state.trace[0].value == 0.75);
  CHECK(newest_checkpoint((dir.path / "none").string()).empty());
}

TEST_CASE("checkpoint: truncated, corrupt, foreign and mismatched files are refused, naming the file and the fault") {
  folder dir;
  auto c = sample(640);
  auto file = write_checkpoint(dir.path.string(), c);
  auto good = slurp(file);
  auto refused = [&](const std::string& bytes, const checkpoint_header& expect, const std::string& says) {
    spit(file, bytes);
    CHECK_THROWS_WITH_AS(read_checkpoint(file, expect), doctest::Contains(says.c_str()), config_error);
    CHECK_THROWS_WITH_AS(read_checkpoint(file, expect), doctest::Contains(("checkpoint '" + file + "'").c_str()), config_error);
  };
  refused(good.substr(0, good.size() - 5), c.head, "truncated");
  refused(good.substr(0, 12), c.head, "truncated");
  auto flipped = good;
  flipped[flipped.size() - 9] ^= 0x40;
  refused(flipped, c.head, "corrupt (its checksum does not match)");
  refused("hello, I am a text file, not a checkpoint at all", c.head, "not a syncpoint checkpoint");
  refused("", c.head, "truncated");
  auto other_format = c;
  other_format.head.format = 99;
  spit(file, slurp(write_checkpoint(dir.path.string(), other_format)));
  CHECK_THROWS_WITH_AS(read_checkpoint(file, c.head), doctest::Contains("format version 99, but this build reads version 1"),
                       config_error);
  spit(file, good);
  refused(good, {checkpoint_format, "mlp", 5, "wbsp"}, "model 'mlp' with 4 parameters, but the job's model is 'mlp' with 5");
  refused(good, {checkpoint_format, "cnn", 4, "wbsp"}, "but the job's model is 'cnn'");
  refused(good, {checkpoint_format, "mlp", 4, "bsp"}, "it is of protocol 'wbsp', but the job's is 'bsp'");
  spit(file, good);
  CHECK(read_checkpoint(file, c.head).state.samples == 640);  // the good bytes still read
}

TEST_CASE("checkpoint: a failed write leaves the previous checkpoint intact") {
  folder dir;
  auto c = sample(640);
  auto first = write_checkpoint(dir.path.string(), c);
  auto before = slurp(first);
  // The temporary file cannot be created (a folder sits at its path): the write fails ...
  fs::create_directories(dir.path / ".checkpoint.tmp");
  c.state.samples = 1280;
  CHECK_THROWS_WITH_AS(write_checkpoint(dir.path.string(), c), doctest::Contains("cannot write checkpoint"), config_error);
  // ... and leaves the older one as it was, still the newest readable one.
  CHECK(newest_checkpoint(dir.path.string()) == first);
  CHECK(slurp(first) == before);
  CHECK(read_checkpoint(first, c.head).state.samples == 640);
  // Writing onto a full device fails the same way.
  fs::remove_all(dir.path / ".checkpoint.tmp");
  fs::create_symlink("/dev/full", dir.path / ".checkpoint.tmp");
  CHECK_THROWS_WITH_AS(write_checkpoint(dir.path.string(), c), doctest::Contains("previous ones are intact"), config_error);
  CHECK(slurp(first) == before);
  CHECK_FALSE(fs::exists(dir.path / "checkpoint-000000001280.bin"));
}
