// Checkpoints and resume in virtual time: a run resumed from any of its
// checkpoints ends with the same model and the same trace, bit for bit, as
// the run that was never stopped; taking checkpoints changes nothing; and a
// resume that disagrees with its checkpoint is refused, naming why.
#include "tests/bn_net.hpp"  // first: doctest's CHECK replaces LibTorch's (glog's)

#include "runtime/records/checkpoint_file.hpp"
#include <syncpoint/train.hpp>
#include "tests/helpers.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <unistd.h>

using namespace syncpoint;
using syncpoint::testing::resuming_from;
using syncpoint::testing::slurp;
namespace fs = std::filesystem;

namespace {

struct folder : syncpoint::testing::temp_folder {
  explicit folder(const std::string& name) : temp_folder("syncpoint_resume_" + name) {}
};

// Small but busy: a 4x straggler, a loaded PS link (transfers in flight at
// checkpoints), evaluations, and a worker lost mid-run.
job_config busy_job(const std::string& protocol) {
  job_config cfg;
  cfg.protocol = protocol;
  cfg.workers = 4;
  cfg.model = "mlp";
  cfg.train_limit = 3000;
  cfg.test_limit = 300;
  cfg.epochs = 2;
  cfg.eval_every = 0.5;
  cfg.straggler = "3:x4";
  cfg.ps_bandwidth = 400e6;
  cfg.latency_ms = 0.2;
  cfg.internals.fail_worker = 1;
  cfg.internals.fail_at_iter = 15;
  cfg.iter_cost_ms = 0.7;
  cfg.progress = false;
  // A local-update protocol pushes every 4 steps (worker 1 dies at its third
  // push), its fragments two of the mlp's four tensors: checkpoints fall inside
  // rounds, AdamW's inner moments in them.
  for (auto& o : protocol_option_specs(protocol)) {
    if (o.name == "local-steps") {
      cfg.protocol_opts.set("local-steps", 4);
      cfg.internals.fail_at_iter = 3;
    }
    if (o.name == "fragments")
      cfg.protocol_opts.set("fragments", 2);
  }
  apply_job_defaults(cfg);
  return cfg;
}

void same_trace(const std::vector<trace_event>& a, const std::vector<trace_event>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("event " << i << ": " << a[i].kind << " of worker " << a[i].worker << " at " << a[i].t0);
    CHECK(a[i].kind == b[i].kind);
    CHECK(a[i].worker == b[i].worker);
    CHECK(a[i].t0 == b[i].t0);
    CHECK(a[i].t1 == b[i].t1);
    CHECK(a[i].iter == b[i].iter);
    CHECK(a[i].version == b[i].version);
    CHECK(a[i].value == b[i].value);  // bit for bit: accuracies, losses, staleness
    CHECK(a[i].note == b[i].note);
  }
}

// `cfg`, resuming from `file` alone: copied into `dir`, which then holds no newer one.
std::vector<fs::path> checkpoints_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (auto& e : fs::directory_iterator(dir))
    out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("resume: every protocol resumed from early, middle and late checkpoints ends bit for bit as the run never stopped") {
  for (auto& entry : protocol_catalog()) {
    const auto& protocol = entry.first;  // not a structured binding: CAPTURE's lambda takes it (C++17)
    if (protocol.rfind("test-", 0) == 0)
      continue;  // registered by the tests (e.g. to fail)
    CAPTURE(protocol);
    folder dir(protocol);
    auto cfg = busy_job(protocol);
    auto plain = train(cfg);  // no checkpoints at all
    cfg.checkpoint_every_s = plain.summary.run_time_s / 6;  // about six
    cfg.checkpoint_dir = (dir.path / "all").string();
    cfg.checkpoint_keep = 0;
    auto whole = train(cfg);
    // Taking checkpoints reads the run and changes nothing in it.
    same_trace(plain.trace, whole.trace);
    CHECK(plain.final_model.values == whole.final_model.values);
    auto files = checkpoints_in(dir.path / "all");
    REQUIRE(files.size() >= 3);
    CHECK(std::any_of(whole.trace.begin(), whole.trace.end(), [](auto& e) { return e.kind == "lost"; }));
    for (auto& file : {files.front(), files[files.size() / 2], files.back()}) {
      CAPTURE(file.filename().string());
      auto from = dir.path / ("from_" + file.filename().string());
      auto resumed = train(resuming_from(cfg, file, from));
      same_trace(whole.trace, resumed.trace);
      CHECK(resumed.final_model.version == whole.final_model.version);
      CHECK(resumed.final_model.values == whole.final_model.values);
      CHECK(resumed.summary.resumed_from == (from / file.filename()).string());
      CHECK(resumed.summary.resumed_at_s > 0);
      CHECK(plain.summary.resumed_from.empty());
      // The resumed run takes the same later checkpoints, byte for byte.
      auto later = checkpoints_in(from);
      CHECK(later.back().filename() == files.back().filename());
      CHECK(slurp(later.back().string()) == slurp(files.back().string()));
    }
  }
}

