// Every message that actors exchange. Each type has an `inspect` overload and
// is registered by `register_messages`, so any of them may cross nodes.
//
// Data plane:    worker -> PS   push(gradient_push)      replied with `proceed`
//                worker -> PS   pull(min_version)        replied with `weights`
// Control plane: PS -> coordinator  pushed(push_info)   (the PS delegates the
//                push's reply, so the coordinator's `proceed` goes straight
//                to the worker)
//                coordinator -> PS  commit / set_mode / set_weights / snapshot
#pragma once

#include <caf/all.hpp>

#include "core/shared_floats.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace syncpoint {

using worker_id = int32_t;

// Times in messages are nanoseconds since the run's origin on the run clock.
using nanos = int64_t;

// -- atoms --------------------------------------------------------------------
using push_atom = caf::atom_constant<caf::atom("sp_push")>;
using pull_atom = caf::atom_constant<caf::atom("sp_pull")>;
using pushed_atom = caf::atom_constant<caf::atom("sp_pushed")>;
using commit_atom = caf::atom_constant<caf::atom("sp_commit")>;
using mode_atom = caf::atom_constant<caf::atom("sp_mode")>;
using weights_atom = caf::atom_constant<caf::atom("sp_weights")>;
using snapshot_atom = caf::atom_constant<caf::atom("sp_snap")>;
using attach_atom = caf::atom_constant<caf::atom("sp_attach")>;
using start_atom = caf::atom_constant<caf::atom("sp_start")>;
using computed_atom = caf::atom_constant<caf::atom("sp_comp")>;
using eval_atom = caf::atom_constant<caf::atom("sp_eval")>;
using trace_atom = caf::atom_constant<caf::atom("sp_trace")>;
using collect_atom = caf::atom_constant<caf::atom("sp_collect")>;
using timeout_atom = caf::atom_constant<caf::atom("sp_timeout")>;
using done_atom = caf::atom_constant<caf::atom("sp_done")>;
using flush_atom = caf::atom_constant<caf::atom("sp_flush")>;
using stop_atom = caf::atom_constant<caf::atom("sp_stop")>;
using link_atom = caf::atom_constant<caf::atom("sp_link")>;
using publish_atom = caf::atom_constant<caf::atom("sp_publish")>;
using final_atom = caf::atom_constant<caf::atom("sp_final")>;
using progress_atom = caf::atom_constant<caf::atom("sp_progr")>;
using momentum_atom = caf::atom_constant<caf::atom("sp_moment")>;
using join_atom = caf::atom_constant<caf::atom("sp_join")>;
using bulk_atom = caf::atom_constant<caf::atom("sp_bulk")>;
using sync_atom = caf::atom_constant<caf::atom("sp_sync")>;

/// How the PS treats pushes: apply each on arrival, or buffer until `commit`;
/// `gated` applies on arrival but pulls only see the weights of the last
/// `publish`. Sent as `(mode_atom, uint8_t mode)`.
enum class ps_mode : uint8_t { immediate, buffered, gated };

/// Worker -> PS: one gradient computed on `base_version` of the model.
struct gradient_push {
  worker_id worker = 0;
  uint64_t iter = 0;          // the worker's clock after this push (1-based)
  uint64_t base_version = 0;  // version of the weights the gradient was computed on
  uint32_t samples = 0;       // batch size
  std::vector<float> grad;
};

/// PS -> coordinator: a push was accepted (applied or buffered).
struct push_info {
  worker_id worker = 0;
  uint64_t iter = 0;
  uint32_t samples = 0;
  uint64_t version = 0;   // PS version after accepting this push
  nanos accepted = 0;     // when the PS accepted it
};

/// Coordinator -> worker: what to do next (the reply to a push, or the start).
struct proceed {
  bool stop = false;
  bool pull = true;          // pull before computing the next gradient
  uint64_t min_version = 0;  // the pull is answered once the PS has this version
  uint32_t batch = 0;        // 0: keep the worker's batch size
  nanos accepted = 0;        // when the PS accepted the push this answers
  bool local_step = false;   // update the worker's own copy with its gradient (WBSP)
  bool overlap = false;      // compute the next gradient while this push is in flight
  double lr = 0;             // the schedule's rate now, for a local step (0: the worker's own --lr)
};

