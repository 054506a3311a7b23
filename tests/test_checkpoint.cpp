// The checkpoint file: a round trip, and every way a file can be wrong.
#include "runtime/records/checkpoint_file.hpp"
#include <syncpoint/job_config.hpp>
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
  c.state.settings = {{"protocol", "wbsp"}, {"lr", "0.050000000000000003"}};
  c.state.ps.version = 17;
  c.state.ps.w = {0.5f, -1.25f, 3.0f, 1e-7f};
  c.state.ps.velocity = {0.1f, 0.2f, -0.3f, 0};
  c.state.ps.mean_staleness = 2.5;
  c.state.ps.visible = {0.5f, -1.25f, 3.0f, 0};
  saved_transfer pull;
  pull.worker = 1;
  pull.values = c.state.ps.w;  // weights on the link: equal to the PS's, stored once
  c.state.ps.in_transit = {pull};
  c.state.workers.resize(2);
  c.state.workers[0].model = c.state.ps.w;
  c.state.workers[1].model = c.state.ps.visible;
  c.state.workers[1].rng_state = "9 10 11";
  c.state.workers[1].batch = 32;
  c.state.workers[1].grad = {1, 2, 3, 4};
  c.state.coordinator.clock = {5, 4};
  c.state.coordinator.protocol_state = std::string("\0\1round", 7);
  c.state.timers = {{0, 1500, caf::atom("sp_comp"), false, 0}, {saved_timer::ps, 1700, caf::atom("sp_link"), true, 3},
                    {saved_timer::ps, 1800, caf::atom("sp_link"), true, 4, 1}};
  // A replicated PS: a replica's link (a push on its way in), who had
  // reported a push (the replica, not the primary), and a copy lost.
  c.state.ps.copy_links = {{}, {2.5e-3, {pull}, 7, {}, {}}};
  c.state.coordinator.partial = {{{1, 9}, 1, false, {false, true}}};
  c.state.coordinator.copy_lost = {false, true, false};
  c.state.coordinator.serving = {1};
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
  CHECK(got.state.settings == want.state.settings);
  CHECK(got.state.ps.version == 17);
  CHECK(got.state.ps.w == want.state.ps.w);
  CHECK(got.state.ps.velocity == want.state.ps.velocity);
  CHECK(got.state.ps.visible == want.state.ps.visible);
  CHECK(got.state.ps.mean_staleness == 2.5);
  REQUIRE(got.state.ps.in_transit.size() == 1);
  CHECK(got.state.ps.in_transit[0].values == want.state.ps.w);
  REQUIRE(got.state.workers.size() == 2);
  CHECK(got.state.workers[0].model == want.state.ps.w);
  CHECK(got.state.workers[1].model == want.state.ps.visible);
  CHECK(got.state.workers[1].rng_state == "9 10 11");
  CHECK(got.state.workers[1].batch == 32);
  CHECK(got.state.workers[1].grad == want.state.workers[1].grad);
  CHECK(got.state.coordinator.clock == want.state.coordinator.clock);
  CHECK(got.state.coordinator.protocol_state == want.state.coordinator.protocol_state);
  REQUIRE(got.state.timers.size() == 3);
  CHECK(got.state.timers[1].to == saved_timer::ps);
  CHECK(got.state.timers[1].what == caf::atom("sp_link"));
  CHECK(got.state.timers[1].id == 3);
  CHECK(got.state.timers[1].copy == 0);
  CHECK(got.state.timers[2].copy == 1);
  REQUIRE(got.state.ps.copy_links.size() == 2);
  CHECK(got.state.ps.copy_links[0].in_transit.empty());
  CHECK(got.state.ps.copy_links[1].link_free_at == 2.5e-3);
  CHECK(got.state.ps.copy_links[1].next_transfer == 7);
  REQUIRE(got.state.ps.copy_links[1].in_transit.size() == 1);
  CHECK(got.state.ps.copy_links[1].in_transit[0].values == want.state.ps.w);
  REQUIRE(got.state.coordinator.partial.size() == 1);
  CHECK(got.state.coordinator.partial[0].info.iter == 9);
  CHECK(got.state.coordinator.partial[0].in == std::vector<bool>{false, true});
  CHECK(got.state.coordinator.copy_lost == std::vector<bool>{false, true, false});
  CHECK(got.state.coordinator.serving == std::vector<uint32_t>{1});
  REQUIRE(got.state.trace.size() == 2);
  CHECK(got.state.trace[1].note == "bsp>asp share");
  CHECK(got.state.trace[0].value == 0.75);
  CHECK(newest_checkpoint((dir.path / "none").string()).empty());
}

