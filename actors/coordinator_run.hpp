// The coordinator's run (actors/coordinator_state.hpp): its phase, with what
// each phase carries, and its figures (samples, evaluations, progress bars).
// Not part of the API.
//
//   run_phase r;
//   r.restored();                    // starting, from a checkpoint
//   auto how = r.start();            // -> running; how.resumed, how.stop
//   r.freeze(checkpoint_cause::asked);  r.collect();  bool tick = r.thaw();
//   r.freeze(checkpoint_cause::replica);  r.replicate();  bool checkpoint = r.replicated();
#pragma once

#include <cstdint>
#include <optional>
#include <deque>
#include <string>

namespace syncpoint {

/// The coordinator's life, one phase at a time (anything else is a bug and stops the run):
///   starting -> running -> stopping -> finishing
///   running -> freezing -> collecting -> running     a real-clock checkpoint
///   running -> freezing -> replicating -> running    a lost shard copy made again (--ps-rereplicate)
///   replicating -> freezing                          ... then a checkpoint asked for meanwhile
///   any phase but finishing -> finishing              every worker is gone
///   freezing, collecting, replicating -> stopping     a stop gives them up
enum class coordinator_phase : uint8_t {
  starting,     // spawned, waiting for its workers (start_atom)
  running,
  freezing,     // a checkpoint or a new copy is due: releases are held until every live worker waits
  collecting,   // everyone is at rest: the actors' states are being gathered
  replicating,  // everyone is at rest: a lost copy is being made again from its shard's serving copy
  stopping,     // a limit, a target or a stop: every worker is told to stop
  finishing,    // every worker is gone: the final snapshot, evaluation and outcome
};

const char* to_string(coordinator_phase p);

/// Why the run holds still: a checkpoint for the period's tick, or for a
/// request (during which the period's tick came too, and is taken by it), or
/// a lost copy to make again (replica; a checkpoint due meanwhile takes the
/// tick's or the request's cause, and follows).
enum class checkpoint_cause : uint8_t { tick, asked, asked_tick_missed, replica };

class run_phase {
 public:
  /// What the starting phase carried into the run.
  struct start_plan {
    bool resumed = false;             // restored from a checkpoint
    std::optional<std::string> stop;  // a stop that came before the workers: the run stops at once
  };

  coordinator_phase now() const { return phase_; }
  bool is(coordinator_phase p) const { return phase_ == p; }
  bool started() const { return phase_ != coordinator_phase::starting; }
  /// A stop was decided, or every worker is gone: no new work, no checkpoint.
  bool ending() const { return phase_ == coordinator_phase::stopping || phase_ == coordinator_phase::finishing; }
  /// A checkpoint or a new copy holds releases back.
  bool holding() const {
    return phase_ == coordinator_phase::freezing || phase_ == coordinator_phase::collecting ||
           phase_ == coordinator_phase::replicating;
  }
  /// The run holds still for a checkpoint (not only for a new copy).
  bool checkpoint_due() const { return holding() && cause_ != checkpoint_cause::replica; }

  // -- starting
  void restored() {
    expect(coordinator_phase::starting, "restored");
    plan_.resumed = true;
  }
  void stop_before_start(const std::string& why) {
    expect(coordinator_phase::starting, "stop_before_start");
    if (!plan_.stop)
      plan_.stop = why;
  }
  /// starting -> running; what the start carried.
  start_plan start() {
    move_to(coordinator_phase::running);
    return std::move(plan_);
  }

  // -- a checkpoint (real clock), or a new copy
  /// running -> freezing, for `cause`.
  void freeze(checkpoint_cause cause) {
    move_to(coordinator_phase::freezing);
    cause_ = cause;
  }
  /// The period's tick came while the run holds: an asked checkpoint stands
  /// for it; a new copy's hold takes a checkpoint after it.
  void tick_while_holding() {
    if (holding() && cause_ == checkpoint_cause::asked)
      cause_ = checkpoint_cause::asked_tick_missed;
    else if (holding() && cause_ == checkpoint_cause::replica)
      cause_ = checkpoint_cause::tick;
  }
  /// A checkpoint was asked for while a new copy holds the run: one follows.
  void asked_while_replicating() {
    if (holding() && cause_ == checkpoint_cause::replica)
      cause_ = checkpoint_cause::asked;
  }
  void collect() { move_to(coordinator_phase::collecting); }
  /// collecting -> running; true when the period's next tick is due from now
  /// (an asked checkpoint leaves the period's tick in flight).
  bool thaw() {
    move_to(coordinator_phase::running);
    return cause_ != checkpoint_cause::asked;
  }
  /// freezing -> replicating: at rest, a lost copy is made again.
  void replicate() { move_to(coordinator_phase::replicating); }
  /// replicating -> freezing, when a checkpoint is due (taken at once: the
  /// run is at rest), or -> running; true for the checkpoint.
  bool replicated() {
    bool checkpoint = cause_ != checkpoint_cause::replica;
    move_to(checkpoint ? coordinator_phase::freezing : coordinator_phase::running);
    return checkpoint;
  }

  // -- the end
  void stop() { move_to(coordinator_phase::stopping); }
  void finish() { move_to(coordinator_phase::finishing); }

 private:
  void move_to(coordinator_phase next);
  void expect(coordinator_phase p, const char* what) const;

  coordinator_phase phase_ = coordinator_phase::starting;
  start_plan plan_;                                   // starting
  checkpoint_cause cause_ = checkpoint_cause::tick;  // freezing, collecting, replicating
};

/// The run's figures as the coordinator counts them.
struct run_figures {
  uint64_t samples = 0;
  uint64_t next_eval = 0;                  // samples at which the next periodic evaluation is due
  double next_tick = 0.01;                 // the run fraction of the next silent progress report (bars)
  // Snapshots asked of the shards whose evaluation has not come back, oldest
  // first (evaluations come back in this order): a replica promoted in a lost
  // primary's place is asked again for those (actors/coordinator_copies.cpp).
  struct snapshot_asked {
    uint64_t id = 0;
    uint64_t samples = 0;
    bool final = false;
  };
  std::deque<snapshot_asked> evals_pending;
  uint64_t snapshots_asked = 0;  // the id of the last one
  uint64_t observer_eval_at = UINT64_MAX;  // samples at the last evaluation an observer asked for
  bool target_reached = false;             // an evaluation reached the target (once)
  double last_accuracy = -1;
  std::string last_measure;  // "mse=0.1940": the progress line's figure when the loop measures no accuracy
  int64_t run_time = 0;      // nanoseconds, when every worker was gone
  std::string end_reason = "end";  // why the run ended: the first stop's reason
};

}  // namespace syncpoint
