// A parameter server alone, driven by a scoped actor: what tests/test_parameter_server.cpp
// and tests/test_buffers.cpp push to and pull from.
#pragma once

#include "actors/parameter_server.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <vector>

namespace syncpoint::testing {

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<caf::scoped_actor> self;
  ps_actor ps;

  // Weights (1, 2, 3), lr 0.1, the plain rule unless a test is about the
  // adjusted one (docs/momentum.md); `initial` and `buffers` for a model
  // with buffers at its end (docs/buffers.md).
  explicit fixture(int workers = 2, double momentum = 0.5, double wd = 0.1,
                   momentum_rule rule = momentum_rule::plain, std::vector<float> initial = {1.0f, 2.0f, 3.0f},
                   uint64_t buffers = 0) {
    register_messages(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    self = std::make_unique<caf::scoped_actor>(*sys);
    ps_config c{std::move(initial), 0.1, momentum, wd, workers, tracer_actor{}, sys->clock().now(), 0, 0, rule};
    c.buffers = buffers;
    ps = spawn_parameter_server(*sys, std::move(c));
  }
  ~fixture() { (*self)->send_exit(ps, caf::exit_reason::user_shutdown); }

  // Returns the error, or none when the push was accepted.
  caf::error push(worker_id w, std::vector<float> g, uint64_t base = 0, uint32_t samples = 8) {
    caf::error result;
    (*self)->request(ps, std::chrono::seconds(5), push_atom::value, gradient_push{w, 1, base, samples, std::move(g)})
      .receive([](const proceed&) {}, [&](caf::error& e) { result = std::move(e); });
    return result;
  }

  weights pull(uint64_t min_version = 0) {
    weights out;
    (*self)->request(ps, std::chrono::seconds(5), pull_atom::value, min_version)
      .receive([&](weights& w) { out = std::move(w); },
               [&](caf::error& e) { FAIL("pull failed: " << sys->render(e)); });
    return out;
  }
};

inline void check_close(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
}

}  // namespace syncpoint::testing
