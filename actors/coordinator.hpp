// The coordinator: hosts a protocol and everything protocol-independent —
// worker liveness, clocks, the sample budget, time limit, target accuracy,
// evaluation cadence, barriers — and ends the run.
//
// Messages (interface: coordinator_actor in core/interfaces.hpp):
//   (start_atom, workers, evaluator)          begins the run
//   (pushed_atom, push_info) -> proceed       delegated by the PS (its lead shard)
//   (pushed_atom, push_info, shard)           another shard has the push's slice: the
//                                             coordinator acts on a push once every shard has it
//   (eval_atom, eval_result)                  from the evaluator
//   stop_request{why}                         ends the run early (as a limit would), from
//                                             the driver or an observer
//   eval_request, mark_request{note, value}   from the driver or an observer: evaluate now; a "mark" event
//   checkpoint_request{why}                   from the driver or an observer: a checkpoint now (real clock)
//   counts_request -> job_counts              from anyone: the run's counts so far
//   (save_atom) -> saved_coordinator          its state and its protocol's, for a
//                                             checkpoint (an error while the run ends)
//   (pushed_atom, resume_atom, worker, iter) -> proceed   a push asked again
//   (join_atom, id, worker, where)            from the driver: worker `id` (vacant:
//                                             never started, or lost) joins the run
// A start message with an invalid handle leaves that id vacant (an elastic
// job that started with fewer slots than workers).
// Resumed (cfg.resume), it starts on (start_atom, ...) where it was saved,
// without starting the protocol again.
// It sends progress reports to `driver` (with report_progress), every
// evaluation and phase change (with report_events) and, when the run ends,
// (done_atom, run_outcome); then it shuts down the PS, evaluator,
// tracer and workers. Observers (job_observer_actor) get job_started with the
// control handle, then every evaluation, progress report and phase change,
// and run_ended; one that fails ends the run (user_actor_failed).
#pragma once

#include <syncpoint/protocol.hpp>
#include "core/clock.hpp"
#include "core/interfaces.hpp"
#include "core/optimizer.hpp"
#include "core/ps_group.hpp"
#include "core/saved_state.hpp"

#include <functional>
#include <memory>

namespace syncpoint {

struct coordinator_config {
  std::string protocol_name;
  std::unique_ptr<protocol> proto;  // moved into the actor
  int workers = 1;
  int batch = 64;
  double momentum = 0;              // as configured (protocols may change it, e.g. at a switch)
  lr_schedule schedule;             // the PS's rate by samples: a local step (WBSP) follows it too
  uint64_t sample_budget = 0;       // 0: none
  double max_time_s = 0;            // 0: none
  double target_accuracy = 0;       // 0: none
  bool stop_at_target = false;
  uint64_t eval_every_samples = 0;  // 0: only the final evaluation
  bool progress = false;            // print progress lines on stderr
  bool report_progress = false;     // send them to the driver
  bool report_events = false;       // send the driver every evaluation and phase change too
  progress_fn on_progress;          // or hand them to this (called on the coordinator's thread)
  ps_group ps;                      // its shards; control messages go to every one (every copy)
  // Fault injection (--fail-shard with --fail-worker W@K): when worker
  // `fail_shard_with` is lost, these copies of shards die too, in order, as if
  // they shared its host: {shard, copy}, copy -1 for the shard's primary then.
  std::vector<std::pair<int, int>> fail_copies;
  int fail_shard_with = -1;
  // --ps-rereplicate: a lost copy of a shard is made again by this (none: the
  // shard goes on with the copies it has left; actors/coordinator_replace.cpp),
  // which the coordinator ends with the run when it is the job's own.
  copy_placer_actor placer;
  bool own_placer = false;
  // At the end every live copy of a shard must hold its serving copy's model,
  // bit for bit, or the run fails (the virtual clock's check on replicas).
  bool check_copies = false;
  tracer_actor tracer;
  driver_actor driver;
  std::vector<job_observer_actor> observers;  // told of the run from its start (job_observer_actor)
  time_point origin;
  caf::duration request_timeout = caf::infinite;
  std::shared_ptr<const saved_coordinator> resume;  // continue from a checkpoint
  bool own_timers = false;          // resumed on the real clock: it re-arms its own timers
  // Real clock: a checkpoint every this many seconds, handed to on_checkpoint
  // (on the coordinator's thread). The virtual clock's runner takes its own.
  double checkpoint_every_s = 0;
  // The runner writes it and returns the progress line that says where it went.
  checkpoint_opener on_checkpoint;
};

coordinator_actor spawn_coordinator(caf::actor_system& sys, std::shared_ptr<coordinator_config> cfg);

}  // namespace syncpoint
