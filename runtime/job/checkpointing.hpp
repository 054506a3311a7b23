// Checkpoints of a running job, and resuming from one: the runners' part
// (the file is runtime/records/checkpoint_file, each actor's state core/saved_state).
//
// On the virtual clock a checkpoint is taken where the test scheduler is
// quiescent: no message in any mailbox, so the actors' states and the timers
// pending are the whole run. Taking it reads only; the run goes on exactly
// as without it, and a run resumed from it continues bit for bit.
//
//   auto state = gather_checkpoint(sys, driver, job, origin);   // between run() and trigger_timeout()
//   ...
//   auto point = load_resume_point(plan);
#pragma once

#include "runtime/records/checkpoint_file.hpp"
#include "runtime/job/job_parts.hpp"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace syncpoint {

/// The options of `plan` that fix a run's course, as (flag, value), with the
/// iteration cost in use and the plan's learning-rate schedule: what a resumed
/// run must agree with.
std::vector<std::pair<std::string, std::string>> run_settings(const job_plan& plan, double iter_cost_ms);

/// A checkpoint to resume from, and where it came from.
struct resume_point {
  std::string file;
  checkpoint point;
  double iter_cost_ms = 0;  // the checkpointed run's
};

/// The newest checkpoint in plan.cfg.resume_dir (or that file, if it names
/// one), checked against `plan`. Throws
/// config_error naming the directory or file and what is wrong: none there,
/// unreadable, another model or protocol, an option that disagrees (only
/// --epochs, --max-time and --target-accuracy may change, and not to a limit
/// the checkpoint has already passed).
resume_point load_resume_point(const job_plan& plan);

/// Where a run's checkpoints go (the real clock's coordinator, the virtual
/// clock's runner): each opens a checkpoint_stream into --checkpoint-dir
/// with `settings`, whose commit keeps the newest --checkpoint-keep there
/// and returns the progress line naming the file. Throws config_error.
checkpoint_opener checkpoint_writer(const job_plan& plan, std::vector<std::pair<std::string, std::string>> settings);

/// Whether a run of `cfg` takes checkpoints: periodic ones, or, on the real
/// clock, a folder for those asked for (checkpoint_request, SIGUSR1).
inline bool takes_checkpoints(const job_config& cfg) {
  return cfg.checkpoint_every_s > 0 || (!cfg.checkpoint_dir.empty() && cfg.clock == clock_kind::real);
}

/// Throws config_error if --checkpoint-dir cannot take files, or runs of the
/// plan's protocol or model cannot be checkpointed (before a run that would
/// fail at its first checkpoint).
void check_checkpointable(const job_plan& plan);

/// The actors of one job.
struct job_actors {
  job_core core;
  std::vector<worker_actor> workers;
};

/// Virtual clock, quiescent: every actor's state and the pending timers.
/// Nothing when the coordinator declines (the run is starting or ending).
/// Throws config_error when a piece cannot be saved (a protocol or model
/// without checkpoint support, a timer of an unknown kind).
std::optional<checkpoint_state> gather_checkpoint(caf::actor_system& sys, caf::scoped_actor& driver,
                                                  const job_actors& job, time_point origin);

/// Virtual clock, quiescent, after gather_checkpoint: each shard's tables,
/// chunk by chunk, into `out` (nothing for a dense model).
/// (Each shard's serving copy, as `saved` says, with replicated shards.)
void gather_rows(caf::actor_system& sys, caf::scoped_actor& driver, const job_actors& job,
                 const saved_coordinator& saved, checkpoint_sink& out);

/// Puts the checkpoint's timers back on the virtual clock, addressed to the
/// resumed actors, in the order they were due (a replicated shard's: to each
/// copy restored from the copy a timer was for, as `saved` says).
void restore_timers(caf::actor_system& sys, const job_actors& job, time_point origin,
                    const std::vector<saved_timer>& timers, const saved_coordinator& saved);

/// Moves the virtual clock to `time_ns` after `origin`.
void set_virtual_time(caf::actor_system& sys, time_point origin, int64_t time_ns);

}  // namespace syncpoint
