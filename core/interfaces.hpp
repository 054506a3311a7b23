// The typed interfaces of a job's actors, with the messages they name, and
// their registration. What a program's own actors may send a job and hear
// from it is public (<syncpoint/interfaces.hpp>); the cluster's own
// interfaces (head, node) are in runtime/cluster/wire/interfaces.hpp.
//
// Checkpoints: the runner asks each actor for its saved state with save_atom;
// a resumed worker asks the PS again for the reply it was waiting for with
// resume_atom.
//
// Who talks to whom:
//   worker      -> PS           push -> proceed (the PS delegates the reply to the coordinator),
//                               pull -> weights
//   PS          -> coordinator  pushed -> proceed (shard 0, the lead); pushed (the other shards)
//   coordinator -> PS           attach, mode, publish, commit, flush, stop, weights, snapshot, final;
//                               a sharded PS's sequence (apply, drop, serve)
//   coordinator -> worker       proceed (the start of the run)
//   PS          -> evaluator    snapshot;  evaluator -> coordinator  eval
//   everyone    -> tracer       trace;     coordinator -> tracer     collect
//   coordinator -> driver       progress, done (the driver is whoever runs the job); eval, phase if asked
//   coordinator -> observers    job_started, eval_result, progress_report, phase_change, run_ended
#pragma once

#include <syncpoint/interfaces.hpp>

#include "core/messages.hpp"
#include "core/saved_state.hpp"

#include <caf/typed_actor.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace syncpoint {

/// Collects every trace event of the job, in arrival order.
using tracer_actor = caf::typed_actor<
  caf::reacts_to<trace_atom, trace_event>,
  caf::reacts_to<trace_atom, std::vector<trace_event>>,  // several, in order (a worker of another process)
  caf::replies_to<collect_atom>::with<std::vector<trace_event>>,
  caf::replies_to<save_atom>::with<std::vector<trace_event>>,  // a copy, in arrival order
  // (from) the events from the from-th on, in arrival order, and where the next read starts
  caf::replies_to<collect_atom, uint64_t>::with<uint64_t, std::vector<trace_event>>>;

/// One worker: computes gradients on its shard of the data, pushes them, pulls the model.
using worker_actor = caf::typed_actor<
  caf::reacts_to<proceed>,          // the start of the run
  caf::reacts_to<computed_atom>,    // (to itself) the charged compute time is over
  caf::reacts_to<timeout_atom>,     // (to itself) the request watchdog's period
  caf::reacts_to<trace_atom>,       // (to itself) time to send the trace events it holds
  caf::replies_to<save_atom>::with<saved_worker>,
  caf::reacts_to<resume_atom>,      // resumed: ask again for the reply it waited for
  // Copy c of shard k was lost; the shard's primary (a ps_actor) is this one now
  caf::reacts_to<replica_atom, uint32_t, uint32_t, caf::actor>,
  // A new copy (a ps_actor) takes lost copy c of shard k's place, and takes bulk
  // connections there ("" none): pushes go to it too. Answered once taken in.
  caf::replies_to<copy_atom, uint32_t, uint32_t, caf::actor, std::string>::with<bool>>;

/// Measures the test accuracy of the PS's snapshots and tells the coordinator.
using evaluator_actor = caf::typed_actor<caf::reacts_to<snapshot>>;

/// Receives the coordinator's progress reports, the run's outcome, and (when
/// its runner asks: a cluster's head relays them to the submitter) every
/// evaluation and phase change.
using driver_actor = caf::typed_actor<
  caf::reacts_to<progress_atom, progress_report>,
  caf::reacts_to<eval_atom, eval_result>,
  caf::reacts_to<phase_atom, phase_change>,
  caf::reacts_to<done_atom, run_outcome>>;

/// The coordinator: the job's control interface (public) and what the job's own actors send it.
using coordinator_actor = job_control_actor::extend_with<job_reader_actor>::extend<
  caf::reacts_to<start_atom, std::vector<worker_actor>, evaluator_actor>,
  caf::replies_to<pushed_atom, push_info>::with<proceed>,       // from the lead shard, for the worker
  caf::reacts_to<pushed_atom, push_info, uint32_t>,             // another shard k accepted its slice
  caf::replies_to<pushed_atom, push_info, replica_atom, uint32_t>::with<proceed>,  // replica r of the lead, for the worker
  caf::reacts_to<pushed_atom, push_info, uint32_t, uint32_t>,   // replica r of shard k accepted its slice
  caf::replies_to<pushed_atom, resume_atom, worker_id, uint64_t>::with<proceed>,  // a push asked again (resumed, or its relays lost)
  caf::replies_to<save_atom>::with<saved_coordinator>,
  caf::reacts_to<checkpoint_atom>,                 // (to itself) real clock: time for a checkpoint
  caf::reacts_to<eval_atom, eval_result>,
  caf::reacts_to<timeout_atom>,                   // (to itself) --max-time is over
  caf::reacts_to<timeout_atom, uint64_t>,         // (to itself) a protocol's timer is due
  caf::reacts_to<join_atom, worker_id, worker_actor, std::string>,  // (driver) an elastic job grows: id, worker, where
  // Its shards' copies as they stand (ps_actors; copy r of shard k at
  // k * (R + 1) + r, invalid: lost): a copy made in a lost one's place among them
  caf::replies_to<copy_atom>::with<std::vector<caf::actor>>>;

