// The typed interfaces of the actors of one job. The compiler checks every
// message sent to them, and CAF checks them again when a handle is looked up
// across nodes (remote_actor<T>), so a peer built from another message schema
// is refused. The cluster's own interfaces (head, node) are in
// runtime/cluster/interfaces.hpp.
//
// Checkpoints (core/saved_state.hpp): the runner asks each actor for its
// saved state with save_atom; a resumed worker asks the PS again for the
// reply it was waiting for with resume_atom.
//
// Who talks to whom:
//   worker      -> PS           push -> proceed (the PS delegates the reply to the coordinator),
//                               pull -> weights
//   PS          -> coordinator  pushed -> proceed (shard 0, the lead); pushed (the other shards)
//   coordinator -> PS           attach, mode, publish, commit, flush, stop, weights, snapshot, final
//   coordinator -> worker       proceed (the start of the run)
//   PS          -> evaluator    snapshot;  evaluator -> coordinator  eval
//   everyone    -> tracer       trace;     coordinator -> tracer     collect
//   coordinator -> driver       progress, done (the driver is whoever runs the job)
#pragma once

#include "core/saved_state.hpp"

namespace syncpoint {

using tracer_actor = caf::typed_actor<
  caf::reacts_to<trace_atom, trace_event>,
  caf::replies_to<collect_atom>::with<std::vector<trace_event>>,
  caf::replies_to<save_atom>::with<std::vector<trace_event>>>;  // a copy, in arrival order

using worker_actor = caf::typed_actor<
  caf::reacts_to<proceed>,          // the start of the run
  caf::reacts_to<computed_atom>,    // (to itself) the charged compute time is over
  caf::reacts_to<timeout_atom>,     // (to itself) the request watchdog's period
  caf::replies_to<save_atom>::with<saved_worker>,
  caf::reacts_to<resume_atom>>;     // resumed: ask again for the reply it waited for

using evaluator_actor = caf::typed_actor<caf::reacts_to<snapshot>>;

/// Receives the coordinator's progress reports and the run's outcome.
using driver_actor = caf::typed_actor<
  caf::reacts_to<progress_atom, progress_report>,
  caf::reacts_to<done_atom, run_outcome>>;

using coordinator_actor = caf::typed_actor<
  caf::reacts_to<start_atom, std::vector<worker_actor>, evaluator_actor>,
  caf::replies_to<pushed_atom, push_info>::with<proceed>,       // from the lead shard, for the worker
  caf::reacts_to<pushed_atom, push_info, uint32_t>,             // another shard k accepted its slice
  caf::replies_to<pushed_atom, resume_atom, worker_id>::with<proceed>,  // a resumed worker's held push
  caf::replies_to<save_atom>::with<saved_coordinator>,
  caf::reacts_to<checkpoint_atom>,                 // (to itself) real clock: time for a checkpoint
  caf::reacts_to<eval_atom, eval_result>,
  caf::reacts_to<timeout_atom>,                   // (to itself) --max-time is over
  caf::reacts_to<timeout_atom, uint64_t>,         // (to itself) a protocol's timer is due
  caf::reacts_to<stop_atom, std::string>,         // end the run early, with a reason
  caf::reacts_to<join_atom, worker_id, worker_actor, std::string>>;  // (driver) an elastic job grows: id, worker, where

using ps_actor = caf::typed_actor<
  caf::replies_to<push_atom, gradient_push>::with<proceed>,
  caf::replies_to<pull_atom, uint64_t>::with<weights>,
  // A push or pull that came on the bulk channel (runtime/cluster/data_plane.hpp),
  // from this process's gateway, with the worker's key: (key, push) and (key, worker, min_version)
  caf::replies_to<push_atom, bulk_atom, uint64_t, gradient_push>::with<proceed>,
  caf::replies_to<pull_atom, bulk_atom, uint64_t, int32_t, uint64_t>::with<weights>,
  caf::replies_to<push_atom, resume_atom, uint64_t>::with<proceed>,  // a resumed worker's push in flight
  caf::replies_to<pull_atom, resume_atom, uint64_t>::with<weights>,  // ... and its pull
  caf::replies_to<save_atom>::with<saved_ps>,
  caf::reacts_to<link_atom, uint64_t>,            // (to itself) a transfer crossed the link
  caf::reacts_to<attach_atom, coordinator_actor, std::vector<worker_actor>>,
  caf::reacts_to<mode_atom, uint8_t>,
  caf::replies_to<sync_atom>::with<bool>,          // answered after what the asker sent before
  caf::reacts_to<publish_atom>,
  caf::reacts_to<commit_atom>,
  caf::reacts_to<flush_atom>,
  caf::reacts_to<stop_atom>,
  caf::reacts_to<weights_atom, std::vector<float>>,
  caf::reacts_to<momentum_atom, double, bool, uint32_t>,  // mu, clear velocity, ramp steps
  caf::reacts_to<snapshot_atom, evaluator_actor, uint64_t, bool>,
  caf::replies_to<final_atom>::with<weights>>;

/// Registers the handle types above, so that they may travel in messages.
void register_interfaces(caf::actor_system_config& cfg);

}  // namespace syncpoint