TEST_CASE("resume: adamw with a cosine schedule, warmup and BatchNorm resumes bit for bit, moments, rate and statistics included") {
  for (auto protocol : {"bsp", "asp", "ssp", "sync-switch"}) {
    CAPTURE(protocol);
    folder dir(std::string("adamw_") + protocol);
    auto cfg = busy_job(protocol);
    cfg.model = syncpoint::testing::bn_net_model();
    cfg.optimizer = "adamw";
    cfg.lr = 0.002;
    cfg.weight_decay = 0.01;
    cfg.lr_schedule = "cosine";
    cfg.warmup = "0.2";
    auto plain = train(cfg);
    cfg.checkpoint_every_s = plain.summary.run_time_s / 4;
    cfg.checkpoint_dir = (dir.path / "all").string();
    cfg.checkpoint_keep = 0;
    auto whole = train(cfg);
    same_trace(plain.trace, whole.trace);
    auto files = checkpoints_in(dir.path / "all");
    REQUIRE(files.size() >= 2);
    auto& file = files[files.size() / 2];
    auto resumed = train(resuming_from(cfg, file, dir.path / "from"));
    same_trace(whole.trace, resumed.trace);  // the lr events too
    CHECK(resumed.final_model.values == whole.final_model.values);
    CHECK(std::count_if(whole.trace.begin(), whole.trace.end(), [](auto& e) { return e.kind == "lr"; }) >= 20);
  }
}

TEST_CASE("resume: a cosine schedule's length is fixed by the checkpoint: more --epochs is refused unless --lr-epochs keeps it") {
  folder dir("cosine_length");
  auto cfg = busy_job("bsp");
  cfg.lr_schedule = "cosine";
  cfg.checkpoint_every_s = 0.01;
  cfg.checkpoint_dir = (dir.path / "all").string();
  cfg.checkpoint_keep = 0;
  auto first = train(cfg);
  auto files = checkpoints_in(dir.path / "all");
  REQUIRE(!files.empty());
  auto longer = resuming_from(cfg, files.back(), dir.path / "from");
  longer.epochs = 3;
  try {
    train(longer);
    FAIL("a longer cosine was not refused");
  } catch (const config_error& e) {
    CHECK(std::string(e.what()).find("lr-schedule") != std::string::npos);
  }
  longer.lr_epochs = 2;  // the schedule the checkpoint ran: the run may go on past it
  auto resumed = train(longer);
  CHECK(resumed.summary.samples > first.summary.samples);
}

