// The worker's pipeline state (actors/worker_pipeline.hpp): the transitions of
// a plain and of an overlapped iteration, and a checkpoint's flags read back.
#include "actors/worker_pipeline.hpp"

#include <doctest/doctest.h>

using namespace syncpoint;

TEST_CASE("worker pipeline: compute, push, reply, pull, one after the other") {
  worker_pipeline p;
  CHECK((!p.computing() && !p.ready() && !p.pushing() && !p.pulling() && !p.awaiting_resume()));
  p.compute_started();
  CHECK(p.computing());
  p.compute_done();
  CHECK((p.ready() && !p.computing()));
  p.push_sent();
  CHECK((p.pushing() && !p.ready()));  // the gradient went with the push
  p.push_answered();
  CHECK(!p.pushing());
  p.pull_sent();
  CHECK(p.pulling());
  p.pull_answered();
  CHECK((!p.pulling() && !p.computing() && !p.ready()));
}

TEST_CASE("worker pipeline: overlapped, the next gradient is computed and waits while a push is in flight") {
  worker_pipeline p;
  p.compute_started();
  p.compute_done();
  p.push_sent();
  p.compute_started();
  CHECK((p.pushing() && p.computing()));
  p.compute_done();
  CHECK((p.pushing() && p.ready()));  // it waits for the reply
  p.push_answered();
  p.pull_sent();
  CHECK((p.pulling() && p.ready()));  // and for the pull the reply asked for
  p.pull_answered();
  p.push_sent();
  CHECK((p.pushing() && !p.ready()));
}

TEST_CASE("worker pipeline: a checkpoint's flags come back as they were, and impossible pairs are refused") {
  auto p = worker_pipeline::restored(true, false, true, false, 3);
  CHECK((p.computing() && p.pushing() && p.awaiting_resume()));
  p.resumed();
  CHECK(!p.awaiting_resume());
  auto q = worker_pipeline::restored(false, true, false, true, 3);
  CHECK((q.ready() && q.pulling()));
  CHECK_THROWS_WITH(worker_pipeline::restored(true, true, false, false, 3),
                    "worker 3: the checkpoint's pipeline state is not one a worker can be in");
  CHECK_THROWS_WITH(worker_pipeline::restored(false, false, true, true, 3),
                    "worker 3: the checkpoint's pipeline state is not one a worker can be in");
}
