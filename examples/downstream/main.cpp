// A training program outside syncpoint's tree (examples/downstream/CMakeLists.txt): its own
// network, its own data and an actor of its own that follows the run's progress, trained by
// syncpoint's library on the virtual clock. It includes only <syncpoint/...> (and CAF, which
// they bring) and exits non-zero if anything is not as the package promised.
#include <syncpoint/syncpoint.hpp>
#include <syncpoint/torch_model.hpp>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>

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

// An actor of the program's own: it keeps the last progress report it was sent and hands it
// over when asked. (CAF from the package's usage requirements: nothing here names a CAF library.)
using last_atom = caf::atom_constant<caf::atom("last")>;
using follower_actor = caf::typed_actor<caf::reacts_to<syncpoint::progress_atom, syncpoint::progress_report>,
                                        caf::replies_to<last_atom>::with<uint64_t, double>>;

struct follower_state {
  uint64_t reports = 0;
  double accuracy = -1;
};

follower_actor::behavior_type follower(follower_actor::stateful_pointer<follower_state> self) {
  return {
    [=](syncpoint::progress_atom, const syncpoint::progress_report& r) {
      ++self->state.reports;
      if (r.accuracy >= 0)
        self->state.accuracy = r.accuracy;
    },
    [=](last_atom) { return caf::make_result(self->state.reports, self->state.accuracy); },
  };
}

struct small_net : torch::nn::Module {
  torch::nn::Linear in{register_module("in", torch::nn::Linear(8, 32))};
  torch::nn::Linear out{register_module("out", torch::nn::Linear(32, 3))};
  torch::Tensor forward(const torch::Tensor& x) { return out(torch::relu(in(x))); }
};

int fail(const std::string& what) {
  std::fprintf(stderr, "downstream: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main() {
  // One version: the package's, the headers' and the library's.
  if (std::strcmp(DOWNSTREAM_FOUND_VERSION, SYNCPOINT_VERSION_STRING) != 0 ||
      std::strcmp(syncpoint::version(), SYNCPOINT_VERSION_STRING) != 0)
    return fail(std::string("versions differ: package ") + DOWNSTREAM_FOUND_VERSION + ", header " +
                SYNCPOINT_VERSION_STRING + ", library " + syncpoint::version());

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
  cfg.progress = true;  // to the follower, not the terminal

  caf::actor_system_config actor_cfg;
  caf::actor_system system{actor_cfg};
  auto watcher = system.spawn(follower);
  try {
    auto r = syncpoint::train(cfg, [&](const syncpoint::progress_report& p) {
      caf::anon_send(watcher, syncpoint::progress_atom::value, p);
    });
    std::printf("downstream (syncpoint %s): %s, %d workers, final accuracy %.4f after %llu samples\n",
                syncpoint::version(), r.summary.protocol.c_str(), r.summary.workers, r.summary.final_accuracy,
                static_cast<unsigned long long>(r.summary.samples));
    if (r.summary.final_accuracy < 0.8)
      return fail("final accuracy " + std::to_string(r.summary.final_accuracy) + " < 0.8");
    caf::scoped_actor self{system};
    uint64_t reports = 0;
    double last_accuracy = -1;
    self->request(watcher, caf::infinite, last_atom::value)
      .receive([&](uint64_t n, double a) { reports = n, last_accuracy = a; },
               [&](caf::error&) {});
    std::printf("the follower had %llu progress reports, the last evaluation at %.4f\n",
                static_cast<unsigned long long>(reports), last_accuracy);
    if (reports == 0 || last_accuracy < 0)
      return fail("the follower actor heard no progress with an evaluation");
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  return 0;
}
