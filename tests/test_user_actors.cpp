// The job API with actors of a program's own (include/syncpoint/job.hpp): an
// early-stopping actor ends a virtual run at exactly the evaluation its rule
// picks, a metrics sink's CSV holds exactly the trace's evaluations, a passive
// observer changes nothing, and a failing one ends the run with a clear error.
#include "examples/early_stopping.hpp"
#include "examples/metrics_sink.hpp"
#include "tests/failing_observer.hpp"
#include "tests/helpers.hpp"
#include "tests/small_job.hpp"

#include <syncpoint/job.hpp>

#include "core/json.hpp"

#include <doctest/doctest.h>

#include <future>
#include <memory>
#include <sstream>
#include <stdexcept>

using namespace syncpoint;
using testing::refusal;

namespace {

job_config long_job() {
  auto cfg = testing::small_job("ssp");
  cfg.epochs = 12;
  cfg.eval_every = 0.25;
  cfg.straggler = "3:x4";
  return cfg;
}

// Runs `cfg` in a system of its own, with the observers `make` spawns in it.
template <class Make>
run_result run_observed(const job_config& cfg, Make make) {
  caf::actor_system_config sys_cfg;
  configure(sys_cfg, cfg);
  caf::actor_system sys{sys_cfg};
  job_options opts;
  opts.observers = make(sys);
  auto j = job::spawn(sys, cfg, opts);
  j.start();
  return j.wait();
}

std::vector<trace_event> evals_of(const std::vector<trace_event>& trace) {
  std::vector<trace_event> out;
  for (auto& e : trace)
    if (e.kind == "eval" || e.kind == "final_eval")
      out.push_back(e);
  return out;
}

std::string lines(const std::vector<trace_event>& trace) {
  std::string out;
  for (auto& e : trace)
    out += to_json(e) + "\n";
  return out;
}

// The evaluation at which `patience` evaluations in a row have not beaten the best (by hand: the rule
// of examples/early_stopping.hpp, applied to the periodic evaluations of a run nobody stopped).
size_t stop_index(const std::vector<trace_event>& evals, int patience) {
  double best = -1;
  int since = 0;
  for (size_t i = 0; i < evals.size(); ++i) {
    if (evals[i].kind != "eval")
      continue;
    if (evals[i].value > best) {
      best = evals[i].value;
      since = 0;
    } else if (++since >= patience) {
      return i;
    }
  }
  return evals.size();
}

}  // namespace

TEST_CASE("user actors: early stopping ends a virtual run at the evaluation its rule picks, and nothing after") {
  auto cfg = long_job();
  auto plain = train(cfg);
  auto all = evals_of(plain.trace);
  int patience = 2;
  auto k = stop_index(all, patience);
  REQUIRE(k + 1 < all.size());  // the rule fires before the run's end: the test has something to show
  auto stopped = run_observed(cfg, [&](caf::actor_system& sys) {
    return std::vector<job_observer_actor>{sys.spawn(early_stopping, patience, 0.0)};
  });
  auto got = evals_of(stopped.trace);
  REQUIRE(got.size() == k + 2);  // evaluations 0..k, then the final one
  for (size_t i = 0; i <= k; ++i) {
    CHECK(got[i].kind == "eval");
    CHECK(got[i].iter == all[i].iter);
    CHECK(got[i].value == all[i].value);
  }
  CHECK(got.back().kind == "final_eval");
  CHECK(stopped.summary.samples < plain.summary.samples);
  CHECK(stopped.summary.samples >= all[k].iter);
}