TEST_CASE("resume: only the limits may change, and not to one already passed, and an empty folder is refused") {
  folder dir("options");
  auto cfg = busy_job("asp");
  cfg.internals.fail_worker = -1;
  cfg.epochs = 1;
  cfg.checkpoint_every_s = 0.004;
  cfg.checkpoint_dir = dir.path.string();
  auto first = train(cfg);
  auto again = cfg;
  again.resume_dir = dir.path.string();
  auto refused = [&](job_config c, const char* says) {
    CHECK_THROWS_WITH_AS(train(c), doctest::Contains(says), config_error);
  };
  auto c = again;
  c.lr = 0.1;
  refused(c, "--lr is 0.10000000000000001 here but 0.050000000000000003 in the checkpointed run");
  c = again;
  c.straggler = "2:x4";
  refused(c, "--straggler is 2:x4 here but 3:x4");
  c = again;
  c.protocol_opts.set("staleness", 2);
  refused(c, "--staleness 2 is not an option of the checkpointed run");
  c = again;
  c.iter_cost_ms = 0.8;
  refused(c, "--iter-cost");
  c = again;
  c.epochs = 0.5;  // the newest checkpoint is near the end of the first epoch
  refused(c, "--epochs 0.5 is already reached at the checkpoint");
  CHECK_THROWS_WITH_AS(train(c), doctest::Contains(dir.path.string().c_str()), config_error);
  c = again;
  c.resume_dir = (dir.path / "nothing-here").string();
  refused(c, "no checkpoint there");
  // Raising the limit goes on where the run stopped.
  c = again;
  c.epochs = 2;
  auto longer = train(c);
  CHECK(longer.summary.samples >= 2 * 3000);
  CHECK(longer.summary.samples > first.summary.samples);
  CHECK(longer.trace.size() > first.trace.size());
  // Same data, same start: the longer run's first part is the shorter run's trace.
  for (size_t i = 0; i < 10; ++i)
    CHECK(longer.trace[i].t0 == first.trace[i].t0);
}

TEST_CASE("resume: a protocol without checkpoint support is refused before the run starts") {
  struct stateful : protocol {
    explicit stateful(const protocol_options&) {}
    void on_push(coordinator_api& c, worker_id w) override { c.release(w); }
  };
  static bool registered = register_protocol("test-no-checkpoint", "a protocol without checkpoint()",
                                             [](const protocol_options& o) { return std::make_unique<stateful>(o); });
  REQUIRE(registered);
  folder dir("unsupported");
  auto cfg = busy_job("test-no-checkpoint");
  cfg.checkpoint_every_s = 0.004;
  cfg.checkpoint_dir = dir.path.string();
  CHECK_THROWS_WITH_AS(train(cfg), doctest::Contains("protocol 'test-no-checkpoint' does not support checkpoints"),
                       config_error);
  CHECK_FALSE(fs::exists(dir.path));
}

