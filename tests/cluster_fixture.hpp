// What the multi-process cluster tests share: a small job, and a head with
// nodes started as real processes on loopback (bench/process.hpp).
#pragma once

#include "tests/helpers.hpp"
#include <syncpoint/protocol.hpp>
#include "bench/process.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace syncpoint::testing {

using namespace std::chrono_literals;


// A small job: softmax on synthetic data, so a run takes a second or less.
inline std::vector<std::string> small_job(const std::string& protocol, int workers, double epochs) {
  std::vector<std::string> job{"--protocol", protocol, "--workers", std::to_string(workers), "--model", "softmax",
                               "--dataset", "synthetic", "--train-limit", "4000", "--test-limit", "500",
                               "--epochs", std::to_string(epochs), "--seed", "3", "--eval-every", "0.5"};
  // A local-update protocol pushes every 4 plain SGD steps at the others' rate, its
  // fragment the model's one tensor, with its own outer step (its job defaults).
  bool local = false;
  for (auto& o : syncpoint::protocol_option_specs(protocol)) {
    if (o.name == "local-steps")
      local = true, job.insert(job.end(), {"--local-steps", "4"});
    if (o.name == "inner-optimizer")
      job.insert(job.end(), {"--inner-optimizer", "sgd"});
    if (o.name == "inner-lr")
      job.insert(job.end(), {"--inner-lr", "0.1"});
    if (o.name == "fragments")
      job.insert(job.end(), {"--fragments", "1"});
  }
  if (!local)
    job.insert(job.end(), {"--lr", "0.1"});
  return job;
}

// A job that never ends on its own within a test: 1e5 epochs, with --max-time
// 900 only so that a forgotten one stops. A test that acts on a running job
// uses it, waits for the event that proves the job is where it needs it
// (await), acts, and then ends the job itself (interrupt).
inline std::vector<std::string> open_job(const std::string& protocol, int workers) {
  auto job = small_job(protocol, workers, 1e5);
  job.insert(job.end(), {"--max-time", "900"});
  return job;
}

// The deadline for an event of a running job or for a process to end: a
// hang's, not a typical time (a loaded two-core machine, the whole job).
inline constexpr std::chrono::seconds hang_deadline{120};

// Waits for a line of `p`'s stderr after byte `from` that `match`es (`what`
// says which, for the message): the event that proves the job is in the state
// the test needs. The offset past that line. Fails the test saying why when
// `p` ended first (the job did not wait for the test) or the deadline passed (a hang).
inline size_t await_line(process& p, const std::function<bool(const std::string&)>& match,
                         const std::string& what, size_t from) {
  auto at = p.wait_for_line(match, hang_deadline, true, from);
  if (at == std::string::npos) {
    bool ended = !p.running();
    FAIL("waited for " << what << ": "
               << (ended ? "the process ended first (exit " + std::to_string(p.wait(std::chrono::seconds(1))) +
                             "): the job did not stay in the state the test acts on"
                         : "not there after " + std::to_string(hang_deadline.count()) + " s")
               << "\n--- stderr ---\n" << p.err());
  }
  return at;
}

// await_line for a line that contains `needle`.
inline size_t await(process& p, const std::string& needle, size_t from = 0) {
  return await_line(p, [&](const std::string& line) { return line.find(needle) != std::string::npos; },
                    "'" + needle + "'", from);
}

// The accuracy of a progress line ("[bsp] eval t=... acc=0.8123"), or -1.
inline double line_accuracy(const std::string& line) {
  auto at = line.find(" acc=");
  return at == std::string::npos ? -1 : std::atof(line.c_str() + at + 5);
}

// Waits for an evaluation after byte `from` at accuracy `at_least` or more
// (an open job keeps training until it gets there); the offset past it.
inline size_t await_accuracy(process& p, double at_least, size_t from = 0) {
  return await_line(p, [&](const std::string& line) {
    return line.find("] eval ") != std::string::npos && line_accuracy(line) >= at_least;
  }, "an evaluation at accuracy " + std::to_string(at_least) + " or more", from);
}

