// Every message that only the job's own actors exchange (the rest, which a
// program sees too, are public: <syncpoint/messages.hpp>). Each type has an
// `inspect` overload and is registered by `register_messages`, so any of them
// may cross nodes.
//
// Data plane:    worker -> PS   push(gradient_push)      replied with `proceed`
//                worker -> PS   pull(min_version)        replied with `weights`
// Control plane: PS -> coordinator  pushed(push_info)   (the PS delegates the
//                push's reply, so the coordinator's `proceed` goes straight
//                to the worker)
//                coordinator -> PS  commit / set_mode / set_weights / snapshot
#pragma once

#include <syncpoint/local_work.hpp>
#include <syncpoint/messages.hpp>

#include "core/float_slice.hpp"
#include "core/shared_floats.hpp"

#include <caf/all.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace syncpoint {

// -- atoms: the library's own (a program's messages are the structs of <syncpoint/messages.hpp>) --
using push_atom = caf::atom_constant<caf::atom("sp_push")>;  ///< a worker's gradient to the PS
using pull_atom = caf::atom_constant<caf::atom("sp_pull")>;  ///< a worker asks the PS for the model
using pushed_atom = caf::atom_constant<caf::atom("sp_pushed")>;  ///< the PS tells the coordinator a push was accepted
using commit_atom = caf::atom_constant<caf::atom("sp_commit")>;  ///< the PS applies its buffered pushes
using mode_atom = caf::atom_constant<caf::atom("sp_mode")>;  ///< the PS's mode (ps_mode)
using weights_atom = caf::atom_constant<caf::atom("sp_weights")>;  ///< new weights for the PS (a batch change)
using snapshot_atom = caf::atom_constant<caf::atom("sp_snap")>;  ///< the PS sends a copy of the model to the evaluator
using attach_atom = caf::atom_constant<caf::atom("sp_attach")>;  ///< the coordinator attaches to the PS
using start_atom = caf::atom_constant<caf::atom("sp_start")>;  ///< the start of a run (to the coordinator)
using computed_atom = caf::atom_constant<caf::atom("sp_comp")>;  ///< a worker's charged compute time is over
using eval_atom = caf::atom_constant<caf::atom("sp_eval")>;  ///< an evaluation (evaluator -> coordinator -> driver)
using trace_atom = caf::atom_constant<caf::atom("sp_trace")>;  ///< a trace event to the tracer
using collect_atom = caf::atom_constant<caf::atom("sp_collect")>;  ///< the tracer's events, asked for at the end
using timeout_atom = caf::atom_constant<caf::atom("sp_timeout")>;  ///< a timer is due
using done_atom = caf::atom_constant<caf::atom("sp_done")>;  ///< the run is over (its outcome, to the driver)
using flush_atom = caf::atom_constant<caf::atom("sp_flush")>;  ///< the PS applies what it buffered before the end
using stop_atom = caf::atom_constant<caf::atom("sp_stop")>;  ///< end the run early (with a reason), or stop the PS's pulls
using link_atom = caf::atom_constant<caf::atom("sp_link")>;  ///< a transfer crossed the PS's link (link model)
using publish_atom = caf::atom_constant<caf::atom("sp_publish")>;  ///< gated mode: pulls see the current weights
using final_atom = caf::atom_constant<caf::atom("sp_final")>;  ///< the PS's model at the end
using progress_atom = caf::atom_constant<caf::atom("sp_progr")>;  ///< a progress report
using momentum_atom = caf::atom_constant<caf::atom("sp_moment")>;  ///< the PS's momentum changes
using join_atom = caf::atom_constant<caf::atom("sp_join")>;  ///< a worker joins a running (elastic) job
using bulk_atom = caf::atom_constant<caf::atom("sp_bulk")>;  ///< a push or pull that came on the bulk channel
using sync_atom = caf::atom_constant<caf::atom("sp_sync")>;  ///< answered after what the asker sent before
using sequence_atom = caf::atom_constant<caf::atom("sp_seq")>;  ///< the coordinator's ops to every shard, in one order
using save_atom = caf::atom_constant<caf::atom("sp_save")>;  ///< a checkpoint asks for an actor's state
using resume_atom = caf::atom_constant<caf::atom("sp_resume")>;  ///< a resumed worker asks again for what it waited for
using checkpoint_atom = caf::atom_constant<caf::atom("sp_ckpt")>;  ///< time for a checkpoint (real clock)
using mark_atom = caf::atom_constant<caf::atom("sp_mark")>;  ///< a "mark" event for the trace (a submitter's, through the head)
using phase_atom = caf::atom_constant<caf::atom("sp_phase")>;  ///< the protocol changed phase (to the driver)
using counts_atom = caf::atom_constant<caf::atom("sp_counts")>;  ///< asks the coordinator for its job_counts, a PS shard for its version
using replica_atom = caf::atom_constant<caf::atom("sp_replica")>;  ///< a shard's replica: its report, its promotion, the new primaries
using copy_atom = caf::atom_constant<caf::atom("sp_copy")>;  ///< a new copy of a shard in a lost one's place (--ps-rereplicate)
using tables_atom = caf::atom_constant<caf::atom("sp_tables")>;  ///< asks a PS shard for its sparse tables' figures

