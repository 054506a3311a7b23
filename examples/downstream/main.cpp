// A training program outside syncpoint's tree (examples/downstream/CMakeLists.txt): its own
// network, its own data, an actor of its own in the job (an observer) and a protocol of its own
// that checkpoints, trained by syncpoint's library on the virtual clock. It includes only
// <syncpoint/...> (and CAF and cereal, which they bring) and exits non-zero if anything is not as
// the package promised.
#include <syncpoint/syncpoint.hpp>
#include <syncpoint/torch_model.hpp>

#include "half_quorum.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace {

// 8 features, 3 classes, each class a cloud around its own corner.
syncpoint::train_test corners(const syncpoint::data_request& r) {
  auto make = [](int64_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> noise(0.0f, 0.7f);
    std::uniform_int_distribution<int64_t> pick(0, 2);
    return syncpoint::dataset_from(n, {8}, 3, [&](int64_t, float* x) {
      int64_t label = pick(rng);
      for (int k = 0; k < 8; ++k)
        x[k] = (k % 3 == label ? 1.0f : 0.0f) + noise(rng);
      return label;
    });
  };
  return {make(r.train_size, r.seed), make(r.test_size, r.seed + 1)};
}

// An actor of the program's own in the job: it counts the evaluations it is told of, keeps the
// last one's accuracy, and at the end hands both to `out`, which the program reads once wait()
// has returned. (On the virtual clock only wait() runs the system's actors, so a request to the
// actor after it would wait forever.) CAF comes from the package's usage requirements: nothing
// here names a CAF library.
struct follower_report {
  uint64_t evals = 0;
  double accuracy = -1;
  std::string ended;
};

syncpoint::job_observer_actor::behavior_type follower(
  syncpoint::job_observer_actor::stateful_pointer<follower_report> self, follower_report* out) {
  return {
    [](const syncpoint::job_started&) {},
    [=](const syncpoint::eval_result& e) {
      ++self->state.evals;
      self->state.accuracy = e.accuracy;
    },
    [](const syncpoint::progress_report&) {},
    [](const syncpoint::phase_change&) {},
    [=](const syncpoint::run_ended& e) {
      self->state.ended = e.why;
      *out = self->state;
    },
  };
}

struct small_net : torch::nn::Module {
  torch::nn::Linear in{register_module("in", torch::nn::Linear(8, 32))};
  torch::nn::Linear out{register_module("out", torch::nn::Linear(32, 3))};
  torch::Tensor forward(const torch::Tensor& x) { return out(torch::relu(in(x))); }
};

// A protocol of the program's own, which checkpoints its state (half_quorum.hpp).
using downstream::half_quorum;  // the macro takes a bare class name
SYNCPOINT_REGISTER_PROTOCOL("half-quorum", "commit when half of the live workers have pushed", half_quorum);

int fail(const std::string& what) {
  std::fprintf(stderr, "downstream: %s\n", what.c_str());
  return 1;
}

// One version: the package's, the headers' and the library's; and the LibTorch the package
// records is the one the library runs with. "" if so, else what differs.
std::string versions_differ() {
  if (std::strcmp(DOWNSTREAM_FOUND_VERSION, SYNCPOINT_VERSION_STRING) != 0 ||
      std::strcmp(syncpoint::version(), SYNCPOINT_VERSION_STRING) != 0)
    return std::string("versions differ: package ") + DOWNSTREAM_FOUND_VERSION + ", header " +
           SYNCPOINT_VERSION_STRING + ", library " + syncpoint::version();
  if (syncpoint::torch_version() != DOWNSTREAM_PACKAGE_TORCH)
    return std::string("the package says LibTorch ") + DOWNSTREAM_PACKAGE_TORCH + ", the library runs " +
           syncpoint::torch_version();
  return {};
}

// The job with the program's own actor in it: it must learn, and the actor see what the run saw.
int run_with_follower(const syncpoint::job_config& cfg) {
  caf::actor_system_config sys_cfg;
  syncpoint::configure(sys_cfg, cfg);
  caf::actor_system sys{sys_cfg};
  follower_report seen;
  auto job = syncpoint::job::spawn(sys, cfg, {{sys.spawn(follower, &seen)}});
  job.start();
  auto r = job.wait();
  std::printf("downstream (syncpoint %s): %s, %d workers, final accuracy %.4f after %llu samples\n",
              syncpoint::version(), r.summary.protocol.c_str(), r.summary.workers, r.summary.final_accuracy,
              static_cast<unsigned long long>(r.summary.samples));
  if (r.summary.final_accuracy < 0.8)
    return fail("final accuracy " + std::to_string(r.summary.final_accuracy) + " < 0.8");
  std::printf("its own actor was told of %llu evaluations, the last at %.4f; the run ended: %s\n",
              static_cast<unsigned long long>(seen.evals), seen.accuracy, seen.ended.c_str());
  if (seen.evals != r.summary.evals.size() + 1 || seen.accuracy != r.summary.final_accuracy || seen.ended != "budget")
    return fail("the actor's evaluations differ from the run's");
  return 0;
}

// The program's own protocol, checkpointed and resumed from its middle checkpoint: the same
// model, bit for bit, as the run that never stopped.
int resume_own_protocol(syncpoint::job_config own) {
  namespace fs = std::filesystem;
  auto dir = fs::temp_directory_path() / ("downstream_" + std::to_string(getpid()));
  fs::remove_all(dir);
  own.protocol = "half-quorum";
  own.protocol_opts = {};
  own.workers = 3;
  own.epochs = 1;
  auto plain = syncpoint::train(own);
  own.checkpoint_every_s = plain.summary.run_time_s / 4;
  own.checkpoint_dir = (dir / "all").string();
  own.checkpoint_keep = 0;
  auto whole = syncpoint::train(own);
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(dir / "all"))
    files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.size() < 2)
    return fail("the half-quorum run left " + std::to_string(files.size()) + " checkpoints");
  auto middle = files[files.size() / 2];
  fs::create_directories(dir / "from");
  fs::copy_file(middle, dir / "from" / middle.filename());
  own.checkpoint_dir = own.resume_dir = (dir / "from").string();
  auto resumed = syncpoint::train(own);
  fs::remove_all(dir);
  std::printf("its own protocol, half-quorum: final accuracy %.4f; resumed from %s, the same model: %s\n",
              whole.summary.final_accuracy, middle.filename().c_str(),
              resumed.final_model.values == whole.final_model.values ? "yes" : "no");
  if (whole.final_model.values != plain.final_model.values || resumed.final_model.values != whole.final_model.values)
    return fail("the half-quorum run did not resume bit for bit from its checkpoint");
  return 0;
}

}  // namespace

int main() {
  if (auto why = versions_differ(); !why.empty())
    return fail(why);
  syncpoint::register_dataset("corners", corners);
  syncpoint::register_model("small-net", [] { return syncpoint::wrap_module(std::make_shared<small_net>()); });

  syncpoint::job_config cfg;
  cfg.protocol = "ssp";
  cfg.protocol_opts.set("staleness", 2);
  cfg.workers = 2;
  cfg.model = "small-net";
  cfg.dataset = "corners";
  cfg.train_limit = 3000;
  cfg.test_limit = 600;
  cfg.epochs = 2;
  cfg.batch = 32;
  cfg.lr = 0.1;
  cfg.straggler = "1:x2";
  cfg.iter_cost_ms = 5;
  cfg.eval_every = 0.5;
  cfg.progress = false;
  try {
    if (int rc = run_with_follower(cfg))
      return rc;
    return resume_own_protocol(cfg);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}