// Ends a submitted job as Ctrl-C does: the head stops it, and the submitter
// writes its files and exits 130.
inline void interrupt(process& submitter) {
  submitter.signal(SIGINT);
  int rc = submitter.wait(hang_deadline);
  REQUIRE_MESSAGE(rc == 130, "submit after SIGINT: exit " << rc << "\n" << submitter.err());
  CHECK_MESSAGE(submitter.err().find("stopped early: its submitter was interrupted (SIGINT)") != std::string::npos,
                submitter.err());
}

inline std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}


// The number after "key": in a JSON text (first occurrence), or NaN.
inline double json_number(const std::string& text, const std::string& key) {
  auto at = text.find("\"" + key + "\": ");
  if (at == std::string::npos)
    return std::nan("");
  return std::atof(text.c_str() + at + key.size() + 4);
}

// From a run's trace: when `worker` was declared lost (-1: never) and the end
// of the last thing it did before: its own events (compute, push, pull, wait),
// not the coordinator's records about it ("rejected" and "joined" carry the
// coordinator's time of handling, which can follow the loss).
inline std::pair<double, double> loss_and_last_event(const std::string& trace_path, int worker) {
  double last = 0, lost = -1;
  std::istringstream trace(slurp(trace_path));
  auto tag = "\"worker\": " + std::to_string(worker) + ",";
  for (std::string line; std::getline(trace, line);) {
    if (line.find(tag) == std::string::npos)
      continue;
    if (line.find("\"kind\": \"lost\"") != std::string::npos) {
      lost = json_number(line, "t0");
      continue;
    }
    for (const char* own : {"compute", "push", "pull", "wait"})
      if (line.find(std::string("\"kind\": \"") + own + "\"") != std::string::npos)
        last = std::max(last, json_number(line, "t1"));
  }
  return {lost, last};
}

struct cluster {
  temp_dir dir;
  std::unique_ptr<process> head;
  std::map<std::string, std::unique_ptr<process>> nodes;
  int port = 0;
  int runs = 0;

  std::string program = syncpoint_binary();  // the head's: `syncpoint`, or a program of the user's own

  // Every head serves its dashboard, on a free port (tests/test_dashboard.cpp reads it).
  explicit cluster(const std::vector<std::string>& head_args = {}) : cluster(syncpoint_binary(), head_args) {}

  // A head started from `head_program` (a program that calls syncpoint::command_main).
  cluster(const std::string& head_program, const std::vector<std::string>& head_args) : program(head_program) {
    head = std::make_unique<process>(
      cat({program, "head", "--host", "127.0.0.1", "--port", "0", "--dashboard", "any", "--runs",
           dir / "head-runs"},
          head_args),
      dir.path(), "head");
    REQUIRE_MESSAGE(head->wait_for("listening on", hang_deadline), head->err());
    port = head_port(*head);
    REQUIRE(port > 0);
  }

  // The port of the head's dashboard (it prints "dashboard: http://127.0.0.1:PORT/" at start).
  int dashboard_port() {
    REQUIRE_MESSAGE(head->wait_for("dashboard: http", hang_deadline), head->out() << head->err());
    auto out = head->out();
    auto at = out.find("dashboard: http");
    at = out.find("127.0.0.1:", at);
    REQUIRE(at != std::string::npos);
    return std::atoi(out.c_str() + at + 10);
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(port); }

  // A node of `slots` started from `node_program` ("": the head's program).
  process& node(const std::string& name, int slots, const std::string& node_program = "") {
    auto& p = nodes[name];
    p = std::make_unique<process>(std::vector<std::string>{node_program.empty() ? program : node_program, "node",
                                                           "--join", address(),
                                                           "--name", name, "--slots",
                                                           std::to_string(slots)},
                                  dir.path(), "node-" + name + std::to_string(runs++));
    REQUIRE_MESSAGE(p->wait_for("joined the head", hang_deadline), p->err());
    return *p;
  }

  std::unique_ptr<process> run(const std::string& cmd, const std::vector<std::string>& args,
                               const std::string& name) {
    auto argv = cat({program, cmd}, args);
    return std::make_unique<process>(argv, dir.path(), name);
  }

  std::unique_ptr<process> submit(const std::vector<std::string>& args, const std::string& name) {
    return run("submit", cat({"--head", address()}, args), name);
  }

  std::string status() {
    auto p = run("status", {"--head", address()}, "status" + std::to_string(runs++));
    CHECK(p->wait(hang_deadline) == 0);
    return p->out();
  }
};


}  // namespace syncpoint::testing