/// PS -> worker: the model at `version`.
struct weights {
  uint64_t version = 0;
  shared_floats values;
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
};

/// One line of trace.jsonl: a span (t0..t1) or an instant (t0 == t1).
/// Kinds: compute, push, pull, wait (worker spans); apply (value = staleness);
/// barrier; eval (value = accuracy); rejected; lost.
struct trace_event {
  std::string kind;
  worker_id worker = -1;
  nanos t0 = 0;
  nanos t1 = 0;
  uint64_t iter = 0;
  uint64_t version = 0;
  double value = 0;
  std::string note;  // words for events that need them (a protocol switch: "bsp>asp share")
};

/// Evaluator -> coordinator: accuracy of one snapshot.
struct eval_result {
  uint64_t version = 0;
  nanos taken = 0;
  uint64_t samples = 0;
  bool final = false;
  double accuracy = 0;
};

/// A worker that left the run before its end, and why.
struct worker_loss {
  worker_id worker = 0;
  nanos t = 0;
  std::string reason;
};

/// Coordinator -> whoever follows the run: one progress line (as printed on
/// a terminal) with the figures behind it.
struct progress_report {
  std::string line;        // empty for a tick that moves a bar but prints nothing
  uint64_t samples = 0;
  double fraction = 0;    // of the run: its sample budget, else its time cap
  double accuracy = -1;   // last evaluation (< 0: none yet)
  bool event = false;     // something happened (a worker lost): shown even under a progress bar
};

/// Receives a run's progress reports (the `line` is what would be printed).
using progress_fn = std::function<void(const progress_report&)>;

/// Coordinator -> driver at the end of a run.
struct run_outcome {
  std::vector<trace_event> trace;
  std::vector<worker_loss> losses;
  weights final_model;
  // Wall time the coordinator spent deciding (pushes, timers, losses, joins),
  // and how many pushes it took: its cost per push (`syncpoint simulate`).
  double coordinator_busy_s = 0;
  uint64_t coordinator_pushes = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_loss& x) {
  return f(caf::meta::type_name("worker_loss"), x.worker, x.t, x.reason);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, progress_report& x) {
  return f(caf::meta::type_name("progress_report"), x.line, x.samples, exact(x.fraction),
           exact(x.accuracy), x.event);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, gradient_push& x) {
  return f(caf::meta::type_name("gradient_push"), x.worker, x.iter, x.base_version,
           x.samples, float_block{x.grad});
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, push_info& x) {
  return f(caf::meta::type_name("push_info"), x.worker, x.iter, x.samples, x.version,
           x.accepted);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, proceed& x) {
  return f(caf::meta::type_name("proceed"), x.stop, x.pull, x.min_version, x.batch,
           x.accepted, x.local_step, x.overlap, exact(x.lr));
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, weights& x) {
  return f(caf::meta::type_name("weights"), x.version, x.values);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, snapshot& x) {
  return f(caf::meta::type_name("snapshot"), x.version, x.taken, x.samples, x.final,
           x.values, x.offset, x.model_size, x.part, x.parts);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, trace_event& x) {
  return f(caf::meta::type_name("trace_event"), x.kind, x.worker, x.t0, x.t1, x.iter,
           x.version, exact(x.value), x.note);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, eval_result& x) {
  return f(caf::meta::type_name("eval_result"), x.version, x.taken, x.samples, x.final,
           exact(x.accuracy));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, run_outcome& x) {
  return f(caf::meta::type_name("run_outcome"), x.trace, x.losses, x.final_model,
           exact(x.coordinator_busy_s), x.coordinator_pushes);
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
};
caf::error make_error(sp_error code, std::string what);
std::string to_string(sp_error code);

/// Registers every type above (and the containers that travel) with `cfg`,
/// the actor handles of core/interfaces.hpp, and the renderer of the
/// "syncpoint" error category.
void register_messages(caf::actor_system_config& cfg);

}  // namespace syncpoint
