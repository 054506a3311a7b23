/// \file
/// The messages a program sees: the model's weights, trace events,
/// evaluations, progress reports, phase changes, a run's counts, and what a
/// program's own actors send a job (stop, evaluate, mark, read its counts)
/// and hear from it. Each type has an `inspect` overload and is registered
/// with CAF by the library, so any of them may cross nodes. (The messages only
/// the job's own actors exchange, such as a worker's gradient push, and their
/// atoms are the library's.)
///
/// ```cpp
/// caf::behavior watcher() {
///   return {[](const syncpoint::eval_result& e) {
///     std::cout << e.samples << " samples: accuracy " << e.accuracy << "\n";
///   }};
/// }
/// ```
#pragma once

#include <caf/meta/type_name.hpp>

#include <syncpoint/float_block.hpp>
#include <syncpoint/shared_floats.hpp>
#include <syncpoint/table.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace syncpoint {

/// A worker's id in its job: 0 .. workers - 1.
using worker_id = int32_t;

/// Times in messages: nanoseconds since the run's origin, on the run clock.
using nanos = int64_t;

/// How the PS treats pushes: apply each on arrival, or buffer until `commit`;
/// `gated` applies on arrival but pulls only see the weights of the last
/// `publish` (protocol_context::set_mode); `delayed` applies each push on
/// arrival without momentum, and each `commit` adds the momentum step of the
/// pushes since the last (Delayed Nesterov, Liu et al. 2024); pulls see every push.
enum class ps_mode : uint8_t { immediate, buffered, gated, delayed };

/// PS -> worker: the model at `version`.
struct weights {
  uint64_t version = 0;  ///< PS updates applied to it
  shared_floats values;  ///< the model's flat vector
  std::vector<row_block> rows;  ///< a sparse model's rows the pull asked for, of the same version
};

/// One line of trace.jsonl: a span (t0..t1) or an instant (t0 == t1).
/// Kinds: compute, push, pull, wait (worker spans); apply (value = staleness);
/// barrier; eval (value = accuracy); rejected; lost; copy_lost (a replicated
/// shard's copy: iter = the shard, value = the copy, note = why); copy_added
/// (one made in a lost copy's place: iter = the shard, value = the copy, note = where); metric (a loop's or an
/// evaluation's number, its name in `note`).
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

/// A named number: a part of a loop's loss, an episode's return, a held-out error.
struct metric {
  std::string name;  ///< e.g. "mse"
  double value = 0;  ///< its value
};

/// Evaluator -> coordinator: accuracy of one snapshot.
struct eval_result {
  uint64_t version = 0;  ///< the evaluated model's version
  nanos taken = 0;  ///< when the model was taken, on the run clock
  uint64_t samples = 0;  ///< samples applied by then
  bool final = false;  ///< the run's last evaluation
  double accuracy = 0;  ///< test accuracy, 0..1 (-1 for a loop whose evaluation measures no accuracy)
  std::vector<metric> metrics;  ///< everything the job's loop measured (the classifier's: its accuracy)
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

/// A job -> whoever asks (counts_request): the run's counts so far (a live
/// dashboard's figures; reading them changes nothing).
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

// -- what a program's own actors send a job (job_control_actor), and hear last --

/// End the run early, as a limit would: the workers stop, the final
/// evaluation follows, and observers hear `why` as the reason it ended.
struct stop_request {
  std::string why;  ///< the reason (the observers' run_ended, the result's end_reason)
};

/// Evaluate the model as it is now: an "eval" event and an evaluation to
/// every observer follow (at most one per sample count).
struct eval_request {};

/// Write a "mark" event into the trace (kind "mark", this note and value).
struct mark_request {
  std::string note;  ///< the event's note
  double value = 0;  ///< the event's value
};

/// Take a checkpoint now, as the periodic one would, into the job's
/// checkpoint folder (real clock, with `checkpoint_dir`; `checkpoint_every_s`
/// may be 0). A job without one, on the virtual clock, or between a stop and
/// its end says so on its progress line and takes none.
struct checkpoint_request {
  std::string why;  ///< the progress line's reason ("SIGUSR1", "before the time limit")
};

/// Asks a job for its counts so far: answered with job_counts.
struct counts_request {};

/// A job -> each observer, last: why the run ended ("budget", "time",
/// "target", a stop's reason, "end" when every worker was lost, or "failed: "
/// and the error).
struct run_ended {
  std::string why;  ///< the reason
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
typename Inspector::result_type inspect(Inspector& f, table_spec& x) {
  return f(caf::meta::type_name("table_spec"), x.name, x.width, x.init, x.init_scale, x.optimizer, x.beta1, x.beta2,
           x.eps, x.capacity, x.max_rows, x.ttl_steps, x.admit_after, x.expected_keys);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, row_block& x) {
  return f(caf::meta::type_name("row_block"), x.table, x.keys, float_block{x.values});  // (not CAF's own float packing: it hangs on an infinity)
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, weights& x) {
  return f(caf::meta::type_name("weights"), x.version, x.values, x.rows);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, phase_change& x) {
  return f(caf::meta::type_name("phase_change"), x.from, x.to, x.reason, x.t, x.samples);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, metric& x) {
  return f(caf::meta::type_name("metric"), x.name, exact(x.value));
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, trace_event& x) {
  return f(caf::meta::type_name("trace_event"), x.kind, x.worker, x.t0, x.t1, x.iter,
           x.version, exact(x.value), x.note);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, eval_result& x) {
  return f(caf::meta::type_name("eval_result"), x.version, x.taken, x.samples, x.final,
           exact(x.accuracy), x.metrics);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_counts& x) {
  return f(caf::meta::type_name("job_counts"), x.samples, x.version, x.worker_samples, x.live, x.at,
           x.rejected);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stop_request& x) {
  return f(caf::meta::type_name("stop_request"), x.why);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, eval_request&) {
  return f(caf::meta::type_name("eval_request"));
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, mark_request& x) {
  return f(caf::meta::type_name("mark_request"), x.note, exact(x.value));
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, checkpoint_request& x) {
  return f(caf::meta::type_name("checkpoint_request"), x.why);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, counts_request&) {
  return f(caf::meta::type_name("counts_request"));
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, run_ended& x) {
  return f(caf::meta::type_name("run_ended"), x.why);
}

}  // namespace syncpoint
