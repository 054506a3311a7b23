// What a new user meets first (issue 42, part 6): each command's --help lists
// syncpoint's options only (none of CAF's own), with every registered model;
// and an option a command would ignore is refused, saying why.
#include "tests/cli_run.hpp"

#include <doctest/doctest.h>

#include <string>

namespace {

const auto& run = syncpoint::testing::run_cli;

}  // namespace

TEST_SUITE_BEGIN("process");

TEST_CASE("cli: --help lists the command's own options, no CAF option, and every model") {
  for (const char* command : {"train", "compare", "simulate", "submit", "tune-switch", "head", "node"}) {
    CAPTURE(command);
    auto r = run(std::string(command) + " --help");
    CHECK(r.status == 0);
    CHECK(r.output.find("options:") == 0);
    for (const char* caf_own : {"caf-application.ini", "dump-config", "long-help", "--scheduler.", "--middleman.",
                                "max-throughput", "heartbeat-interval"})
      CHECK_MESSAGE(r.output.find(caf_own) == std::string::npos, caf_own << " in:\n" << r.output);
  }
  auto train = run("train --help");
  // Grouped: what the job is, its protocol, its data, the optimizer, and what it writes.
  size_t at = 0;
  for (const char* group : {"\njob:\n", "\nprotocol:\n", "\ndata:\n", "\noptimizer:\n", "\noutput:\n"}) {
    auto found = train.output.find(group);
    CHECK_MESSAGE((found != std::string::npos && found >= at), group << " in order in:\n" << train.output);
    at = found == std::string::npos ? at : found;
  }
  CHECK(train.output.find("\noptimizer:\n  --optimizer VALUE") != std::string::npos);
  CHECK(run("submit --help").output.find("\ncluster:\n  --head VALUE") != std::string::npos);
  CHECK(train.output.find("--protocol, -p VALUE") != std::string::npos);
  CHECK(train.output.find("--config-file VALUE") != std::string::npos);
  CHECK(train.output.find("model: cnn, ctr, mlp, resnet, resnet18, script, softmax, tinylm; ") != std::string::npos);
  CHECK(train.output.find("(docs/python.md) (default mlp)") != std::string::npos);
  CHECK(run("train -h").output == train.output);
  CHECK(run("train --lr 0.1 --help").output == train.output);  // help wins over the other arguments
}

TEST_CASE("cli: submit --data is refused with exit 2, naming the folders a cluster job reads") {
  // (The head's address is never contacted: the refusal comes first.)
  auto r = run("submit --head 127.0.0.1:1 --protocol bsp --data /tmp/my-data");
  CHECK(r.status == 2);
  CHECK(r.output.find("syncpoint submit: --data /tmp/my-data is not for a cluster job: each node's workers read the "
                      "data set from that node's own folder (syncpoint node --data DIR") != std::string::npos);
  CHECK(r.output.find("the head evaluates on its own (syncpoint head --data DIR)") != std::string::npos);
}

TEST_SUITE_END();
