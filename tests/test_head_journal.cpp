// The head's journal (runtime/cluster/control/head_journal.hpp): read back field for
// field, and refused, naming the file and left as it is, when torn, corrupt,
// of another format or of another build.
#include "runtime/cluster/control/head_journal.hpp"
#include <syncpoint/job_config.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

using namespace syncpoint;
using namespace syncpoint::cluster;
namespace fs = std::filesystem;

namespace {

struct journal_folder {
  fs::path path = fs::temp_directory_path() / ("syncpoint_journal_" + std::to_string(getpid()));
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  journal_folder() { fs::remove_all(path); }
  ~journal_folder() { fs::remove_all(path); }
  std::string dir() const { return path.string(); }
  std::string file() const { return journal_file(dir()); }
};

std::string slurp_bytes(const std::string& f) {
  std::ifstream in(f, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit_bytes(const std::string& f, const std::string& bytes) {
  std::ofstream(f, std::ios::binary | std::ios::trunc) << bytes;
}

head_journal sample() {
  head_journal j;
  j.epoch = 3;
  j.next_job = 8;
  j.nodes = {{"a", 4, {}}, {"b", 2, {0, 1}}};
  journal_job job;
  job.id = 7;
  job.plan.cfg.protocol = "ssp";
  job.plan.cfg.workers = 4;
  job.plan.bounds = {0, 100, 203};
  job.plan.lr = 0.05;
  job.stop_token = "0123abcd";
  job.state = job_stage::running;
  job.worker_nodes = {"a", "b", "a", "b"};
  job.shard_nodes = {"a", "b"};
  job.replica_nodes = {{"b"}, {"a"}};
  job.checkpoint = "/data/ck/checkpoint-000000012800.bin";
  job.restarts = 1;
  j.jobs.push_back(job);
  journal_job done = job;
  done.id = 6;
  done.state = job_stage::done;
  done.outcome = "done";
  j.jobs.push_back(done);
  return j;
}

// The error reading the folder's journal gives (none: "").
std::string refusal(journal_folder& f) {
  try {
    read_journal(f.sys, f.dir());
  } catch (const config_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("head journal: written whole and read back field for field, and none in a folder is none") {
  journal_folder f;
  CHECK_FALSE(read_journal(f.sys, f.dir()).has_value());
  write_journal(f.sys, f.dir(), sample());
  auto back = read_journal(f.sys, f.dir());
  REQUIRE(back.has_value());
  CHECK(back->epoch == 3);
  CHECK(back->next_job == 8);
  REQUIRE(back->nodes.size() == 2);
  CHECK(back->nodes[1].name == "b");
  CHECK(back->nodes[1].gpus == std::vector<int32_t>{0, 1});
  REQUIRE(back->jobs.size() == 2);
  auto& job = back->jobs[0];
  CHECK(job.id == 7);
  CHECK(job.plan.cfg.protocol == "ssp");
  CHECK(job.plan.cfg.workers == 4);
  CHECK(job.plan.bounds == std::vector<uint64_t>{0, 100, 203});
  CHECK(job.plan.lr == 0.05);
  CHECK(job.stop_token == "0123abcd");
  CHECK(job.state == job_stage::running);
  CHECK(job.worker_nodes == std::vector<std::string>{"a", "b", "a", "b"});
  CHECK(job.replica_nodes == std::vector<std::vector<std::string>>{{"b"}, {"a"}});
  CHECK(job.checkpoint == "/data/ck/checkpoint-000000012800.bin");
  CHECK(job.restarts == 1);
  CHECK(back->jobs[1].state == job_stage::done);
  CHECK(back->jobs[1].outcome == "done");
  // The owner's alone: it holds the jobs' stop tokens.
  CHECK((fs::status(f.file()).permissions() & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
  CHECK((fs::status(f.path).permissions() & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
  CHECK_FALSE(fs::exists(f.path / ".head.journal.tmp"));
  // Replaced whole: a second write is read back as it is.
  auto next = sample();
  next.epoch = 4;
  next.jobs.pop_back();
  write_journal(f.sys, f.dir(), next);
  back = read_journal(f.sys, f.dir());
  REQUIRE(back.has_value());
  CHECK(back->epoch == 4);
  CHECK(back->jobs.size() == 1);
}

TEST_CASE("head journal: torn, corrupt, of another format, of another build or no journal at all: refused, naming "
          "the file, and left as it is") {
  journal_folder f;
  write_journal(f.sys, f.dir(), sample());
  auto good = slurp_bytes(f.file());
  const std::string magic = "syncpoint-head-journal";
  auto refused_with = [&](const std::string& bytes, const std::string& why) {
    spit_bytes(f.file(), bytes);
    auto text = refusal(f);
    CAPTURE(text);
    CHECK(text.find("the head's journal '" + f.file() + "' " + why) != std::string::npos);
    CHECK(text.find("leaves it as it is") != std::string::npos);
    CHECK(slurp_bytes(f.file()) == bytes);  // nothing written over it
  };
  refused_with(good.substr(0, good.size() - 1), "is torn (");  // its last byte lost
  refused_with(good.substr(0, magic.size() + 2), "is torn (it ends in its header)");
  auto flipped = good;
  flipped.back() = static_cast<char>(flipped.back() ^ 0x5a);
  refused_with(flipped, "is corrupt (its CRC-32 does not match)");
  auto format = good;
  format[magic.size()] = static_cast<char>(format[magic.size()] + 1);  // the format's low byte (host order)
  refused_with(format, "is of journal format 2; this build reads format 1");
  auto build = good;
  build[magic.size() + 4 + 8] = static_cast<char>(build[magic.size() + 4 + 8] ^ 0x01);  // the schema's first character
  refused_with(build, "was written by another build of syncpoint");
  refused_with("head.journal? no: a note\n", "is not a syncpoint head journal");
  refused_with("", "is not a syncpoint head journal");
}

TEST_CASE("head journal: a write that fails leaves the journal as it was") {
  journal_folder f;
  write_journal(f.sys, f.dir(), sample());
  auto before = slurp_bytes(f.file());
  fs::create_directories(f.path / ".head.journal.tmp");  // the temporary file cannot be made
  auto next = sample();
  next.epoch = 9;
  std::string error;
  try {
    write_journal(f.sys, f.dir(), next);
  } catch (const config_error& e) {
    error = e.what();
  }
  CHECK_MESSAGE(error.find("cannot write the head's journal '" + f.file() + "'") != std::string::npos, error);
  CHECK_MESSAGE(error.find("the previous journal is intact") != std::string::npos, error);
  CHECK(slurp_bytes(f.file()) == before);
  CHECK(read_journal(f.sys, f.dir())->epoch == 3);
}