/// One sparse table's figures on one PS shard (the dashboard's and /metrics').
struct table_counts {
  std::string name;
  uint64_t rows = 0;       ///< rows it holds now
  uint64_t bytes = 0;      ///< ... their values and optimizer state
  uint64_t evictions = 0;  ///< rows dropped by its capacity (lru, lfu, ttl) so far
  uint64_t hits = 0;       ///< keys pulled that had a row
  uint64_t misses = 0;     ///< ... that had none (made, or not admitted yet)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, table_counts& x) {
  return f(caf::meta::type_name("table_counts"), x.name, x.rows, x.bytes, x.evictions, x.hits, x.misses);
}

/// Coordinator -> driver at the end of a run.
struct run_outcome {
  std::vector<trace_event> trace;  ///< every event, in order
  std::vector<worker_loss> losses;  ///< the workers lost before the end
  weights final_model;  ///< the PS's model at the end
  // Its cost per push (`syncpoint simulate`): busy time (pushes, timers, losses, joins) over pushes.
  double coordinator_busy_s = 0;  ///< wall seconds the coordinator spent deciding
  uint64_t coordinator_pushes = 0;  ///< pushes it handled
  /// Why it ended, as observers hear it in run_ended: "budget", "time", "target",
  /// a stop's reason, or "end" when every worker was lost.
  std::string end_reason;
  /// Samples of each worker's accepted pushes (job_counts::worker_samples at the end).
  std::vector<uint64_t> worker_samples;
};


template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, run_outcome& x) {
  return f(caf::meta::type_name("run_outcome"), x.trace, x.losses, x.final_model,
           exact(x.coordinator_busy_s), x.coordinator_pushes, x.end_reason, x.worker_samples);
}


/// Worker -> PS: one gradient computed on `base_version` of the model.
struct gradient_push {
  worker_id worker = 0;
  uint64_t iter = 0;          // the worker's clock after this push (1-based)
  uint64_t base_version = 0;  // version of the weights the gradient was computed on
  uint32_t samples = 0;       // batch size
  float_slice grad;           // as the PS applies it (a compressed gradient, decompressed)
  uint64_t wire_bytes = 0;    // the bytes its encoding takes (--compress, a fragment; 0: its floats, 4 each)
  // A fragment's push (<syncpoint/local_work.hpp>): the ranges of `grad` it
  // carries, as [begin, end) pairs ascending (empty: all of it). The PS steps
  // these values only; the others and their optimizer state stay as they are.
  std::vector<uint64_t> ranges;
  // A sparse model's row gradients (<syncpoint/table.hpp>): per table, the
  // batch's distinct keys this shard keeps (row_shard) and their gradients.
  // They are taken in with `grad`, all or nothing, by the same rule.
  std::vector<row_block> rows;
};

/// PS -> coordinator: a push (a shard's slice of it) was accepted, or refused.
struct push_info {
  worker_id worker = 0;
  uint64_t iter = 0;
  uint32_t samples = 0;
  uint64_t version = 0;   // PS version after accepting this push (a shard of several: before applying it)
  nanos accepted = 0;     // when the PS accepted it
  std::string refused;    // not empty: the PS refused it, and why (NaN, a wrong length, ...)
};

/// Coordinator -> worker: what to do next (the reply to a push, or the start).
struct proceed {
  bool stop = false;
  bool pull = true;          // pull before computing the next gradient
  uint64_t min_version = 0;  // the pull is answered once the PS has this version
  uint32_t batch = 0;        // 0: keep the worker's batch size
  nanos accepted = 0;        // when the PS accepted the push this answers
  local_work work;           // what the worker does until its next push (<syncpoint/local_work.hpp>)
  double lr = 0;             // the PS's scheduled rate now, for an inner rate of 0 (0: the worker's own --lr)
  std::string refused;       // not empty: the push was refused, and why; the worker drops it and pulls
  uint64_t samples = 0;      // the run's samples at the release, and its live workers: where an
  int32_t live = 0;          // inner schedule stands (the worker adds its own samples times live)
};

