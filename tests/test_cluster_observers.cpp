// A program's own actors follow a cluster job from the submitting process
// (<syncpoint/cluster.hpp>): the examples' metrics sink and early-stopping
// actor, unchanged from the one-process job, with a head and a node as real
// processes. They hear what the trace records, in its order; their stop,
// evaluation and mark reach the job through the head; one that fails stops it.
#include "examples/early_stopping.hpp"
#include "examples/metrics_sink.hpp"
#include "tests/cluster_fixture.hpp"
#include "tests/failing_observer.hpp"

#include <syncpoint/cluster.hpp>

#include <atomic>
#include <filesystem>
#include <future>
#include <mutex>

using namespace syncpoint;
using namespace syncpoint::testing;

namespace {

// As cluster_fixture's small_job, as a job_config: softmax on synthetic data.
job_config cluster_job(const std::string& protocol, double epochs, double eval_every) {
  job_config cfg;
  cfg.protocol = protocol;
  cfg.clock = clock_kind::real;
  cfg.workers = 2;
  cfg.model = "softmax";
  cfg.dataset = "synthetic";
  cfg.train_limit = 4000;
  cfg.test_limit = 500;
  cfg.epochs = epochs;
  cfg.lr = 0.1;
  cfg.seed = 3;
  cfg.eval_every = eval_every;
  cfg.max_time_s = 900;  // an open job's deadline for a hang, never its end
  cfg.progress = true;
  return cfg;
}

// Submits `cfg` to the head at `head` with the observers `make` spawns in the
// submitting system; the run, the sink's CSV and the lines handed to on_line.
struct followed {
  cluster_run run;
  std::string csv;
  std::vector<std::string> lines;
};

template <class Make>
followed submit_followed(const std::string& head, const job_config& cfg, Make make) {
  submit_options opts;
  opts.head = head;
  caf::actor_system_config sys_cfg;
  configure_submitter(sys_cfg, opts);
  caf::actor_system sys{sys_cfg};
  followed out;
  std::ostringstream csv;
  std::mutex m;
  auto sink = sys.spawn(metrics_sink, static_cast<std::ostream*>(&csv));
  opts.observers = make(sys);
  opts.observers.insert(opts.observers.begin(), sink);
  opts.on_line = [&](const std::string& line) {
    std::lock_guard<std::mutex> guard{m};
    out.lines.push_back(line);
  };
  // The sink got `done` before submit() had the result: once it is gone, it
  // wrote everything. Ended also when submit() throws: `sys` waits for them.
  auto end_observers = [&] {
    caf::scoped_actor self{sys};
    for (auto& o : opts.observers)
      self->send_exit(o, caf::exit_reason::user_shutdown);
    self->wait_for(opts.observers);
    opts.observers.clear();
  };
  try {
    out.run = submit(sys, cfg, opts);
  } catch (const std::exception& e) {
    end_observers();
    FAIL("submit threw: " << std::string(e.what()));
  }
  end_observers();
  out.csv = csv.str();
  return out;
}

// The sink's rows of `kind` ("eval" takes final_eval too).
std::vector<std::string> rows(const std::string& csv, const std::string& kind) {
  std::vector<std::string> out;
  std::istringstream in(csv);
  for (std::string row; std::getline(in, row);)
    if (row.rfind(kind + ",", 0) == 0 || (kind == "eval" && row.rfind("final_eval,", 0) == 0))
      out.push_back(row);
  return out;
}

// The trace's evaluations, as the sink writes them.
std::vector<std::string> trace_evals(const std::vector<trace_event>& trace) {
  std::vector<std::string> out;
  for (auto& e : trace)
    if (e.kind == "eval" || e.kind == "final_eval")
      out.push_back(e.kind + "," + csv_number(static_cast<double>(e.t0) * 1e-9) + "," + std::to_string(e.iter) +
                    "," + std::to_string(e.version) + "," + csv_number(e.value) + ",,");
  return out;
}

// The trace's phase changes, as the sink writes them.
std::vector<std::string> trace_phases(const std::vector<trace_event>& trace) {
  std::vector<std::string> out;
  for (auto& e : trace)
    if (e.kind == "phase")
      out.push_back("phase," + csv_number(static_cast<double>(e.t0) * 1e-9) + "," + std::to_string(e.iter) + ",,,," +
                    csv_text(e.note));
  return out;
}

size_t count_kind(const std::vector<trace_event>& trace, const std::string& kind) {
  return static_cast<size_t>(
    std::count_if(trace.begin(), trace.end(), [&](const trace_event& e) { return e.kind == kind; }));
}

// Asks for an evaluation and marks the trace at the start; stops the run at
// the first evaluation it hears. With eval_every 0 that evaluation is its own.
struct asker_state {
  job_control_actor control;
};

job_observer_actor::behavior_type asker(job_observer_actor::stateful_pointer<asker_state> self) {
  return {
    [=](const job_started& started) {
      auto& control = started.control;
      self->state.control = control;
      self->send(control, mark_request{"asked", 7.0});
      self->send(control, eval_request{});
    },
    [=](const eval_result& e) {
      if (!e.final)
        self->send(self->state.control, stop_request{"heard one"});
    },
    [](const progress_report&) {},
    [](const phase_change&) {},
    [](const run_ended&) {},
  };
}

}  // namespace

