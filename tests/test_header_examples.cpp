// Every example of a public header's doc comments, compiled and run: the
// code as the header shows it, with what it leaves out (a `cfg`, an
// observer, a batch) around it. This file: running a job and following it
// (syncpoint, train, job, interfaces, messages); the extension points (data,
// models, protocols, what crosses nodes) are in test_header_examples_parts.cpp,
// with the check that each example's lines are in its test, in order.
// (<syncpoint/cluster.hpp>'s example needs a head: tests/test_cluster_observers.cpp
// runs it.) These files include only the installed headers.
#include <syncpoint/syncpoint.hpp>
#include "tests/header_examples.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>

#include <unistd.h>

using syncpoint::testing::small_cfg;

namespace {

// What the examples' `my_observer` heard (one job at a time per test).
std::atomic<int> heard_evals{0};
std::string heard_end;

syncpoint::job_observer_actor::behavior_type my_observer() {
  heard_evals = 0;
  heard_end.clear();
  return {
    [](const syncpoint::job_started&) {},
    [](const syncpoint::eval_result&) { ++heard_evals; },
    [](const syncpoint::progress_report&) {},
    [](const syncpoint::phase_change&) {},
    [](const syncpoint::run_ended& e) { heard_end = e.why; },
  };
}

// -- <syncpoint/interfaces.hpp> -------------------------------------------------------

// An observer: told of a run from its start (job_options::observers, submit_options::observers).
syncpoint::job_observer_actor::behavior_type printer(syncpoint::job_observer_actor::pointer self) {
  return {
    [=](const syncpoint::job_started& s) {
      self->send(s.control, syncpoint::mark_request{"watching", 1.0});
    },
    [](const syncpoint::eval_result& e) { std::cout << e.accuracy << "\n"; },
    [](const syncpoint::progress_report&) {},
    [](const syncpoint::phase_change&) {},
    [](const syncpoint::run_ended& e) { std::cout << "ended: " << e.why << "\n"; },
  };
}

// Stops the run at the first evaluation it hears, as the control example does.
struct stopper_state {
  syncpoint::job_control_actor control;
};

syncpoint::job_observer_actor::behavior_type stopper(
  syncpoint::job_observer_actor::stateful_pointer<stopper_state> self) {
  return {
    [=](const syncpoint::job_started& s) { self->state.control = s.control; },
    [=](const syncpoint::eval_result& e) {
      if (e.final)
        return;
      auto& control = self->state.control;
      self->send(control, syncpoint::stop_request{"no progress"});
    },
    [](const syncpoint::progress_report&) {},
    [](const syncpoint::phase_change&) {},
    [](const syncpoint::run_ended& e) { heard_end = e.why; },
  };
}

// -- <syncpoint/messages.hpp> ----------------------------------------------------------

caf::behavior watcher() {
  return {[](const syncpoint::eval_result& e) {
    std::cout << e.samples << " samples: accuracy " << e.accuracy << "\n";
  }};
}

// A virtual-clock job of `cfg` in a system of its own, followed by the observer `spawn` makes there.
template <class Spawn>
syncpoint::run_result run_observed(const syncpoint::job_config& cfg, Spawn spawn) {
  caf::actor_system_config sys_cfg;
  syncpoint::configure(sys_cfg, cfg);
  caf::actor_system sys{sys_cfg};
  auto j = syncpoint::job::spawn(sys, cfg, {{spawn(sys)}});
  j.start();
  return j.wait();
}

// Runs `body` with `dir` as the working directory (an example that writes to a relative folder).
template <class F>
void in_folder(const std::filesystem::path& dir, F body) {
  std::filesystem::create_directories(dir);
  auto was = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  try {
    body();
  } catch (...) {
    std::filesystem::current_path(was);
    throw;
  }
  std::filesystem::current_path(was);
}

}  // namespace

// -- <syncpoint/syncpoint.hpp> -----------------------------------------------------------

namespace syncpoint_hpp {  // the header's `main`, as a function of its own here
int main() {
  syncpoint::job_config cfg;
  cfg.protocol = "bsp"; cfg.workers = 2; cfg.model = "softmax"; cfg.epochs = 1;
  auto r = syncpoint::train(cfg);
  return r.summary.final_accuracy > 0.5 ? 0 : 1;
}
}  // namespace syncpoint_hpp

TEST_CASE("header examples: <syncpoint/syncpoint.hpp>'s program trains bsp on Fashion-MNIST past 50%") {
  CHECK(syncpoint_hpp::main() == 0);
}

TEST_CASE("header examples: <syncpoint/train.hpp> trains ssp with a straggler and writes its run's files") {
  auto dir = std::filesystem::temp_directory_path() / ("syncpoint_header_train_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  in_folder(dir, [] {
    syncpoint::job_config cfg;
    cfg.protocol = "ssp"; cfg.protocol_opts.set("staleness", 2);
    cfg.workers = 4; cfg.model = "mlp"; cfg.epochs = 1;
    cfg.straggler = "3:x4"; cfg.out_dir = "runs/ssp";
    syncpoint::run_result r = syncpoint::train(cfg);
    std::cout << r.summary.final_accuracy << "\n";
    CHECK(r.summary.final_accuracy > 0.6);
    CHECK(r.summary.protocol == "ssp");
  CHECK(r.summary.workers == 4);
  CHECK(r.summary.straggler == "3:x4");
    CHECK(std::filesystem::exists("runs/ssp/summary.json"));
    CHECK(std::filesystem::exists("runs/ssp/trace.jsonl"));
  });
  std::filesystem::remove_all(dir);
}