/// Coordinator -> every shard of a sharded PS, in one order: what becomes of
/// the slices they hold, and which version a released worker pulls. Every
/// shard takes the same ops in the same order, so every shard applies the
/// same pushes in the same order and serves one version to a pull.
struct shard_op {
  enum kind_t : uint8_t {
    apply,  // every shard holds its slice of (worker, n = iter): apply it
    drop,   // a shard refused its slice of (worker, n = iter), or the worker is gone: forget it
            //   (n = all: every slice of the worker, and the version it was to pull)
    serve,  // the worker was released to pull version n: hold it until its pull comes
  };
  static constexpr uint64_t all = UINT64_MAX;
  uint8_t kind = apply;
  worker_id worker = 0;
  uint64_t n = 0;
};

/// PS -> evaluator: a copy of the model taken at `taken`.
struct snapshot {
  uint64_t version = 0;
  nanos taken = 0;
  uint64_t samples = 0;  // samples applied when it was taken
  bool final = false;
  shared_floats values;
  // A sharded PS sends one snapshot per shard: values [offset, offset + size)
  // of a model of model_size values (0: the whole model), part `part` of `parts`.
  uint64_t offset = 0;
  uint64_t model_size = 0;
  uint32_t part = 0;
  uint32_t parts = 1;
  uint64_t id = 0;  // the coordinator's request: a replica asked again answers one its lost primary may have answered
  std::vector<row_block> rows;  // a sparse model's rows of the evaluator's keys this shard keeps (ps_config::eval_keys)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, gradient_push& x) {
  if (x.grad.is_view()) {  // written out (a view is never read into): its range as a block
    std::vector<float> values(x.grad.data(), x.grad.data() + x.grad.size());
    return f(caf::meta::type_name("gradient_push"), x.worker, x.iter, x.base_version, x.samples,
             float_block{values}, x.wire_bytes, x.ranges, x.rows);
  }
  return f(caf::meta::type_name("gradient_push"), x.worker, x.iter, x.base_version,
           x.samples, float_block{x.grad.own()}, x.wire_bytes, x.ranges, x.rows);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, push_info& x) {
  return f(caf::meta::type_name("push_info"), x.worker, x.iter, x.samples, x.version,
           x.accepted, x.refused);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, proceed& x) {
  return f(caf::meta::type_name("proceed"), x.stop, x.pull, x.min_version, x.batch,
           x.accepted, x.work, exact(x.lr), x.refused, x.samples, x.live);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shard_op& x) {
  return f(caf::meta::type_name("shard_op"), x.kind, x.worker, x.n);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, snapshot& x) {
  return f(caf::meta::type_name("snapshot"), x.version, x.taken, x.samples, x.final,
           x.values, x.offset, x.model_size, x.part, x.parts, x.id, x.rows);
}

// -- errors ---------------------------------------------------------------------

/// Errors that actors send back as error replies (category "syncpoint").
enum class sp_error : uint8_t {
  wrong_size = 1,  // a push whose gradient length differs from the model's
  non_finite,      // a push containing NaN or Inf
  unknown_worker,  // a push from an id outside 0..n-1
  not_a_member,    // a request from an actor that is not part of the job
  bad_input,       // a request naming something that does not exist or cannot be
  unauthorized,    // a cluster request without the cluster's token
  not_now,         // a request the actor cannot serve at this point (a checkpoint while the run ends)
  lost_shard,      // a shard of the parameter server is gone: the run cannot go on
  user_actor_failed,  // an actor of the program's own that follows the job (an observer) failed
  user_loop_failed,   // a worker loop of the program's own, or its evaluation, failed: the run ends
  protocol_failed,    // the protocol threw from one of its callbacks (a Python protocol raised): the run ends
};
caf::error make_error(sp_error code, std::string what);
std::string to_string(sp_error code);

/// Whether an actor's exit reason is a failure (not a normal or shutdown exit).
bool is_failure(const caf::error& reason);

/// user_actor_failed for observer `which` (its place in the job's list) that
/// ended with `reason`, in words.
caf::error observer_failed(caf::actor_system& sys, size_t which, const caf::error& reason);

/// Registers every type above and those of <syncpoint/messages.hpp> (and the
/// containers that travel) with `cfg`,
/// the actor handles of core/interfaces.hpp, and the renderer of the
/// "syncpoint" error category.
void register_messages(caf::actor_system_config& cfg);

}  // namespace syncpoint
