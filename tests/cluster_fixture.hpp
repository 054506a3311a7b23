// What the multi-process cluster tests share: a small job, and a head with
// nodes started as real processes on loopback (tests/process.hpp).
#pragma once

#include "tests/helpers.hpp"
#include "tests/process.hpp"

#include <doctest/doctest.h>

#include <chrono>
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
  return {"--protocol", protocol, "--workers", std::to_string(workers), "--model", "softmax",
          "--dataset", "synthetic", "--train-limit", "4000", "--test-limit", "500",
          "--epochs", std::to_string(epochs), "--lr", "0.1", "--seed", "3", "--eval-every", "0.5"};
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
// of the last thing it did before.
inline std::pair<double, double> loss_and_last_event(const std::string& trace_path, int worker) {
  double last = 0, lost = -1;
  std::istringstream trace(slurp(trace_path));
  auto tag = "\"worker\": " + std::to_string(worker) + ",";
  for (std::string line; std::getline(trace, line);) {
    if (line.find(tag) == std::string::npos)
      continue;
    if (line.find("\"kind\": \"lost\"") != std::string::npos)
      lost = json_number(line, "t0");
    else
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

  explicit cluster(const std::vector<std::string>& head_args = {}) {
    head = std::make_unique<process>(
      cat({syncpoint_binary(), "head", "--host", "127.0.0.1", "--port", "0"}, head_args), dir.path(),
      "head");
    REQUIRE_MESSAGE(head->wait_for("listening on", 15s), head->err());
    port = head_port(*head);
    REQUIRE(port > 0);
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(port); }

  process& node(const std::string& name, int slots) {
    auto& p = nodes[name];
    p = std::make_unique<process>(std::vector<std::string>{syncpoint_binary(), "node", "--join", address(),
                                                           "--name", name, "--slots",
                                                           std::to_string(slots)},
                                  dir.path(), "node-" + name + std::to_string(runs++));
    REQUIRE_MESSAGE(p->wait_for("joined the head", 15s), p->err());
    return *p;
  }

  std::unique_ptr<process> run(const std::string& cmd, const std::vector<std::string>& args,
                               const std::string& name) {
    auto argv = cat({syncpoint_binary(), cmd}, args);
    return std::make_unique<process>(argv, dir.path(), name);
  }

  std::unique_ptr<process> submit(const std::vector<std::string>& args, const std::string& name) {
    return run("submit", cat({"--head", address()}, args), name);
  }

  std::string status() {
    auto p = run("status", {"--head", address()}, "status" + std::to_string(runs++));
    CHECK(p->wait(15s) == 0);
    return p->out();
  }
};


}  // namespace syncpoint::testing