TEST_CASE("header examples: <syncpoint/train.hpp>'s apply_job_defaults sets DiLoCo's outer step but the lr given") {
  syncpoint::job_config cfg;
  cfg.lr = 0.3;
  cfg.protocol = "diloco";
  syncpoint::apply_job_defaults(cfg, [](const std::string& name) { return name == "lr"; });  // keeps cfg.lr
  CHECK(cfg.optimizer == "nesterov");
  CHECK(cfg.momentum == 0.9);
  CHECK(cfg.lr == 0.3);
  syncpoint::apply_job_defaults(cfg);
  CHECK(cfg.lr == 0.7);
}

TEST_CASE("header examples: <syncpoint/job.hpp> runs a job in the program's own system, observed") {
  auto cfg = small_cfg();
  caf::actor_system_config sys_cfg;
  syncpoint::configure(sys_cfg, cfg);              // messages, and the clock's scheduler
  caf::actor_system sys{sys_cfg};
  auto watcher = sys.spawn(my_observer);           // a job_observer_actor
  auto j = syncpoint::job::spawn(sys, cfg, {{watcher}});
  j.start();
  syncpoint::run_result r = j.wait();              // virtual clock: runs the whole system to the end
  CHECK(r.summary.samples >= 2000);
  auto evals = std::count_if(r.trace.begin(), r.trace.end(),
                             [](const auto& e) { return e.kind == "eval" || e.kind == "final_eval"; });
  CHECK(evals >= 2);  // at half the run, ..., and the final one
  CHECK(heard_evals == evals);
  CHECK(heard_end == "budget");
}

TEST_CASE("header examples: <syncpoint/job.hpp>'s stop_when ends a run once its flag is set") {
  auto cfg = small_cfg();
  cfg.epochs = 100;  // only the stop ends it
  caf::actor_system_config sys_cfg;
  syncpoint::configure(sys_cfg, cfg);
  caf::actor_system sys{sys_cfg};
  syncpoint::job_options opts;
  std::atomic<bool> interrupted{false};  // set by a signal handler
  opts.stop_when = [&] { return interrupted ? std::string("interrupted") : std::string(); };
  auto j = syncpoint::job::spawn(sys, cfg, opts);
  interrupted = true;  // as a Ctrl-C before the run would
  j.start();
  auto r = j.wait();
  CHECK(r.summary.samples < 2000);  // stopped at once, not after 100 epochs of 2000 examples
}

TEST_CASE("header examples: <syncpoint/interfaces.hpp>'s printer marks the trace, and a stop request ends the run") {
  auto cfg = small_cfg();
  auto printed = run_observed(cfg, [](caf::actor_system& sys) { return sys.spawn(printer); });
  auto mark = std::find_if(printed.trace.begin(), printed.trace.end(), [](const auto& e) { return e.kind == "mark"; });
  REQUIRE(mark != printed.trace.end());
  CHECK(mark->note == "watching");
  CHECK(mark->value == 1.0);
  cfg.epochs = 100;  // only the stop ends it
  auto r = run_observed(cfg, [](caf::actor_system& sys) { return sys.spawn(stopper); });
  CHECK(heard_end == "no progress");
  CHECK(r.summary.samples < 2000);  // at the first evaluation, half an epoch of 2000 examples
}

TEST_CASE("header examples: <syncpoint/interfaces.hpp>'s reader answers a running job's counts") {
  auto cfg = small_cfg();
  cfg.clock = syncpoint::clock_kind::real;
  cfg.epochs = 1e5;  // it runs until stopped below: it cannot end before it is asked
  caf::actor_system_config sys_cfg;
  syncpoint::configure(sys_cfg, cfg);
  caf::actor_system system{sys_cfg};
  auto j = syncpoint::job::spawn(system, cfg);
  j.start();
  {
    caf::scoped_actor self{system};
    self->request(j.handles().reader, caf::infinite, syncpoint::counts_request{})
      .receive([](const syncpoint::job_counts& c) { std::cout << c.samples << " samples\n"; },
               [](caf::error&) {});
    syncpoint::job_counts got;
    self->request(j.handles().reader, std::chrono::seconds(60), syncpoint::counts_request{})
      .receive([&](const syncpoint::job_counts& c) { got = c; },
               [&](caf::error& e) { FAIL(system.render(e)); });
    CHECK(got.worker_samples.size() == 2);
    CHECK(got.live == 2);
  }
  j.stop("asked");
  auto r = j.wait();
  CHECK(r.summary.samples > 0);
  CHECK(j.handles().workers == 2);
  CHECK(j.handles().ps_bounds.size() == 2);
}

TEST_CASE("header examples: <syncpoint/messages.hpp>'s watcher takes an evaluation") {
  caf::actor_system_config sys_cfg;
  syncpoint::job_config cfg;
  cfg.clock = syncpoint::clock_kind::real;
  syncpoint::configure(sys_cfg, cfg);
  caf::actor_system sys{sys_cfg};
  auto w = sys.spawn(watcher);
  caf::scoped_actor self{sys};
  bool taken = false;
  self->request(w, std::chrono::seconds(60), syncpoint::eval_result{3, 0, 192, false, 0.75})
    .receive([&] { taken = true; }, [&](caf::error& e) { FAIL(sys.render(e)); });
  CHECK(taken);
  self->send_exit(w, caf::exit_reason::user_shutdown);
}
