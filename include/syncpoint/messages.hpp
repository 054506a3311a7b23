/// \file
/// The messages a program sees: the atoms of every interface, the model's
/// weights, trace events, evaluations, progress reports and a run's outcome.
/// Each type has an `inspect` overload and is registered with CAF by the
/// library, so any of them may cross nodes. (The messages only the job's own
/// actors exchange, such as a worker's gradient push, are the library's.)
///
/// ```cpp
/// caf::behavior watcher() {
///   return {[](syncpoint::eval_atom, const syncpoint::eval_result& e) {
///     std::cout << e.samples << " samples: accuracy " << e.accuracy << "\n";
///   }};
/// }
/// ```
#pragma once

#include <caf/all.hpp>

#include <syncpoint/shared_floats.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace syncpoint {

/// A worker's id in its job: 0 .. workers - 1.
using worker_id = int32_t;

/// Times in messages: nanoseconds since the run's origin, on the run clock.
using nanos = int64_t;

// -- atoms --------------------------------------------------------------------
using push_atom = caf::atom_constant<caf::atom("sp_push")>;  ///< a worker's gradient to the PS
using pull_atom = caf::atom_constant<caf::atom("sp_pull")>;  ///< a worker asks the PS for the model
using pushed_atom = caf::atom_constant<caf::atom("sp_pushed")>;  ///< the PS tells the coordinator a push was accepted
using commit_atom = caf::atom_constant<caf::atom("sp_commit")>;  ///< the PS applies its buffered pushes
using mode_atom = caf::atom_constant<caf::atom("sp_mode")>;  ///< the PS's mode (ps_mode)
using weights_atom = caf::atom_constant<caf::atom("sp_weights")>;  ///< new weights for the PS (a batch change)
using snapshot_atom = caf::atom_constant<caf::atom("sp_snap")>;  ///< the PS sends a copy of the model to the evaluator
using attach_atom = caf::atom_constant<caf::atom("sp_attach")>;  ///< the coordinator attaches to the PS
using start_atom = caf::atom_constant<caf::atom("sp_start")>;  ///< the start of a run (to the coordinator; to an observer, with its control handle)
using computed_atom = caf::atom_constant<caf::atom("sp_comp")>;  ///< a worker's charged compute time is over
using eval_atom = caf::atom_constant<caf::atom("sp_eval")>;  ///< an evaluation (evaluator -> coordinator -> observers), or a request for one
using trace_atom = caf::atom_constant<caf::atom("sp_trace")>;  ///< a trace event to the tracer
using collect_atom = caf::atom_constant<caf::atom("sp_collect")>;  ///< the tracer's events, asked for at the end
using timeout_atom = caf::atom_constant<caf::atom("sp_timeout")>;  ///< a timer is due
using done_atom = caf::atom_constant<caf::atom("sp_done")>;  ///< the run is over (its outcome; to observers, why)
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
using mark_atom = caf::atom_constant<caf::atom("sp_mark")>;  ///< a "mark" event for the trace, from an observer
using phase_atom = caf::atom_constant<caf::atom("sp_phase")>;  ///< the protocol changed phase (to observers)
using counts_atom = caf::atom_constant<caf::atom("sp_counts")>;  ///< asks the coordinator for its job_counts, a PS shard for its version

/// How the PS treats pushes: apply each on arrival, or buffer until `commit`;
/// `gated` applies on arrival but pulls only see the weights of the last
/// `publish`. Sent as `(mode_atom, uint8_t mode)`.
enum class ps_mode : uint8_t { immediate, buffered, gated };

/// PS -> worker: the model at `version`.
struct weights {
  uint64_t version = 0;  ///< PS updates applied to it
  shared_floats values;  ///< the model's flat vector
};

/// One line of trace.jsonl: a span (t0..t1) or an instant (t0 == t1).
/// Kinds: compute, push, pull, wait (worker spans); apply (value = staleness);
/// barrier; eval (value = accuracy); rejected; lost.
struct trace_event {
  std::string kind;  ///< what happened (above)
  worker_id worker = -1;  ///< whose event (-1: no worker's)
  nanos t0 = 0;  ///< start, on the run clock
  nanos t1 = 0;  ///< end (t0 for an instant)
  uint64_t iter = 0;  ///< the worker's iteration, or samples for run events (eval, end)
  uint64_t version = 0;  ///< the model's version then
  double value = 0;  ///< the kind's number (staleness, accuracy, ...)
  std::string note;  ///< words for events that need them (a protocol switch: "bsp>asp share")
};