TEST_CASE("user actors: a metrics sink's CSV holds exactly the trace's evaluations, and watching changes no byte of the run") {
  auto cfg = testing::small_job("sync-switch");
  cfg.eval_every = 0.25;
  cfg.progress = true;
  cfg.out_dir.clear();
  auto plain = train(cfg, [](const progress_report&) {});
  std::ostringstream csv;
  std::vector<progress_report> seen;
  caf::actor_system_config sys_cfg;
  configure(sys_cfg, cfg);
  caf::actor_system sys{sys_cfg};
  job_options opts;
  opts.observers = {sys.spawn(metrics_sink, static_cast<std::ostream*>(&csv))};
  opts.on_progress = [&](const progress_report& r) { seen.push_back(r); };
  auto j = job::spawn(sys, cfg, opts);
  j.start();
  auto watched = j.wait();
  CHECK(lines(watched.trace) == lines(plain.trace));
  CHECK(to_json(watched.summary) == to_json(plain.summary));

  std::string want = "kind,t_s,samples,version,accuracy,fraction,note\n";
  for (auto& e : evals_of(plain.trace))
    want += e.kind + "," + csv_number(static_cast<double>(e.t0) * 1e-9) + "," + std::to_string(e.iter) + "," +
            std::to_string(e.version) + "," + csv_number(e.value) + ",,\n";
  std::string evals, progress, phases, done;
  std::istringstream rows(csv.str());
  std::string row;
  std::getline(rows, row);
  evals = row + "\n";
  int progress_rows = 0;
  while (std::getline(rows, row)) {
    if (row.rfind("eval,", 0) == 0 || row.rfind("final_eval,", 0) == 0)
      evals += row + "\n";
    else if (row.rfind("progress,", 0) == 0)
      ++progress_rows;
    else if (row.rfind("phase,", 0) == 0)
      phases += row + "\n";
    else if (row.rfind("done,", 0) == 0)
      done += row + "\n";
  }
  CHECK(evals == want);
  auto lines_seen = std::count_if(seen.begin(), seen.end(), [](const progress_report& r) { return !r.line.empty(); });
  CHECK(progress_rows == lines_seen);  // every line the program was handed (not the bars' silent ticks)
  CHECK(progress_rows > 0);
  CHECK(phases.find("\"bsp>asp ") != std::string::npos);  // Sync-Switch's switch, as the trace has it
  CHECK(done == "done,,,,,,\"budget\"\n");
}

TEST_CASE("user actors: an observer that quits is dropped and the run goes on unchanged") {
  auto cfg = testing::small_job("bsp");
  cfg.eval_every = 0.5;
  auto plain = train(cfg);
  auto watched = run_observed(cfg, [](caf::actor_system& sys) {
    return std::vector<job_observer_actor>{sys.spawn([](job_observer_actor::pointer self) -> job_observer_actor::behavior_type {
      return {
        [](const job_started&) {},
        [=](const eval_result&) { self->quit(); },
        [](const progress_report&) {},
        [](const phase_change&) {},
        [](const run_ended&) {},
      };
    })};
  });
  CHECK(lines(watched.trace) == lines(plain.trace));
}