// (Not r2sp here: a real-clock checkpoint pauses the run until every worker
// has pushed, and r2sp counts the pause into its measured cycles; at a
// checkpoint every 50 ms that skews its batches. docs/cluster.md.)
// One test case per protocol, so that ctest runs them side by side and the
// TSan run can take one (scripts/hardening.sh).
namespace {

// The samples a checkpoint file holds, from its name (checkpoint-<samples>.bin).
long long samples_of(const fs::path& file) {
  auto name = file.filename().string();
  return std::atoll(name.c_str() + name.find('-') + 1);
}

void real_clock_resume(const std::string& protocol) {
  folder dir("real_" + protocol);
  auto cfg = busy_job(protocol);
  cfg.clock = clock_kind::real;
  cfg.train_limit = 12000;
  // The run clock ends the run, not the samples: it takes a checkpoint every
  // 50 ms of its 1.5 s however fast the machine is (each pauses it a little).
  cfg.epochs = 1000;
  cfg.max_time_s = 1.5;
  cfg.ps_bandwidth = 0;
  cfg.straggler = "3:+2ms";
  cfg.checkpoint_every_s = 0.05;
  cfg.checkpoint_dir = (dir.path / "all").string();
  cfg.checkpoint_keep = 0;
  cfg.internals.fail_at_iter = 3;  // worker 1 fails at its third push, before most checkpoints
  auto whole = train(cfg);
  auto files = checkpoints_in(dir.path / "all");
  REQUIRE_MESSAGE(files.size() >= 2, "only " << files.size() << " checkpoints in 1.5 s of run clock");
  // Resume from a checkpoint its contents prove taken after worker 1 was lost
  // (the middle one of those): how many came before depends on the machine's speed.
  checkpoint_header head{checkpoint_format, cfg.model, whole.final_model.values.size(), protocol};
  std::vector<fs::path> after_loss;
  for (auto& f : files) {
    auto gone = read_checkpoint(f.string(), head).state.coordinator.gone;
    if (gone.size() > 1 && gone[1])
      after_loss.push_back(f);
  }
  REQUIRE_MESSAGE(!after_loss.empty(), "no checkpoint after worker 1's loss at its third push, of " << files.size());
  auto file = after_loss[after_loss.size() / 2];
  auto from = dir.path / "from";
  // A slow machine (a sanitizer, a busy CI) can take that checkpoint past the 1.5 s cap while the
  // run ends: the resumed run's cap is raised (the limits may differ) to half a second after it,
  // so that it always trains on from there, however late the checkpoint came.
  auto again = resuming_from(cfg, file, from);
  auto taken_s = static_cast<double>(read_checkpoint(file.string(), head).state.time_ns) / 1e9;
  again.max_time_s = std::max(cfg.max_time_s, taken_s + 0.5);
  auto resumed = train(again);
  CHECK(resumed.summary.resumed_from == (from / file.filename()).string());
  CHECK(resumed.summary.samples > samples_of(file));  // it trained on from there
  CHECK(resumed.summary.lost == whole.summary.lost);  // the lost worker stays lost
  // The trace before the checkpoint came with it, from the run's very start: the first
  // gradient of the resumed run's trace is the uninterrupted run's first, and every live
  // worker computed before the checkpoint (it is taken at rest, after each has pushed).
  CHECK(resumed.summary.resumed_at_s >= 0.05);
  auto at = static_cast<nanos>(resumed.summary.resumed_at_s * 1e9);
  auto first_compute = [](const std::vector<trace_event>& trace) {
    auto first = std::find_if(trace.begin(), trace.end(), [](const trace_event& e) { return e.kind == "compute"; });
    REQUIRE(first != trace.end());
    for (auto& e : trace)
      if (e.kind == "compute" && e.t0 < first->t0)
        first = trace.begin() + (&e - trace.data());
    return *first;
  };
  auto a = first_compute(resumed.trace), b = first_compute(whole.trace);
  CHECK(a.t0 == b.t0);
  CHECK(a.t1 == b.t1);
  CHECK(a.worker == b.worker);
  std::set<worker_id> computed;
  for (auto& e : resumed.trace)
    if (e.kind == "compute" && e.t1 <= at)
      computed.insert(e.worker);
  CHECK(computed.size() + resumed.summary.lost >= static_cast<size_t>(cfg.workers));
  // It went on from the checkpoint's model, not from scratch: no worse than the last
  // evaluation before the checkpoint (ASP's noise aside).
  double before = -1;
  for (auto& e : resumed.trace)
    if (e.kind == "eval" && e.t1 <= at)
      before = e.value;
  INFO("at the checkpoint: " << before << ", resumed: " << resumed.summary.final_accuracy);
  CHECK(resumed.summary.final_accuracy > before - 0.1);
}

}  // namespace

TEST_CASE("resume: on the real clock, checkpoints are taken at rest and a resumed run finishes from one (bsp)" * doctest::test_suite("real-clock")) {
  real_clock_resume("bsp");
}

TEST_CASE("resume: on the real clock, checkpoints are taken at rest and a resumed run finishes from one (asp)" * doctest::test_suite("real-clock")) {
  real_clock_resume("asp");
}

TEST_CASE("resume: on the real clock, checkpoints are taken at rest and a resumed run finishes from one "
          "(wbsp-overlap)" * doctest::test_suite("real-clock")) {
  real_clock_resume("wbsp-overlap");
}
