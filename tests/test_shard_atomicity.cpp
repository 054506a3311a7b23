// A sharded PS takes a push whole or not at all, and a pull gets one version
// from every shard (actors/ps_sequence.cpp, docs/architecture.md "Shards").
#include "actors/coordinator.hpp"
#include "actors/parameter_server.hpp"
#include "actors/worker.hpp"
#include "core/ps_group.hpp"
#include <syncpoint/train.hpp>
#include "tests/same_run.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <thread>

using namespace syncpoint;
using namespace std::chrono_literals;
using syncpoint::testing::count_kind;

namespace {

// A softmax whose n-th gradient holds NaN at one value: one push with one
// bad slice, as a diverging layer makes. Counted over every worker of a run
// (one push), or per worker (one push of each: the same pushes, whatever the
// order in which workers due at one instant start computing).
struct poison {
  std::atomic<int> calls{0};
  int at = -1;
  bool each = false;
  size_t index = 0;
};
poison nan_at;

class poisoned : public model {
 public:
  poisoned() : inner_(make_model("softmax")) {}
  size_t size() const override { return inner_->size(); }
  size_t buffers() const override { return inner_->buffers(); }
  std::vector<float> initial_weights(uint64_t seed) override { return inner_->initial_weights(seed); }
  void load(const float* w) override { inner_->load(w); }
  void adopt(std::shared_ptr<const std::vector<float>> w) override { inner_->adopt(std::move(w)); }
  void local_step(const float* grad, float lr) override { inner_->local_step(grad, lr); }
  std::vector<float> current_weights() const override { return inner_->current_weights(); }
  float gradient(const batch_view& b, float* grad) override {
    float loss = inner_->gradient(b, grad);
    if ((nan_at.each ? ++calls_ : ++nan_at.calls) == nan_at.at)
      grad[nan_at.index] = std::nanf("");
    return loss;
  }
  void predict(const batch_view& b, int64_t* labels) override { inner_->predict(b, labels); }

 private:
  std::unique_ptr<model> inner_;
  int calls_ = 0;
};

const bool registered = register_model("test-poisoned", [] { return std::make_unique<poisoned>(); });

// The run with the `at`-th gradient (of the run, or of each worker) poisoned
// in the middle shard's range.
run_result poisoned_run(job_config cfg, int at, bool each = false) {
  auto size = make_model("softmax")->size();
  auto bounds = ps_group::even_bounds(size, 3);
  nan_at.index = (bounds[1] + bounds[2]) / 2;
  nan_at.at = at;
  nan_at.each = each;
  nan_at.calls = 0;
  cfg.model = "test-poisoned";
  return train(cfg);
}


}  // namespace

TEST_CASE("shards: a push whose middle slice holds NaN is applied by no shard, the run counts one refusal and goes "
          "on, as one PS refusing the whole push") {
  REQUIRE(registered);
  struct scenario {
    const char* protocol;
    int workers;
  };
  for (auto s : {scenario{"bsp", 4}, scenario{"asp", 4}, scenario{"ssp", 4}, scenario{"asp", 1}}) {
    CAPTURE(s.protocol);
    CAPTURE(s.workers);
    auto cfg = syncpoint::testing::small_job(s.protocol);
    cfg.workers = s.workers;
    cfg.momentum = 0.5;
    cfg.ps_shards = 3;
    auto three = poisoned_run(cfg, 40);
    CHECK(three.failures.empty());
    CHECK(three.summary.lost == 0);
    CHECK(three.summary.rejected == 1);
    REQUIRE(count_kind(three, "rejected") == 1);
    auto bad = *std::find_if(three.trace.begin(), three.trace.end(), [](auto& e) { return e.kind == "rejected"; });
    CHECK(bad.note.find("NaN") != std::string::npos);
    CHECK(bad.note.find("shard 1 of the parameter server") != std::string::npos);  // the middle one refused
    CHECK(std::none_of(three.trace.begin(), three.trace.end(), [&](const trace_event& e) {
      return e.kind == "apply" && e.worker == bad.worker && e.iter == bad.iter;
    }));
    CHECK(std::all_of(three.final_model.values.data(),
                      three.final_model.values.data() + three.final_model.values.size(),
                      [](float x) { return std::isfinite(x); }));
    CHECK(three.summary.final_accuracy > 0.75);  // it trained on to its accuracy
    // No shard applied any part of it: the run is the one where one PS
    // refused the whole gradient, to the bit (one poisoned push per worker,
    // which pins them whatever order workers due at one instant compute in).
    // The final model is gathered only from shards of one version.
    cfg.ps_shards = 3;
    three = poisoned_run(cfg, 10, true);
    cfg.ps_shards = 1;
    auto one = poisoned_run(cfg, 10, true);
    CHECK(three.summary.rejected == static_cast<uint64_t>(s.workers));
    CHECK(one.summary.rejected == static_cast<uint64_t>(s.workers));
    CHECK(three.final_model.version == one.final_model.version);
    CHECK(three.final_model.values == one.final_model.values);
    CHECK(three.summary.samples == one.summary.samples);
    CHECK(three.summary.final_accuracy == one.summary.final_accuracy);
  }
}

