// The submitter relay a head gives each job (runtime/cluster/jobs/submitter_relay.hpp):
// the outcome it hands over is read before it ends, so a head that shuts down
// (it waits for its relays) cannot end its process with the outcome unsent.
#include "runtime/cluster/jobs/submitter_relay.hpp"

#include <doctest/doctest.h>

#include <caf/all.hpp>

#include <memory>
#include <optional>

using namespace syncpoint;
using namespace syncpoint::cluster;
using namespace std::chrono_literals;

namespace {

constexpr auto hang = std::chrono::seconds(60);  // a deadline for a hang only

struct cluster_system {
  caf::actor_system_config cfg;
  caf::actor_system sys{(register_cluster_messages(cfg), cfg)};
  caf::scoped_actor test{sys};
  caf::scoped_actor head{sys};  // told the outcome, for its journal

  // A relay for job `id` whose submitter is `submitter` (none: a restored job's, before a reattach).
  submitter_relay_actor relay(uint64_t id, const caf::scoped_actor* submitter) {
    auto client = submitter ? caf::actor_cast<client_actor>(caf::actor{*submitter}) : client_actor{};
    auto r = spawn_submitter_relay(sys, {id, client, caf::actor_cast<head_actor>(caf::actor{head}), "t"});
    test->monitor(r);
    return r;
  }

  // Whether `r` ends (its down message comes) before the hang deadline.
  bool ends(const submitter_relay_actor& r) {
    bool ended = false;
    test->receive([&](const caf::down_msg& dm) { ended = dm.source == r.address(); }, caf::after(hang) >> [] {});
    return ended;
  }
};

}  // namespace

TEST_CASE("submitter relay: after handing the outcome over, the relay lives until the submitter's client ends, "
          "which is its receipt") {
  cluster_system c;
  auto& test = c.test;
  auto submitter = std::make_unique<caf::scoped_actor>(c.sys);
  auto relay = c.relay(7, submitter.get());
  test->send(relay, finished_atom::value, job_result{job_stage::done, "", 0, {}});
  bool told = false;
  (*submitter)->receive([&](finished_atom, const job_result& r) { told = r.state == job_stage::done; },
                        caf::after(hang) >> [] {});
  REQUIRE_MESSAGE(told, "the submitter was not handed the outcome");
  // Still there once the outcome was read: a line sent to it now still reaches the submitter.
  test->send(relay, progress_atom::value, std::string("after the outcome"));
  std::string line;
  (*submitter)->receive([&](progress_atom, const std::string& l) { line = l; }, caf::after(hang) >> [] {});
  CHECK_MESSAGE(line == "after the outcome", "the relay ended before its submitter's client did");
  bool journaled = false;
  c.head->receive([&](finished_atom, const credential& token, uint64_t id, job_stage state, const std::string&) {
    journaled = token.text == "t" && id == 7 && state == job_stage::done;
  }, caf::after(hang) >> [] {});
  CHECK(journaled);
  submitter.reset();  // the client ends, having read it: so does the relay
  CHECK_MESSAGE(c.ends(relay), "the relay did not end with its submitter's client");
}

TEST_CASE("submitter relay: a head shutting down (leave) ends a relay with no submitter at once, and one whose "
          "submitter listens once the outcome is read") {
  cluster_system c;
  SUBCASE("no submitter: nobody would hear the outcome") {
    auto relay = c.relay(1, nullptr);
    c.test->send(relay, leave_atom::value);
    CHECK(c.ends(relay));
  }
  SUBCASE("a submitter: the leave does not end the relay before the outcome is handed over and read") {
    auto submitter = std::make_unique<caf::scoped_actor>(c.sys);
    auto relay = c.relay(2, submitter.get());
    c.test->send(relay, leave_atom::value);
    c.test->send(relay, finished_atom::value, job_result{job_stage::stopped, "the head is shutting down", 0, {}});
    std::string why;
    (*submitter)->receive([&](finished_atom, const job_result& r) { why = r.message; }, caf::after(hang) >> [] {});
    CHECK(why == "the head is shutting down");
    submitter.reset();
    CHECK(c.ends(relay));
  }
}

TEST_CASE("submitter relay: a submitter that reattaches after the outcome was handed over, before the receipt, is "
          "handed it too") {
  cluster_system c;
  auto first = std::make_unique<caf::scoped_actor>(c.sys);
  auto relay = c.relay(3, first.get());
  c.test->send(relay, finished_atom::value, job_result{job_stage::done, "", 0, {}});
  bool told = false;
  (*first)->receive([&](finished_atom, const job_result&) { told = true; }, caf::after(hang) >> [] {});
  REQUIRE(told);
  caf::scoped_actor second{c.sys};  // (e.g. the first one's connection was lost before the outcome reached it)
  c.test->send(relay, reattach_atom::value, caf::actor_cast<client_actor>(caf::actor{second}));
  std::optional<job_stage> got;
  second->receive([&](finished_atom, const job_result& r) { got = r.state; }, caf::after(hang) >> [] {});
  CHECK(got == job_stage::done);
  first.reset();  // no longer followed: the relay waits for the second
  c.test->send(relay, progress_atom::value, std::string("still here"));
  std::string line;
  second->receive([&](progress_atom, const std::string& l) { line = l; }, caf::after(hang) >> [] {});
  CHECK(line == "still here");
}
