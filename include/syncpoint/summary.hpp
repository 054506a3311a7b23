/// \file
/// Turns a run's trace into summary.json (fields listed in PROTOCOLS.md).
/// The trace is the single source of truth: every figure here is derived from it.
#pragma once

#include <syncpoint/messages.hpp>

#include <string>
#include <vector>

namespace syncpoint {

/// One worker's share of a run.
struct worker_summary {
  int id = 0;  ///< the worker's id, 0..workers-1
  uint64_t iterations = 0;  ///< gradients applied by the PS
  double compute_s = 0;  ///< seconds computing gradients
  double comm_s = 0;   ///< push + pull
  double wait_s = 0;  ///< seconds waiting for a release
  double compute_ratio = 0;  ///< compute_s over the run's time
};

/// One periodic evaluation of the model.
struct eval_point {
  double t_s = 0;  ///< when the model was taken, seconds on the run clock
  uint64_t samples = 0;  ///< samples applied by then
  double accuracy = 0;  ///< test accuracy, 0..1
};

/// A worker that left the run (or joined it: `reason` then says where).
struct loss_point {
  int worker = 0;  ///< the worker's id
  double t_s = 0;  ///< when, seconds on the run clock
  std::string reason;  ///< why it left (or, for a join, where it runs)
};

/// A copy of a replicated PS shard lost during the run (--ps-replicas).
struct copy_loss_point {
  uint64_t shard = 0;  ///< the shard
  int copy = 0;        ///< which copy of it (0: its first primary)
  double t_s = 0;      ///< when, seconds on the run clock
  std::string reason;  ///< why it went
};

/// One phase of a run whose protocol changed (Sync-Switch): from the trace's
/// "phase" marks.
struct phase_summary {
  std::string protocol;  ///< the protocol of this phase
  std::string reason;        ///< start, share, straggler, recovered
  double start_s = 0;  ///< when it began, seconds on the run clock
  double time_s = 0;  ///< how long it lasted
  uint64_t samples = 0;  ///< samples applied during it
  double accuracy_at_end = -1;  ///< the evaluation at its switch (the final one for the last)
};

struct run_summary;

/// Test accuracy after `samples`, linearly between the evaluations around it
/// (the periodic ones and the final one; of two at that count, the later; the
/// final one past the run's end); < 0 before the first evaluation.
double accuracy_at_samples(const run_summary& s, uint64_t samples);

/// What a run's summary.json holds: its settings and every figure derived from its trace.
struct run_summary {
  std::string protocol;  ///< the protocol's name
  std::string model;  ///< the model's name
  int workers = 0;  ///< workers configured
  std::string clock;  ///< "real" or "virtual"
  uint64_t seed = 0;  ///< the run's seed
  std::string straggler;  ///< the straggler spec, as given
  double lr = 0;  ///< the learning rate, as given
  double momentum = 0;  ///< the momentum, as given
  std::string momentum_rule;    ///< adjusted or plain (docs/momentum.md)
  double iter_cost_ms = 0;  ///< virtual clock: the cost charged per iteration
  std::string iter_cost_source;  ///< virtual clock: given, model table, parameter formula, measured
  double run_time_s = 0;  ///< seconds on the run clock from start to end
  uint64_t samples = 0;  ///< samples applied by the PS
  double samples_per_s = 0;  ///< samples over run_time_s
  double final_accuracy = 0;  ///< test accuracy of the final model (< 0: the job's loop measures none; null in JSON)
  std::vector<metric> final_metrics;  ///< what else the final evaluation measured, e.g. a held-out "mse" (absent from JSON when none)
  double target_accuracy = 0;    ///< 0: unset
  double time_to_target_s = -1;  ///< < 0: unset or not reached (null in JSON)
  double mean_compute_ratio = 0;  ///< the workers' compute_ratio, averaged
  double staleness_mean = 0;  ///< versions between a gradient's base and the model it was applied to, averaged
  uint64_t staleness_max = 0;  ///< ... and the largest
  uint64_t barriers = 0;  ///< barriers the protocol opened
  uint64_t rejected = 0;  ///< pushes the PS refused (NaN, a wrong length): a refusal by any shard of several counts once
  uint64_t lost = 0;  ///< workers lost before the end
  std::string compress = "none";  ///< how gradients were compressed on their way (--compress)
  uint64_t pushed_bytes = 0;     ///< the bytes of every push the workers sent, as encoded (4 a value uncompressed)
  uint64_t pulled_bytes = 0;     ///< the bytes of every pull the workers made (the model, or the fragment exchanged)
  double link_busy_s = -1;       ///< time the PS links carried data, summed over shards (< 0: no link model)
  double link_utilization = -1;  ///< link_busy_s / run_time_s / the number of links: their mean
  std::vector<worker_summary> per_worker;  ///< one entry per worker
  std::vector<eval_point> evals;  ///< the periodic evaluations of accuracy (the final one is final_accuracy)
  std::vector<loss_point> losses;  ///< each lost worker, when and why
  std::vector<loss_point> joins;   ///< each worker that joined the running job, when and where (reason)
  std::vector<copy_loss_point> copy_losses;  ///< each replicated shard's copy lost (absent from JSON when none)
  /// each copy made again in a lost one's place (--ps-rereplicate; `reason`: where it runs; absent from JSON when none)
  std::vector<copy_loss_point> copies_made;
  std::vector<phase_summary> phases;  ///< empty unless the protocol switched phases
  std::string resumed_from;           ///< the checkpoint file it resumed from (empty: none)
  double resumed_at_s = -1;           ///< ... and that checkpoint's time on the run clock
};

/// Seconds the workers spent waiting, summed over workers.
double total_wait_s(const run_summary& s);
/// Seconds the workers spent communicating (push + pull), summed over workers.
double total_comm_s(const run_summary& s);

/// Whether the run lost every worker (it has no figures worth comparing).
bool failed_run(const run_summary& s);

/// The fewest samples any run that did not fail processed: where runs are
/// compared at equal samples (0 when there is no such run).
uint64_t equal_samples(const std::vector<const run_summary*>& runs);

/// summary.json's text.
std::string to_json(const run_summary& s);
/// One line of trace.jsonl (no newline).
std::string to_json(const trace_event& ev);

}  // namespace syncpoint