TEST_CASE("cluster observers: the examples' metrics sink and early stopping follow a cluster job from the submitting process") {
  cluster c;
  c.node("a", 2);

  // To its budget: every evaluation and the phase change, in the trace's
  // order, the coordinator's progress lines, and why it ended.
  auto plain = submit_followed(c.address(), cluster_job("sync-switch", 2, 0.25),
                               [](caf::actor_system&) { return std::vector<job_observer_actor>{}; });
  REQUIRE_MESSAGE(plain.run.state == "done", plain.run.message);
  REQUIRE(plain.run.ran);
  auto& trace = plain.run.result.trace;
  CHECK(rows(plain.csv, "eval") == trace_evals(trace));
  CHECK(rows(plain.csv, "eval").size() >= 8);  // 2 epochs, every quarter, and the final one
  auto phases = rows(plain.csv, "phase");
  CHECK(phases == trace_phases(trace));
  REQUIRE(phases.size() == 2);  // its start in bsp, then the switch
  CHECK_MESSAGE(phases[0].find("\"->bsp start\"") != std::string::npos, phases[0]);
  CHECK_MESSAGE(phases[1].find("\"bsp>asp ") != std::string::npos, phases[1]);
  CHECK(rows(plain.csv, "done") == std::vector<std::string>{"done,,,,,,\"budget\""});
  auto progress = rows(plain.csv, "progress");
  CHECK(!progress.empty());
  for (auto& row : progress) {  // each of the coordinator's lines was shown too
    bool shown = std::any_of(plain.lines.begin(), plain.lines.end(),
                             [&](const std::string& line) { return row.find(csv_text(line)) != std::string::npos; });
    CHECK_MESSAGE(shown, row);
  }

  // Stopped by the early-stopping actor: min_delta 1 is never beaten after
  // the first evaluation, so it stops the open job at the third.
  auto stopped = submit_followed(c.address(), cluster_job("bsp", 1e5, 0.25), [](caf::actor_system& sys) {
    return std::vector<job_observer_actor>{sys.spawn(early_stopping, 2, 1.0)};
  });
  auto why = std::string("early stop: no improvement in 2 evaluations");
  REQUIRE_MESSAGE(stopped.run.state == "stopped", stopped.run.message);
  CHECK(stopped.run.message == why);
  CHECK(rows(stopped.csv, "eval") == trace_evals(stopped.run.result.trace));
  CHECK(rows(stopped.csv, "eval").size() >= 4);  // three heard, the stop's way back, the final one
  CHECK(rows(stopped.csv, "done") == std::vector<std::string>{"done,,,,,,\"" + why + "\""});

  // Evaluate and mark on request: with no periodic evaluation, the one
  // evaluation before the final one is the observer's, and so is the mark.
  auto asked = submit_followed(c.address(), cluster_job("bsp", 1e5, 0), [](caf::actor_system& sys) {
    return std::vector<job_observer_actor>{sys.spawn(asker)};
  });
  REQUIRE_MESSAGE(asked.run.state == "stopped", asked.run.message);
  CHECK(asked.run.message == "heard one");
  auto& t = asked.run.result.trace;
  CHECK(count_kind(t, "eval") == 1);
  CHECK(count_kind(t, "final_eval") == 1);
  CHECK(rows(asked.csv, "eval") == trace_evals(t));
  auto mark = std::find_if(t.begin(), t.end(), [](const trace_event& e) { return e.kind == "mark"; });
  REQUIRE(mark != t.end());
  CHECK(mark->note == "asked");
  CHECK(mark->value == 7.0);
  REQUIRE(c.head->running());
}

TEST_CASE("cluster observers: one that fails stops the cluster job, which then says failed with user_actor_failed") {
  cluster c;
  c.node("a", 2);
  auto f = submit_followed(c.address(), cluster_job("bsp", 1e5, 0.25), [](caf::actor_system& sys) {
    return std::vector<job_observer_actor>{sys.spawn(failing)};
  });
  CHECK(f.run.state == "failed");
  CHECK_MESSAGE(f.run.message.find("user_actor_failed") != std::string::npos, f.run.message);
  CHECK_MESSAGE(f.run.message.find("observer 1 of the job failed") != std::string::npos, f.run.message);
  CHECK_MESSAGE(f.run.message.find("the sink's disk is full") != std::string::npos, f.run.message);
  CHECK(f.run.ran);  // stopped on the head: its trace and model came back
  auto done = rows(f.csv, "done");
  REQUIRE(done.size() == 1);
  CHECK(done[0].find("failed: ") != std::string::npos);  // the sink heard why
  auto s = c.status();
  CHECK_MESSAGE(s.find("stopped") != std::string::npos, s);
  REQUIRE(c.head->running());
}