TEST_CASE("shards: on the real clock, 4 workers under asp and ssp pull every model whole from 3 shards, one "
          "version a pull" * doctest::test_suite("real-clock")) {
  for (const char* protocol : {"asp", "ssp"}) {
    CAPTURE(protocol);
    auto cfg = syncpoint::testing::small_job(protocol);
    cfg.clock = clock_kind::real;
    cfg.workers = 4;
    cfg.epochs = 2;
    cfg.ps_shards = 3;
    auto r = train(cfg);
    // A worker whose slices disagree ends with "the slices of one pull must
    // be of one version" (the next test): every worker ran to the end instead.
    CHECK(r.failures.empty());
    CHECK(r.summary.lost == 0);
    CHECK(r.summary.rejected == 0);
    CHECK(r.summary.samples >= 8000);
    CHECK(count_kind(r, "pull") >= 8000 / 64);
    CHECK(r.summary.final_accuracy > 0.8);
    // Pulls were answered while other workers' pushes went in: versions moved between them.
    CHECK(count_kind(r, "apply") == count_kind(r, "push"));
  }
}

TEST_CASE("shards: a worker whose pull gets two versions from two shards ends, naming them") {
  caf::actor_system_config sys_cfg;
  register_messages(sys_cfg);
  caf::actor_system sys{sys_cfg};
  auto data = std::make_shared<dataset>(make_synthetic(256, 16, 1).train);
  auto m = make_model("softmax");
  auto size = m->size();
  auto bounds = ps_group::even_bounds(size, 2);
  // Two shards that answer a pull, one with version 5 and one with version 6.
  auto fake = [&](uint64_t version, size_t n) {
    // (Spawned with arguments: CAF 0.17 binds a null tuple for a function spawned
    // without any, which UBSan reports.)
    auto shard = [](caf::event_based_actor*, uint64_t v, size_t len) -> caf::behavior {
      return {
        [=](pull_atom, uint64_t) { return weights{v, shared_floats(std::vector<float>(len, 0.0f))}; },
      };
    };
    return caf::actor_cast<ps_actor>(sys.spawn(shard, version, n));
  };
  worker_config wc;
  wc.train = data;
  wc.model = "softmax";
  wc.virtual_clock = false;
  wc.origin = sys.clock().now();
  wc.ps = ps_group{{fake(5, bounds[1]), fake(6, bounds[2] - bounds[1])}, bounds};
  auto worker = spawn_worker(sys, wc);
  caf::scoped_actor self{sys};
  self->monitor(worker);
  self->send(worker, proceed{false, true, 5});
  caf::error why;
  self->receive([&](caf::down_msg& dm) { why = dm.reason; },
                caf::after(120s) >> [] { FAIL("the worker took a mixed pull and went on"); });
  auto text = sys.render(why);
  CAPTURE(text);
  // (Whichever slice came second is the one named.)
  CHECK((text.find("shard 1 sent version 6 of the model, another shard version 5") != std::string::npos ||
         text.find("shard 0 sent version 5 of the model, another shard version 6") != std::string::npos));
  CHECK(text.find("the slices of one pull must be of one version") != std::string::npos);
  for (auto& s : wc.ps.shards)
    self->send_exit(s, caf::exit_reason::user_shutdown);
}

namespace {

// Shards over a model of 6 values (2 each), an asp coordinator for two
// workers: worker 0 a puppet whose pushes the test sends slice by slice,
// worker 1 the test itself.
struct sharded_job {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<caf::scoped_actor> self;
  ps_group ps;
  coordinator_actor coordinator;
  caf::actor puppet;

