// A worker: pulls the model, computes a gradient on the next batch of its own
// disjoint shard, pushes it, and does what the coordinator's `proceed` (the
// reply to each push) says: stop, pull first or not, take local steps, or
// overlap the next compute with the push in flight. It emits compute / push /
// wait / pull spans to the tracer.
//
// Time: under the virtual clock the gradient is computed for real but charged
// `iter_cost x batch/base_batch x slowdown + extra`; under the real clock the
// straggler's extra time ((slowdown-1) x measured + extra) is a delayed_send.
#pragma once

#include <syncpoint/compressor.hpp>
#include <syncpoint/model.hpp>
#include "core/clock.hpp"
#include "core/interfaces.hpp"
#include "core/ps_group.hpp"
#include "core/straggler.hpp"

#include <functional>
#include <memory>

namespace syncpoint {

struct worker_config {
  worker_id id = 0;
  int workers = 1;                         // shard = examples i with i % workers == id (after shuffle)
  std::shared_ptr<const dataset> train;    // read-only
  std::string model;
  std::string loop = "classify";           // what computes each gradient (<syncpoint/worker_loop.hpp>)
  model_input input;                       // what the model is made for, and its device
  int batch = 64;
  double lr = 0.05;                        // local steps (WBSP), unless a release says the schedule's
  uint64_t sample_budget = 0;              // the run's (0: none): where an inner schedule ends
  double clip_norm = 0;                    // each gradient scaled to at most this L2 norm (0: never)
  std::shared_ptr<const compressor> compress;  // each pushed gradient compressed, with error feedback (null: none)
  double wire_bytes = 0;                   // the whole model's bytes on the PS link, as charged (0: its floats')
  uint64_t seed = 1;
  bool virtual_clock = true;
  double iter_cost_s = 0;                  // virtual clock only
  straggler_plan stragglers;
  ps_group ps;                             // its shards (one: a single PS)
  // How it reaches a shard's copy made in a lost one's place, given where
  // that takes bulk connections and the shard's size (a node's bulk proxy,
  // which the worker ends when it goes); none: the copy itself.
  std::function<ps_actor(ps_actor copy, const std::string& bulk, uint64_t floats)> reach_copy;
  tracer_actor tracer;
  time_point origin;
  caf::duration request_timeout = caf::infinite;  // a request unanswered this long ends the worker
  double loop_timeout_s = 600;             // wall seconds the loop may take for a gradient (either clock)
  uint64_t fail_at_iter = 0;               // fault injection: die instead of this push (0: never)
  std::shared_ptr<const saved_worker> resume;  // continue from a checkpoint (core/saved_state.hpp)
};

/// The worker starts on its first `proceed` (sent by the coordinator), or,
/// resumed, where it was saved. (save_atom) answers its saved_worker.
worker_actor spawn_worker(caf::actor_system& sys, worker_config cfg);

}  // namespace syncpoint