TEST_CASE("cluster observers: submit refuses what it cannot send, saying why") {
  submit_options opts;
  opts.head = "127.0.0.1:1";
  caf::actor_system_config sys_cfg;
  configure_submitter(sys_cfg, opts);
  caf::actor_system sys{sys_cfg};
  auto virt = cluster_job("bsp", 1, 0);
  virt.clock = clock_kind::virtual_time;
  CHECK_THROWS_WITH_AS(submit(sys, virt, opts), doctest::Contains("a cluster job runs on the real clock"), config_error);
  opts.head = "nowhere";
  CHECK_THROWS_WITH_AS(submit(sys, cluster_job("bsp", 1, 0), opts), doctest::Contains("HOST:PORT, got 'nowhere'"),
                       config_error);
  opts.head = "127.0.0.1:1";  // nothing listens there: refused at once
  try {
    submit(sys, cluster_job("bsp", 1, 0), opts);
    FAIL("submit to a closed port returned");
  } catch (const cluster_error& e) {
    CHECK(e.which() == cluster_error::kind::unreachable);
    CHECK_MESSAGE(std::string(e.what()).find("127.0.0.1:1") != std::string::npos, std::string(e.what()));
  }
  submit_options tls;
  tls.tls_cert = "/nowhere/cert.pem";
  caf::actor_system_config other;
  CHECK_THROWS_AS(configure_submitter(other, tls), config_error);
}

TEST_CASE("cluster observers: examples/submit.cpp stops a cluster job early from the submitting machine") {
  cluster c({"--token", "s3cret"});
  auto node = c.run("node", {"--join", c.address(), "--name", "a", "--slots", "2", "--token", "s3cret"}, "node-a");
  REQUIRE_MESSAGE(node->wait_for("joined the head", hang_deadline), node->err());
  process ex({SYNCPOINT_EXAMPLE_SUBMIT, c.address(), "s3cret"}, c.dir.path(), "example_submit");
  int rc = ex.wait(hang_deadline);
  REQUIRE_MESSAGE(rc == 0, "exit " << rc << "\n" << ex.err());
  CHECK_MESSAGE(ex.err().find("stopped: early stop: no improvement in 3 evaluations") != std::string::npos, ex.err());
  auto csv = ex.out();
  CHECK(rows(csv, "eval").size() >= 5);  // three without an improvement after the best, and the final one
  CHECK(!rows(csv, "progress").empty());
  CHECK(rows(csv, "done") == std::vector<std::string>{"done,,,,,,\"early stop: no improvement in 3 evaluations\""});
  // Without the token the head refuses it, saying why.
  process refused({SYNCPOINT_EXAMPLE_SUBMIT, c.address()}, c.dir.path(), "example_submit_refused");
  CHECK(refused.wait(hang_deadline) == 1);
  CHECK_MESSAGE(refused.err().find("token") != std::string::npos, refused.err());
  REQUIRE(c.head->running());
}

// <syncpoint/cluster.hpp>'s example, as its header shows it (tests/test_header_examples_parts.cpp
// checks that its lines are here), against this test's head.
TEST_CASE("header examples: <syncpoint/cluster.hpp>'s submit runs a job on a head and a node, observed from here") {
  cluster c;
  c.node("a", 2);
  std::string cluster_token;  // this test's head has none
  auto cfg = cluster_job("bsp", 1, 0.5);
  temp_dir out;
  cfg.out_dir = out / "run";
  std::atomic<int> evals{0};
  std::promise<std::string> ended;  // set by the observer, which may hear the end after submit() returns
  auto my_observer = [&]() -> job_observer_actor::behavior_type {
    return {
      [](const job_started&) {},
      [&](const eval_result&) { ++evals; },
      [](const progress_report&) {},
      [](const phase_change&) {},
      [&](const run_ended& e) { ended.set_value(e.why); },
    };
  };
  syncpoint::submit_options opts;
  opts.head = "10.0.0.5:4242";
  opts.head = c.address();  // (this test's head)
  opts.token = cluster_token;                      // if the head has one (--token)
  caf::actor_system_config sys_cfg;
  syncpoint::configure_submitter(sys_cfg, opts);   // the middleman, TLS, messages
  caf::actor_system sys{sys_cfg};
  opts.observers = {sys.spawn(my_observer)};       // a job_observer_actor, as for job::spawn
  cfg.clock = syncpoint::clock_kind::real;         // a cluster job runs in wall time
  syncpoint::cluster_run r = syncpoint::submit(sys, cfg, opts);  // writes cfg.out_dir as train() does
  std::cout << r.state << " " << (r.ran ? r.result.summary.final_accuracy : 0.0) << "\n";
  opts.observers.clear();  // `sys` waits for the actors it has handles to when it ends
  REQUIRE_MESSAGE(r.state == "done", r.message);
  CHECK(r.result.summary.final_accuracy > 0.5);
  CHECK(std::filesystem::exists(out / "run/summary.json"));
  auto why = ended.get_future();
  REQUIRE(why.wait_for(hang_deadline) == std::future_status::ready);
  CHECK(why.get() == "budget");
  CHECK(evals >= 2);
}
