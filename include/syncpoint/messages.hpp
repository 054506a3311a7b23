// The messages a program sees: the atoms of every interface, the model's
// weights, trace events, evaluations, progress reports and a run's outcome.
// Each type has an `inspect` overload and is registered with CAF by the
// library, so any of them may cross nodes. (The messages only the job's own
// actors exchange, such as a worker's gradient push, are the library's.)
//
//   caf::behavior watcher() {
//     return {[](syncpoint::eval_atom, const syncpoint::eval_result& e) {
//       std::cout << e.samples << " samples: accuracy " << e.accuracy << "\n";
//     }};
//   }
#pragma once

#include <caf/all.hpp>

#include <syncpoint/shared_floats.hpp>

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
using save_atom = caf::atom_constant<caf::atom("sp_save")>;
using resume_atom = caf::atom_constant<caf::atom("sp_resume")>;
using checkpoint_atom = caf::atom_constant<caf::atom("sp_ckpt")>;
using mark_atom = caf::atom_constant<caf::atom("sp_mark")>;
using phase_atom = caf::atom_constant<caf::atom("sp_phase")>;

/// How the PS treats pushes: apply each on arrival, or buffer until `commit`;
/// `gated` applies on arrival but pulls only see the weights of the last
/// `publish`. Sent as `(mode_atom, uint8_t mode)`.
enum class ps_mode : uint8_t { immediate, buffered, gated };

/// PS -> worker: the model at `version`.
struct weights {
  uint64_t version = 0;
  shared_floats values;
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

/// Coordinator -> observers: the protocol changed its phase (Sync-Switch: from
/// one protocol to another), as the trace's "phase" event says it.
struct phase_change {
  std::string from;      // "bsp"
  std::string to;        // "asp"
  std::string reason;    // what made it switch ("share", "policy", ...)
  nanos t = 0;           // when, on the run clock
  uint64_t samples = 0;  // samples taken in by then
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
           exact(x.coordinator_busy_s), x.coordinator_pushes);
}

}  // namespace syncpoint