/// The parameter server (or one shard of it): takes pushes, answers pulls, holds the model.
using ps_actor = caf::typed_actor<
  caf::replies_to<push_atom, gradient_push>::with<proceed>,
  caf::replies_to<pull_atom, uint64_t>::with<weights>,
  caf::replies_to<pull_atom, uint64_t, std::vector<row_block>>::with<weights>,  // ... and a sparse model's rows
  // A fragment's pull (<syncpoint/local_work.hpp>): the slice comes back, the link charges the ranges
  caf::replies_to<pull_atom, uint64_t, std::vector<uint64_t>>::with<weights>,
  // A push or pull that came on the bulk channel (runtime/cluster/dataplane/data_plane.hpp),
  // from this process's gateway, with the worker's key: (key, push) and (key, worker, min_version)
  caf::replies_to<push_atom, bulk_atom, uint64_t, gradient_push>::with<proceed>,
  caf::replies_to<pull_atom, bulk_atom, uint64_t, int32_t, uint64_t>::with<weights>,
  caf::replies_to<pull_atom, bulk_atom, uint64_t, int32_t, uint64_t, std::vector<row_block>>::with<weights>,  // ... with keys
  caf::replies_to<push_atom, resume_atom, uint64_t>::with<proceed>,  // a resumed worker's push in flight
  caf::replies_to<pull_atom, resume_atom, uint64_t>::with<weights>,  // ... and its pull
  caf::replies_to<resume_atom, saved_rows>::with<uint64_t>,  // a resumed shard on a node: a chunk of the checkpoint's rows
  caf::replies_to<save_atom>::with<saved_ps>,
  // A sparse model's rows for a checkpoint: table t's chunk from position p (saved_rows::next)
  caf::replies_to<save_atom, uint32_t, uint64_t>::with<saved_rows>,
  caf::reacts_to<link_atom, uint64_t>,            // (to itself) a transfer crossed the link
  caf::reacts_to<attach_atom, coordinator_actor, std::vector<worker_actor>>,
  caf::reacts_to<mode_atom, uint8_t>,
  caf::replies_to<sync_atom>::with<bool>,          // answered after what the asker sent before
  caf::reacts_to<publish_atom>,
  caf::reacts_to<commit_atom>,
  caf::reacts_to<sequence_atom, std::vector<shard_op>>,  // a sharded PS: apply, drop, serve (core/messages.hpp)
  caf::reacts_to<flush_atom>,
  caf::reacts_to<stop_atom>,
  caf::reacts_to<weights_atom, std::vector<float>>,
  caf::reacts_to<momentum_atom, double, bool, uint32_t>,  // mu, clear velocity, ramp steps
  caf::reacts_to<snapshot_atom, evaluator_actor, uint64_t, bool, uint64_t>,
  caf::replies_to<final_atom>::with<weights>,
  caf::replies_to<counts_atom>::with<uint64_t>,   // the version this shard holds
  caf::replies_to<counts_atom, tables_atom>::with<std::vector<table_counts>>,  // its sparse tables' figures
  caf::reacts_to<replica_atom>>;                  // a replica is its shard's primary now

/// Makes a new copy of a shard in a lost one's place (--ps-rereplicate;
/// actors/coordinator_replace.cpp): in one process it spawns one, on a
/// cluster the job's runner places it on a node.
using copy_placer_actor = caf::typed_actor<
  // (shard k, copy r, the state its serving copy saved) -> the new copy,
  // where it takes bulk connections ("" none), and where it runs (for reports)
  caf::replies_to<copy_atom, uint32_t, uint32_t, saved_ps>::with<ps_actor, std::string, std::string>,
  caf::reacts_to<copy_atom, uint32_t, uint32_t, ps_actor, bool>>;  // installed (true), or ended unused

/// Registers the handle types above and those of <syncpoint/interfaces.hpp>,
/// so that they may travel in messages.
void register_interfaces(caf::actor_system_config& cfg);

}  // namespace syncpoint
