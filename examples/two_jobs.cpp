// Two jobs in one actor system, on the real clock: each job's actors are
// ordinary CAF actors of this program, side by side with an actor of its own
// that follows both. The jobs run at once and share the system's threads.
//
//   build/example_two_jobs
#include <syncpoint/job.hpp>

#include <cstdio>
#include <string>

namespace {

// Prints each evaluation, naming the job it came from.
syncpoint::job_observer_actor::behavior_type printer(syncpoint::job_observer_actor::pointer self, std::string name) {
  return {
    [](const syncpoint::job_started&) {},
    [=](const syncpoint::eval_result& e) {
      std::printf("%-4s %s at %.2f s: accuracy %.4f\n", name.c_str(), e.final ? "final" : "eval ",
                  static_cast<double>(e.taken) * 1e-9, e.accuracy);
    },
    [](const syncpoint::progress_report&) {},
    [](const syncpoint::phase_change&) {},
    [=](const syncpoint::run_ended& e) { std::printf("%-4s ended: %s\n", name.c_str(), e.why.c_str()); },
  };
}

syncpoint::job_config small(const std::string& protocol) {
  syncpoint::job_config cfg;
  cfg.protocol = protocol;
  cfg.workers = 2;
  cfg.model = "softmax";
  cfg.dataset = "synthetic";
  cfg.train_limit = 4000;
  cfg.test_limit = 1000;
  cfg.epochs = 2;
  cfg.eval_every = 0.5;
  cfg.lr = 0.1;
  cfg.clock = syncpoint::clock_kind::real;
  cfg.progress = false;
  return cfg;
}

}  // namespace

int main() {
  auto bsp = small("bsp"), asp = small("asp");
  bsp.threads = 2;  // the system's threads, shared by both jobs
  try {
    caf::actor_system_config sys_cfg;
    syncpoint::configure(sys_cfg, bsp);
    caf::actor_system sys{sys_cfg};
    auto a = syncpoint::job::spawn(sys, bsp, {{sys.spawn(printer, "bsp")}});
    a.start();  // a job's real clock starts at its spawn: start it right away
    auto b = syncpoint::job::spawn(sys, asp, {{sys.spawn(printer, "asp")}});
    b.start();
    auto ra = a.wait(), rb = b.wait();
    std::printf("bsp: %.4f after %llu samples; asp: %.4f after %llu samples\n", ra.summary.final_accuracy,
                static_cast<unsigned long long>(ra.summary.samples), rb.summary.final_accuracy,
                static_cast<unsigned long long>(rb.summary.samples));
    return ra.summary.final_accuracy > 0.5 && rb.summary.final_accuracy > 0.5 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "example_two_jobs: %s\n", e.what());
    return 1;
  }
}