  sharded_job() {
    register_messages(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    self = std::make_unique<caf::scoped_actor>(*sys);
    ps.bounds = {0, 2, 4, 6};
    for (uint32_t k = 0; k < 3; ++k) {
      ps_config c{{1.0f + 2 * k, 2.0f + 2 * k}, 0.1, 0.0, 0.0, 2, tracer_actor{}, sys->clock().now(), 0, 0,
                  momentum_rule::plain};
      c.shard = k;
      c.shards = 3;
      c.offset = 2 * k;
      c.model_size = 6;
      ps.shards.push_back(spawn_parameter_server(*sys, std::move(c)));
    }
    auto cc = std::make_shared<coordinator_config>();
    cc->protocol_name = "asp";
    cc->proto = make_protocol("asp", {});
    cc->workers = 2;
    cc->sample_budget = 1000000;
    cc->ps = ps;
    cc->origin = sys->clock().now();
    coordinator = spawn_coordinator(*sys, cc);
    // The puppet pushes its slice k of a push when told (push_atom, k).
    puppet = sys->spawn([](caf::event_based_actor* me, std::vector<ps_actor> shards) -> caf::behavior {
      return {
        [=](const proceed&) {},
        [=](push_atom, uint32_t k) {
          me->request(shards[k], caf::infinite, push_atom::value,
                      gradient_push{0, 1, 0, 8, std::vector<float>{1.0f, 1.0f}})
            .then([](const proceed&) {}, [](caf::error&) {});
        },
      };
    }, ps.shards);
    (*self)->send(coordinator, start_atom::value,
                  std::vector<worker_actor>{caf::actor_cast<worker_actor>(puppet),
                                            caf::actor_cast<worker_actor>(self->ptr())},
                  evaluator_actor{});
    (*self)->receive([](const proceed& p) { CHECK(p.pull); },
                     caf::after(120s) >> [] { FAIL("worker 1 got no start"); });
  }
  ~sharded_job() {
    for (auto& s : ps.shards)
      (*self)->send_exit(s, caf::exit_reason::user_shutdown);
    (*self)->send_exit(coordinator, caf::exit_reason::user_shutdown);
    (*self)->send_exit(puppet, caf::exit_reason::user_shutdown);
  }

  saved_coordinator coordinator_state() {
    saved_coordinator out;
    (*self)->request(coordinator, 60s, save_atom::value)
      .receive([&](saved_coordinator& s) { out = std::move(s); },
               [&](caf::error& e) { FAIL("the coordinator's state: " << sys->render(e)); });
    return out;
  }

  saved_ps shard_state(size_t k) {
    saved_ps out;
    (*self)->request(ps.shards[k], 60s, save_atom::value)
      .receive([&](saved_ps& s) { out = std::move(s); },
               [&](caf::error& e) { FAIL("shard " << k << "'s state: " << sys->render(e)); });
    return out;
  }

  // Waits (the deadline is for a hang) until the coordinator's state says `done`.
  void await(const std::function<bool(const saved_coordinator&)>& done, const char* what) {
    auto deadline = std::chrono::steady_clock::now() + 120s;
    while (!done(coordinator_state())) {
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline, "never came to pass: " << what);
      std::this_thread::sleep_for(10ms);
    }
  }

  // Worker 1 pulls `version` from every shard: the versions and values.
  std::vector<weights> pull(uint64_t version) {
    std::vector<weights> out;
    for (auto& s : ps.shards)
      (*self)->request(s, 60s, pull_atom::value, version)
        .receive([&](weights& w) { out.push_back(std::move(w)); },
                 [&](caf::error& e) { FAIL("pull: " << sys->render(e)); });
    return out;
  }
};

}  // namespace

TEST_CASE("shards: a worker lost while its push is partly reported leaves nothing of it on any shard") {
  sharded_job job;
  auto start = job.pull(0);  // worker 1 takes its start's version
  for (auto& w : start)
    CHECK(w.version == 0);
  // Worker 0's push reaches shards 0 and 1; its slice for shard 2 never comes.
  (*job.self)->send(job.puppet, push_atom::value, uint32_t{0});
  (*job.self)->send(job.puppet, push_atom::value, uint32_t{1});
  job.await([](const saved_coordinator& s) { return s.partial.size() == 1 && s.partial[0].reports == 2; },
            "two shards reported worker 0's push");
  CHECK(job.shard_state(0).staged.size() == 1);
  CHECK(job.shard_state(1).staged.size() == 1);
  CHECK(job.shard_state(2).staged.empty());
  (*job.self)->send_exit(job.puppet, caf::exit_reason::kill);
  job.await([](const saved_coordinator& s) { return !s.live[0]; }, "worker 0 lost");
  CHECK(job.coordinator_state().partial.empty());
  // The coordinator put its drop into every shard's mailbox while handling the
  // loss, before it answered the request above: it comes before these.
  for (size_t k = 0; k < 3; ++k) {
    CAPTURE(k);
    auto s = job.shard_state(k);
    CHECK(s.staged.empty());
    CHECK(s.version == 0);
  }
  // Worker 1's push is applied on every shard alike, and its pull is one version.
  // (All three slices go out before any reply is awaited: the lead's is the
  // coordinator's, which comes once every shard has its slice.)
  std::vector<caf::response_handle<caf::blocking_actor, caf::message, true>> replies;
  for (size_t k = 0; k < 3; ++k)
    replies.push_back((*job.self)->request(caf::actor_cast<caf::actor>(job.ps.shards[k]), 60s, push_atom::value,
                                           gradient_push{1, 1, 0, 8, std::vector<float>{1.0f, 1.0f}}));
  for (size_t k = 0; k < 3; ++k)
    replies[k].receive([&](const proceed& p) {
      if (k == 0) {  // the coordinator's word
        CHECK(p.refused.empty());
        CHECK(p.pull);
        CHECK(p.min_version == 1);
      }
    }, [&](caf::error& e) { FAIL("push: " << job.sys->render(e)); });
  auto after = job.pull(1);
  std::vector<float> model;
  for (auto& w : after) {
    CHECK(w.version == 1);
    model.insert(model.end(), w.values.data(), w.values.data() + w.values.size());
  }
  // Worker 1 is the only live worker: its gradient of ones at weight 1, lr 0.1.
  std::vector<float> want{0.9f, 1.9f, 2.9f, 3.9f, 4.9f, 5.9f};
  REQUIRE(model.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i)
    CHECK(model[i] == doctest::Approx(want[i]).epsilon(1e-6));
}
