// Replicated PS shards (--ps-replicas R; docs/architecture.md, "Replicated
// shards") on the virtual clock: replicas change nothing while every copy
// lives, and a lost primary costs nothing either, for every protocol: the run
// that loses a shard's primary with a worker (their host) ends with the model
// of the run that loses only that worker, byte for byte.
#include <syncpoint/train.hpp>
#include "tests/small_job.hpp"
#include "tests/same_run.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

using namespace syncpoint;
using syncpoint::testing::same_run;
using syncpoint::testing::count_kind;

namespace {

std::vector<std::string> protocols() { return syncpoint::testing::builtin_protocols(); }

// Every protocol's decisions matter: a 4x straggler, evaluations, momentum, two shards.
job_config replicated(const std::string& protocol, int replicas, int shards = 2) {
  auto cfg = syncpoint::testing::small_job(protocol);
  cfg.straggler = "3:x4";
  cfg.eval_every = 0.5;
  cfg.momentum = 0.5;
  cfg.ps_shards = shards;
  cfg.ps_replicas = replicas;
  return cfg;
}

}  // namespace

TEST_CASE("replicated shards: one or two replicas per shard end each protocol's run as none, byte for byte") {
  for (auto& protocol : protocols()) {
    CAPTURE(protocol);
    auto none = train(replicated(protocol, 0));
    auto one = train(replicated(protocol, 1));
    same_run(one, none);
    CHECK(one.trace.size() == none.trace.size());  // a replica traces nothing: the trace is the same
    if (protocol == "bsp" || protocol == "asp" || protocol == "ssp")
      same_run(train(replicated(protocol, 2)), none);
  }
}

TEST_CASE("replicated shards: a run that loses a shard's primary with a worker ends as the run that loses only the "
          "worker, byte for byte") {
  for (auto& protocol : protocols()) {
    CAPTURE(protocol);
    auto worker_only = replicated(protocol, 1);
    worker_only.internals.fail_worker = 1;
    worker_only.internals.fail_at_iter = 5;
    auto with_shard = worker_only;
    with_shard.internals.fail_shard = "1";  // shard 1's primary shared worker 1's host
    auto lost_worker = train(worker_only);
    auto lost_host = train(with_shard);
    same_run(lost_host, lost_worker);
    REQUIRE(lost_host.summary.losses.size() == 1);
    CHECK(count_kind(lost_host, "copy_lost") == 1);
    CHECK(count_kind(lost_worker, "copy_lost") == 0);
    // The lead shard's primary too: the workers' replies come from its replica.
    auto lead = worker_only;
    lead.internals.fail_shard = "0";
    same_run(train(lead), lost_worker);
  }
}

TEST_CASE("replicated shards: one PS with a replica loses its primary and goes on, and with two replicas both primaries in turn") {
  for (auto protocol : {"bsp", "asp", "ssp"}) {
    CAPTURE(protocol);
    auto cfg = replicated(protocol, 1, 1);
    cfg.internals.fail_worker = 2;
    cfg.internals.fail_at_iter = 7;
    auto worker_only = train(cfg);
    cfg.internals.fail_shard = "0";
    same_run(train(cfg), worker_only);
    auto two = replicated(protocol, 2, 1);
    two.internals.fail_worker = 2;
    two.internals.fail_at_iter = 7;
    auto two_worker_only = train(two);
    two.internals.fail_shard = "0,0";  // the primary, then the replica that took its place
    auto r = train(two);
    same_run(r, two_worker_only);
    CHECK(count_kind(r, "copy_lost") == 2);
  }
}

TEST_CASE("replicated shards: a replica lost, then its primary: the run fails, naming both losses") {
  auto cfg = replicated("bsp", 1);
  cfg.internals.fail_worker = 1;
  cfg.internals.fail_at_iter = 5;
  cfg.internals.fail_shard = "1.1,1";
  try {
    train(cfg);
    FAIL("the run went on without shard 1");
  } catch (const std::exception& e) {
    std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("lost shard 1 of the parameter server") != std::string::npos);
    CHECK(what.find("shard 1's replica (copy 1): injected failure") != std::string::npos);
    CHECK(what.find("then shard 1's primary (copy 0): injected failure") != std::string::npos);
  }
}

TEST_CASE("replicated shards: bad settings are refused, naming what is wrong") {
  auto refused = [](job_config cfg, const std::string& words) {
    CAPTURE(words);
    try {
      validate(cfg);
      FAIL("accepted");
    } catch (const config_error& e) {
      CHECK(std::string(e.what()).find(words) != std::string::npos);
    }
  };
  auto cfg = replicated("bsp", 3);
  refused(cfg, "--ps-replicas must be 0, 1 or 2");
  cfg = replicated("bsp", 1);
  cfg.internals.fail_shard = "1";
  refused(cfg, "it needs --fail-worker W@K");
  cfg.internals.fail_worker = 0;
  cfg.internals.fail_at_iter = 3;
  cfg.internals.fail_shard = "2";
  refused(cfg, "--fail-shard '2': the shard '2' is not in 0..1");
  cfg.internals.fail_shard = "1.2";
  refused(cfg, "the copy '2' is not in 0..1");
  cfg.internals.fail_shard = "1,x";
  refused(cfg, "the shard 'x'");
}