/// Evaluator -> coordinator: accuracy of one snapshot.
struct eval_result {
  uint64_t version = 0;  ///< the evaluated model's version
  nanos taken = 0;  ///< when the model was taken, on the run clock
  uint64_t samples = 0;  ///< samples applied by then
  bool final = false;  ///< the run's last evaluation
  double accuracy = 0;  ///< test accuracy, 0..1
};

/// A worker that left the run before its end, and why.
struct worker_loss {
  worker_id worker = 0;  ///< the worker's id
  nanos t = 0;  ///< when, on the run clock
  std::string reason;  ///< why
};

/// Coordinator -> whoever follows the run: one progress line (as printed on
/// a terminal) with the figures behind it.
struct progress_report {
  std::string line;        ///< empty for a tick that moves a bar but prints nothing
  uint64_t samples = 0;  ///< samples applied so far
  double fraction = 0;    ///< of the run: its sample budget, else its time cap
  double accuracy = -1;   ///< last evaluation (< 0: none yet)
  bool event = false;     ///< something happened (a worker lost): shown even under a progress bar
};

/// Coordinator -> observers: the protocol changed its phase (Sync-Switch: from
/// one protocol to another), as the trace's "phase" event says it.
struct phase_change {
  std::string from;      ///< "bsp"
  std::string to;        ///< "asp"
  std::string reason;    ///< what made it switch ("share", "policy", ...)
  nanos t = 0;           ///< when, on the run clock
  uint64_t samples = 0;  ///< samples taken in by then
};

/// The phase change a trace's "phase" event records (its note: "from>to reason").
inline phase_change phase_of(const trace_event& ev) {
  auto gt = ev.note.find('>'), sp = ev.note.rfind(' ');
  if (sp == std::string::npos || sp < gt)
    sp = ev.note.size();
  phase_change p;
  p.from = gt == std::string::npos ? std::string() : ev.note.substr(0, gt);
  p.to = gt == std::string::npos ? ev.note.substr(0, sp) : ev.note.substr(gt + 1, sp - gt - 1);
  p.reason = sp < ev.note.size() ? ev.note.substr(sp + 1) : std::string();
  p.t = ev.t0;
  p.samples = ev.iter;
  return p;
}

/// Receives a run's progress reports (the `line` is what would be printed).
using progress_fn = std::function<void(const progress_report&)>;

/// Coordinator -> whoever asks `(counts_atom)`: the run's counts so far (a
/// live dashboard's figures; reading them changes nothing).
struct job_counts {
  uint64_t samples = 0;  ///< samples of the pushes accepted so far (the run's budget counts these)
  uint64_t version = 0;  ///< the newest model version the coordinator knows of
  /// The same per worker. A resumed run counts from its checkpoint's total,
  /// but each worker's from 0.
  std::vector<uint64_t> worker_samples;
  int32_t live = 0;  ///< workers still in the run
  nanos at = 0;      ///< when, on the run clock
  uint64_t rejected = 0;  ///< pushes refused (by the PS, or by any shard of it: then by all), each counted once
};

/// Coordinator -> driver at the end of a run.
struct run_outcome {
  std::vector<trace_event> trace;  ///< every event, in order
  std::vector<worker_loss> losses;  ///< the workers lost before the end
  weights final_model;  ///< the PS's model at the end
  // Its cost per push (`syncpoint simulate`): busy time (pushes, timers, losses, joins) over pushes.
  double coordinator_busy_s = 0;  ///< wall seconds the coordinator spent deciding
  uint64_t coordinator_pushes = 0;  ///< pushes it handled
  /// Why it ended, as observers hear it in `done`: "budget", "time", "target",
  /// a stop's reason, or "end" when every worker was lost.
  std::string end_reason;
  /// Samples of each worker's accepted pushes (job_counts::worker_samples at the end).
  std::vector<uint64_t> worker_samples;
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
typename Inspector::result_type inspect(Inspector& f, weights& x) {
  return f(caf::meta::type_name("weights"), x.version, x.values);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, phase_change& x) {
  return f(caf::meta::type_name("phase_change"), x.from, x.to, x.reason, x.t, x.samples);
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
           exact(x.coordinator_busy_s), x.coordinator_pushes, x.end_reason, x.worker_samples);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_counts& x) {
  return f(caf::meta::type_name("job_counts"), x.samples, x.version, x.worker_samples, x.live, x.at,
           x.rejected);
}

}  // namespace syncpoint