TEST_CASE("checkpoint: equal weight vectors are stored once, and pruning keeps the newest") {
  folder dir;
  auto c = sample(640);
  auto one = fs::file_size(write_checkpoint(dir.path.string(), c));
  // Eight more workers holding the PS's model cost a few bytes each, not a model each.
  c.state.workers.resize(10);
  for (size_t i = 2; i < 10; ++i)
    c.state.workers[i].model = c.state.ps.w;
  c.state.ps.w.resize(4096, 0.5f);
  c.state.ps.velocity.resize(4096);
  for (auto& w : c.state.workers)
    w.model = c.state.ps.w;
  c.head.parameters = 4096;
  c.state.samples = 1280;
  auto file = write_checkpoint(dir.path.string(), c);
  CHECK(fs::file_size(file) < one + 3 * 4096 * sizeof(float));  // w, velocity, one pooled copy
  auto got = read_checkpoint(file, c.head);
  for (auto& w : got.state.workers)
    CHECK(w.model == c.state.ps.w);
  c.state.samples = 1920;
  write_checkpoint(dir.path.string(), c);
  prune_checkpoints(dir.path.string(), 2);
  CHECK_FALSE(fs::exists(dir.path / "checkpoint-000000000640.bin"));
  CHECK(fs::exists(file));
  CHECK(newest_checkpoint(dir.path.string()) == (dir.path / "checkpoint-000000001920.bin").string());
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
  flipped[flipped.size() - 12 - 9] ^= 0x40;  // in the payload, before the rows' end mark (12 bytes)
  refused(flipped, c.head, "corrupt (its checksum does not match)");
  refused("hello, I am a text file, not a checkpoint at all", c.head, "not a syncpoint checkpoint");
  refused("", c.head, "truncated");
  auto other_format = c;
  other_format.head.format = 99;
  spit(file, slurp(write_checkpoint(dir.path.string(), other_format)));
  CHECK_THROWS_WITH_AS(read_checkpoint(file, c.head), doctest::Contains(("format version 99, but this build reads version " + std::to_string(checkpoint_format)).c_str()),
                       config_error);
  spit(file, good);
  refused(good, {checkpoint_format, "mlp", 5, "wbsp"}, "model 'mlp' with 4 parameters, but the job's model is 'mlp' with 5");
  refused(good, {checkpoint_format, "cnn", 4, "wbsp"}, "but the job's model is 'cnn'");
  refused(good, {checkpoint_format, "mlp", 4, "bsp"}, "it is of protocol 'wbsp', but the job's is 'bsp'");
  // Behind a valid checksum: a payload whose weights do not fit the header, and one whose
  // last weight reference (the payload's last 4 bytes, little-endian) points past the pool.
  auto short_weights = c;
  short_weights.state.ps.w.pop_back();
  spit(file, slurp(write_checkpoint(dir.path.string(), short_weights)));
  CHECK_THROWS_WITH_AS(read_checkpoint(file, c.head), doctest::Contains("corrupt (3 weights for 4 parameters)"),
                       config_error);
  auto header = checkpoint_file_header(c.head, "").size();
  auto payload = good.substr(header, good.size() - header - 12);
  auto end_mark = good.substr(good.size() - 12);  // a dense model's: no rows
  CHECK(end_mark == std::string(12, '\0'));
  refused(good.substr(0, good.size() - 12), c.head,
          "truncated (its rows end at byte " + std::to_string(good.size() - 12) + ", without the end mark)");
  for (int i = 1; i <= 4; ++i)
    payload[payload.size() - static_cast<size_t>(i)] = '\xff';
  refused(checkpoint_file_header(c.head, payload) + payload + end_mark, c.head,
          "corrupt (a weight reference points nowhere)");
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