namespace {

job_observer_actor::behavior_type thrower(job_observer_actor::pointer) {
  return {
    [](const job_started&) {},
    [](const eval_result&) { throw std::runtime_error("the sink's disk is full"); },
    [](const progress_report&) {},
    [](const phase_change&) {},
    [](const run_ended&) {},
  };
}

template <class Behavior>
std::string failure_of(const job_config& cfg, Behavior b) {
  try {
    run_observed(cfg, [&](caf::actor_system& sys) { return std::vector<job_observer_actor>{sys.spawn(b)}; });
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no failure";
}

}  // namespace

TEST_CASE("user actors: when an observer fails, the others hear that the run failed and why") {
  auto cfg = testing::small_job("ssp");
  cfg.eval_every = 0.5;
  std::string heard;
  CHECK_THROWS_AS(run_observed(cfg, [&](caf::actor_system& sys) {
                    return std::vector<job_observer_actor>{
                      sys.spawn([&heard](job_observer_actor::pointer) -> job_observer_actor::behavior_type {
                        return {
                          [](const job_started&) {},
                          [](const eval_result&) {},
                          [](const progress_report&) {},
                          [](const phase_change&) {},
                          [&heard](const run_ended& e) { heard = e.why; },  // the virtual clock: before wait() returns
                        };
                      }),
                      sys.spawn(testing::failing)};
                  }),
                  std::runtime_error);
  CHECK(heard.rfind("failed: syncpoint.user_actor_failed: observer 1 of the job failed: ", 0) == 0);
}

TEST_CASE("user actors: an observer that asks for an evaluation at every evaluation does not stall a virtual run") {
  auto cfg = testing::small_job("bsp");
  cfg.eval_every = 0.5;
  auto plain = train(cfg);
  auto run = run_observed(cfg, [](caf::actor_system& sys) {
    return std::vector<job_observer_actor>{sys.spawn([](job_observer_actor::pointer self) -> job_observer_actor::behavior_type {
      auto control = std::make_shared<job_control_actor>();
      return {
        [=](const job_started& s) { *control = s.control; },
        [=](const eval_result& e) {
          if (!e.final)
            self->send(*control, eval_request{});
        },
        [](const progress_report&) {},
        [](const phase_change&) {},
        [](const run_ended&) {},
      };
    })};
  });
  CHECK(run.summary.samples == plain.summary.samples);  // it ran to its budget
  auto asked = evals_of(run.trace).size(), periodic = evals_of(plain.trace).size();
  CHECK(asked > periodic);
  CHECK(asked <= 2 * periodic);  // one extra at most per periodic one (the same samples: not again)
}

TEST_CASE("user actors: an observer that fails ends the run with user_actor_failed and why, on both clocks") {
  auto cfg = testing::small_job("ssp");
  cfg.eval_every = 0.5;
  for (auto clock : {clock_kind::virtual_time, clock_kind::real}) {
    CAPTURE(to_string(clock));
    cfg.clock = clock;
    if (clock == clock_kind::real) {  // no limit the run could reach before its observer fails: only a deadline
      cfg.epochs = 0;
      cfg.max_time_s = 600;
    }
    auto quit = failure_of(cfg, testing::failing);
    CHECK(quit.find("the run failed: the coordinator stopped: syncpoint.user_actor_failed: observer 0 of the job "
                    "failed: ") != std::string::npos);
    CHECK(quit.find("the sink's disk is full") != std::string::npos);
    auto thrown = failure_of(cfg, thrower);  // CAF prints the exception's text; the error says what it was
    CHECK(thrown.find("syncpoint.user_actor_failed: observer 0 of the job failed: system_error(runtime_error) (an "
                      "exception it did not catch") != std::string::npos);
  }
}

TEST_CASE("user actors: an observer may request an evaluation and mark the trace") {
  auto cfg = testing::small_job("asp");
  cfg.eval_every = 0;
  auto run = run_observed(cfg, [](caf::actor_system& sys) {
    return std::vector<job_observer_actor>{sys.spawn([](job_observer_actor::pointer self) -> job_observer_actor::behavior_type {
      return {
        [=](const job_started& s) {
          self->send(s.control, mark_request{"watching", 1.5});
          self->send(s.control, eval_request{});
        },
        [](const eval_result&) {},
        [](const progress_report&) {},
        [](const phase_change&) {},
        [](const run_ended&) {},
      };
    })};
  });
  auto evals = evals_of(run.trace);
  REQUIRE(evals.size() == 2);  // the one asked for (none periodic), and the final one
  CHECK(evals[0].kind == "eval");
  CHECK(evals[1].kind == "final_eval");
  auto mark = std::find_if(run.trace.begin(), run.trace.end(), [](const trace_event& e) { return e.kind == "mark"; });
  REQUIRE(mark != run.trace.end());
  CHECK(mark->note == "watching");
  CHECK(mark->value == 1.5);
}

TEST_CASE("user actors: a job refuses a system not set up for its clock, and a second virtual job in one system") {
  auto cfg = testing::small_job("bsp");
  {
    caf::actor_system_config sys_cfg;
    auto real = cfg;
    real.clock = clock_kind::real;
    configure(sys_cfg, real);
    caf::actor_system sys{sys_cfg};
    CHECK(refusal([&] { job::spawn(sys, cfg); }).find("needs an actor system set up for it") != std::string::npos);
  }
  caf::actor_system_config sys_cfg;
  configure(sys_cfg, cfg);
  caf::actor_system sys{sys_cfg};
  auto first = job::spawn(sys, cfg);
  CHECK(first.handles().workers == 4);
  CHECK(first.handles().reader);
  CHECK(first.handles().ps_bounds.size() >= 2);
  CHECK(first.handles().ps_bounds.front() == 0);
  CHECK(refusal([&] { job::spawn(sys, cfg); }).find("already runs in this actor system") != std::string::npos);
  first.start();
  auto r = first.wait();
  CHECK(r.summary.samples > 0);
  CHECK_THROWS_AS(first.wait(), std::logic_error);
}

namespace {

// Asks for a checkpoint at the first evaluation it hears of, keeps the progress lines it is told,
// and stops the run once the checkpoint is written (the run cannot end first: it is open).
struct asking_state {
  job_control_actor control;
  bool asked = false;
  std::shared_ptr<std::vector<std::string>> lines;
};

job_observer_actor::behavior_type asks_checkpoint(job_observer_actor::stateful_pointer<asking_state> self,
                                                  std::shared_ptr<std::vector<std::string>> lines) {
  self->state.lines = std::move(lines);
  return {
    [=](const job_started& s) { self->state.control = s.control; },
    [=](const eval_result&) {
      if (!std::exchange(self->state.asked, true))
        self->send(self->state.control, checkpoint_request{"first eval"});
    },
    [=](const progress_report& r) {
      self->state.lines->push_back(r.line);
      if (r.line.find("] checkpoint at t=") != std::string::npos || r.line.find("no checkpoint") != std::string::npos)
        self->send(self->state.control, stop_request{"checkpointed"});
    },
    [](const phase_change&) {},
    [](const run_ended&) {},
  };
}

bool has_line(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("user actors: a checkpoint_request takes a checkpoint at once on the real clock, the run goes on, and "
          "resuming from it works, while the virtual clock says it takes none") {
  testing::temp_folder dir{"checkpoint_request"};
  auto cfg = testing::small_job("bsp");
  cfg.clock = clock_kind::real;
  cfg.workers = 2;
  cfg.epochs = 1e5;  // open: the observer stops it
  cfg.max_time_s = 900;
  cfg.eval_every = 0.5;
  cfg.checkpoint_dir = (dir.path / "ckpt").string();  // no period: only the one asked for
  auto lines = std::make_shared<std::vector<std::string>>();
  auto run = run_observed(cfg, [&](caf::actor_system& sys) {
    return std::vector<job_observer_actor>{sys.spawn(asks_checkpoint, lines)};
  });
  CHECK_MESSAGE(has_line(*lines, "[bsp] checkpoint on request (first eval)"), lines->size());
  CHECK(has_line(*lines, "] checkpoint at t="));
  auto files = testing::checkpoint_files(cfg.checkpoint_dir);
  REQUIRE(files.size() == 1);
  auto at = std::stoull(files.front().stem().string().substr(std::string("checkpoint-").size()));
  CHECK(run.summary.samples >= at);
  auto resumed = cfg;  // one more epoch from the checkpoint
  resumed.epochs = static_cast<double>(at + 4000) / 4000;
  resumed.max_time_s = 0;
  resumed.resume_dir = files.front().string();
  resumed.checkpoint_dir = (dir.path / "ckpt2").string();
  auto again = train(resumed);
  CHECK(again.summary.resumed_from == files.front().string());
  CHECK(again.summary.samples >= at + 4000);
  CHECK(again.summary.final_accuracy > 0.8);

  auto virt = testing::small_job("bsp");
  virt.eval_every = 0.5;
  virt.checkpoint_dir = (dir.path / "virtual").string();
  lines->clear();
  run_observed(virt, [&](caf::actor_system& sys) {
    return std::vector<job_observer_actor>{sys.spawn(asks_checkpoint, lines)};
  });
  CHECK(has_line(*lines, "no checkpoint on request (first eval): the job has no checkpoint folder on the real clock"));
  CHECK(!std::filesystem::exists(virt.checkpoint_dir));
}

TEST_CASE("user actors: stop_when, asked while wait() waits, stops the run with its reason on both clocks") {
  for (auto clock : {clock_kind::virtual_time, clock_kind::real}) {
    CAPTURE(to_string(clock));
    auto cfg = testing::small_job("ssp");
    cfg.clock = clock;
    if (clock == clock_kind::real) {  // only a deadline it cannot reach: the stop must end it
      cfg.epochs = 0;
      cfg.max_time_s = 600;
    }
    auto plain_samples = clock == clock_kind::virtual_time ? train(cfg).summary.samples : UINT64_MAX;
    auto run = [&] {
      caf::actor_system_config sys_cfg;
      configure(sys_cfg, cfg);
      caf::actor_system sys{sys_cfg};
      auto heard = std::make_shared<std::promise<std::string>>();
      job_options opts;
      opts.observers = {sys.spawn([heard](job_observer_actor::pointer) -> job_observer_actor::behavior_type {
        return {
          [](const job_started&) {},
          [](const eval_result&) {},
          [](const progress_report&) {},
          [](const phase_change&) {},
          [heard](const run_ended& e) { heard->set_value(e.why); },
        };
      })};
      int asked = 0;
      opts.stop_when = [&asked] { return ++asked == 30 ? std::string("interrupted") : std::string(); };
      auto j = job::spawn(sys, cfg, opts);
      j.start();
      auto r = j.wait();
      CHECK(asked >= 30);
      auto why = heard->get_future();
      REQUIRE(why.wait_for(std::chrono::seconds(60)) == std::future_status::ready);  // a deadline for a hang only
      CHECK(why.get() == "interrupted");
      return r;
    };
    auto stopped = run();
    CHECK(stopped.summary.samples > 0);
    CHECK(stopped.summary.samples < plain_samples);
    CHECK(!evals_of(stopped.trace).empty());
    CHECK(evals_of(stopped.trace).back().kind == "final_eval");
    if (clock == clock_kind::virtual_time)  // asked between the same events: the same run
      CHECK(lines(run().trace) == lines(stopped.trace));
  }
}
