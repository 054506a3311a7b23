// The coordinator's state (actors/coordinator.cpp): four small machines (its
// workers, its timers, the PS's sequence, the run's phase) and what ties them
// together; the protocol sees it through protocol_view. Shared with the
// coordinator's other files (membership, sequence, checkpoints, observers).
// Not part of the API.
#pragma once

#include "actors/coordinator.hpp"
#include "actors/coordinator_ps.hpp"
#include "actors/coordinator_run.hpp"
#include "actors/coordinator_timers.hpp"
#include "actors/coordinator_workers.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <optional>

namespace syncpoint {

struct coordinator_state;
using coordinator_ptr = coordinator_actor::stateful_pointer<coordinator_state>;

/// What the protocol sees of the run (coordinator_api): a thin adapter over
/// the coordinator's state, which does what it asks (actors/coordinator_view.cpp).
class protocol_view : public coordinator_api {
 public:
  explicit protocol_view(coordinator_state& st) : st_(st) {}
  int workers() const override;
  bool live(worker_id w) const override;
  std::vector<worker_id> live_workers() const override;
  int live_count() const override;
  int waiting_count() const override;
  uint64_t min_clock() const override;
  uint64_t clock(worker_id w) const override;
  double now() const override;
  bool waiting(worker_id w) const override;
  void release(worker_id w, bool pull) override;
  void commit() override;
  void set_mode(ps_mode mode) override;
  void publish() override;
  void set_worker_behavior(bool local_step, bool overlap) override;
  void set_local_work(worker_id w, const local_work& work) override;
  local_work local_work_of(worker_id w) const override;
  void release_at(worker_id w, double t, bool pull) override;
  void set_timer(double t, uint64_t tag) override;
  void set_batch(worker_id w, uint32_t batch) override;
  uint32_t batch(worker_id w) const override;
  uint64_t samples() const override;
  uint64_t sample_budget() const override;
  double time_budget() const override;
  void set_momentum(double mu, bool clear, uint32_t ramp_steps) override;
  double base_momentum() const override;
  void mark(const std::string& kind, const std::string& note, double value) override;
  void evaluate() override;

 private:
  coordinator_state& st_;
};

/// --ps-rereplicate (actors/coordinator_replace.cpp): lost copies waiting to
/// be made again, one at a time, while the run holds still.
struct copy_replacement {
  using slot = std::pair<size_t, size_t>;  // (shard, copy)
  std::deque<slot> waiting;
  std::optional<slot> making;  // its serving copy saved (or is saving) the state the new one starts from
  uint64_t attempt = 0;        // ... its replies to earlier attempts mean nothing
  int tries = 0;               // ... and how often its shard's serving copy was asked
  size_t asked = 0;            // ... which copy of it was asked last (lost: ask the next at once)
  // What went to the shards' copies since that save was asked for: the new
  // copy takes it too, in order, before anything else (to_members).
  std::vector<caf::message> missed;
  std::vector<slot> made;  // every copy made so far: a worker that joins later hears of each
  // By worker: news of new copies it has not answered yet. Its push's reply
  // waits for them: on a cluster it may come on the bulk channel, ahead of
  // the news on CAF, and the worker would push without the new copy.
  std::map<size_t, uint32_t> unanswered;
  bool waits_for_news(size_t worker) const { return unanswered.count(worker) > 0; }
};

struct coordinator_state {
  coordinator_ptr self;
  std::shared_ptr<coordinator_config> cfg;
  evaluator_actor evaluator;
  std::vector<job_observer_actor> observers;  // a program's own actors that follow the run
  worker_table workers;  // by worker id
  timer_table timers;    // the protocol's timers and delayed releases
  ps_sequence ps;        // the PS's mode and versions, and a sharded PS's sequence
  run_phase phase;
  run_figures run;
  protocol_view view{*this};  // what the protocol sees
  bool weights_stale = false;  // a batch changed: new weights go before the next release or PS message
  // Protocol events (pushes, losses, joins, timers) handled so far, and
  // whether the one being handled released someone held since an earlier one.
  uint64_t event = 0;
  bool barrier_in_event = false;
  std::vector<worker_loss> losses;  // who left the run early, and why
  std::vector<caf::actor_addr> lost_copies;  // shards' copies given up for lost (their down messages mean nothing)
  std::map<size_t, std::vector<std::string>> copy_losses;  // ... and why, by shard: "shard 1's primary (copy 0): ..."
  copy_replacement replacing;
  // A checkpoint being gathered (phase collecting): the copies and workers
  // asked for their state, and how it is given up when one of them is lost
  // (a request to a process that died is never answered: CAF 0.17).
  struct {
    std::vector<caf::actor_addr> asked;
    std::function<void(caf::error)> give_up;
  } gathering;
  // The final models asked of shards' copies (final_atom, phase finishing),
  // by request: the copy asked, and what is done instead when it is lost
  // before it answers (never, CAF 0.17: the run would wait --request-timeout).
  struct final_ask {
    caf::actor_addr copy;
    std::function<void()> on_lost;
  };
  std::map<uint64_t, final_ask> finals_asked;
  uint64_t finals_count = 0;
  // Wall time spent in the handlers that decide (pushes, timers, losses,
  // joins), and pushes handled: the coordinator's cost per push.
  std::chrono::steady_clock::duration busy{};
  uint64_t pushes_handled = 0;
  uint64_t rejected = 0;  // pushes the PS refused (all shards', counted once)
  static inline const char* name = "coordinator";

  explicit coordinator_state(coordinator_ptr ptr) : self(ptr) {}

  /// Seconds since the start of the run, on its clock.
  double now() const { return to_seconds(since(self, cfg->origin)); }
  bool valid(worker_id w) const { return workers.valid(w); }
  static size_t idx(worker_id w) { return static_cast<size_t>(w); }
  bool live(worker_id w) const { return valid(w) && workers[idx(w)].live(); }
  bool waiting(worker_id w) const { return live(w) && workers[idx(w)].waiting(); }
  /// How far the run is, 0..1 (coordinator_api::run_fraction).
  double run_fraction() const { return view.run_fraction(); }

  // -- what the protocol asks for (protocol_view forwards here) -----------------
  void release(worker_id w, bool pull);
  void commit();
  void publish();
  void set_mode(ps_mode mode);
  void release_at(worker_id w, double t, bool pull);
  void set_timer(double t, uint64_t tag);
  void set_batch(worker_id w, uint32_t b);
  void mark(const std::string& kind, const std::string& note, double value);
  void evaluate() { request_snapshot(false); }

  // Nanoseconds from now until `t` seconds on the run clock: exact in virtual time.
  caf::timespan until(double t) const {
    auto target = static_cast<nanos>(std::llround(t * 1e9));
    auto now_ns = since(self, cfg->origin);
    return caf::timespan{std::max<nanos>(0, target - now_ns)};
  }
  uint64_t add_timer(double t, timer_entry e);

  /// What worker i's release says: go on (or stop), pull first or not, with its batch and local work.
  proceed release_of(size_t i, bool pull) const;

  // -- a sharded PS's sequence (actors/coordinator_sequence.cpp) ---------------
  // The ops queued while handling this message go out, to every shard in the same order.
  void flush_ops();
  // A release goes to worker i (a reply, or the start's message): a sharded PS holds the version it pulls.
  void answer(push_reply& rp, size_t i, proceed p);
  void start(size_t i, proceed p);
  void serve(size_t i, proceed& p);
  // The releases held back, once neither a checkpoint nor a shard sync holds them.
  void deliver_deferred();
  // Releases wait until every shard of another process has what was sent so far.
  void sync_remote_shards();

  template <class T>
  void tell_observers(const T& x) {
    for (auto& o : observers)
      self->send(o, x);
  }

  // Evaluations and phase changes: to the observers, and to a driver that
  // relays them (a cluster's job runner, to the submitter's observers).
  template <class Atom, class T>
  void tell_followers(Atom what, const T& x) {
    tell_observers(x);
    if (cfg->report_events && cfg->driver)
      self->send(cfg->driver, what, x);
  }

  void trace(trace_event ev) {
    if (cfg->tracer)
      self->send(cfg->tracer, trace_atom::value, std::move(ev));
  }

  // Runs one protocol callback and records a barrier if it released anyone
  // who had been held since an earlier event.
  // The protocol threw `what` from a callback: the run ends with protocol_failed.
  void fail_protocol(const std::string& what);
  // A callback that throws ends the run with protocol_failed and its message (nothing after it runs).
  template <class F>
  void protocol_event(F&& f) {
    ++event;
    barrier_in_event = false;
    try {
      f();
    } catch (const std::exception& e) {
      fail_protocol(e.what());
      return;
    }
    if (weights_stale)  // batches set and nobody released since
      send_worker_weights();
    flush_ops();
    if (barrier_in_event) {
      auto t = since(self, cfg->origin);
      trace({"barrier", -1, t, t, event, ps.version(), 0});
    }
  }

  // A message to the PS, after the weights of batches set before it: the PS
  // sees changes in the order the protocol made them, and consecutive batch
  // changes as one message.
  template <class... Ts>
  void to_ps(const Ts&... xs) {
    if (weights_stale)
      send_worker_weights();
    to_shards(xs...);
  }

  /// To every shard of the PS, in the same order (after the ops queued so far).
  template <class... Ts>
  void to_shards(const Ts&... xs) {
    flush_ops();
    to_members(caf::make_message(xs...));
  }
  /// To every live copy of every shard, and to the copy being made
  /// (replacing.missed). Whatever changes a copy's state goes this way, or a
  /// new copy would miss it.
  void to_members(const caf::message& msg);
  void send_to(const ps_actor& copy, const caf::message& msg);

  void send_worker_weights();

  void request_snapshot(bool final) {  // from each shard's primary: a replica holds the same
    run.evals_pending.push_back({++run.snapshots_asked, run.samples, final});
    if (weights_stale)
      send_worker_weights();
    flush_ops();
    for (auto& shard : cfg->ps.shards)
      self->send(shard, snapshot_atom::value, evaluator, run.samples, final, run.snapshots_asked);
  }

  // One line on stderr and/or to the driver.
  void report(std::string line, bool event = false);

  void print_progress(const std::string& what);
};

/// Adds the wall time until it goes to the coordinator's busy time.
class busy_timer {
 public:
  explicit busy_timer(coordinator_state& st) : st_(st), t0_(std::chrono::steady_clock::now()) {}
  ~busy_timer() { st_.busy += std::chrono::steady_clock::now() - t0_; }
  busy_timer(const busy_timer&) = delete;
  busy_timer& operator=(const busy_timer&) = delete;

 private:
  coordinator_state& st_;
  std::chrono::steady_clock::time_point t0_;
};

/// A push the PS (every shard of it) took in: the protocol hears of it (actors/coordinator.cpp).
void on_pushed(coordinator_ptr self, const push_info& info, push_reply rp);

/// Copy `copy` of shard `shard` took its slice of a push in or refused it;
/// `reply` is the worker's when a copy of the lead reports (actors/coordinator_sequence.cpp).
void shard_reported(coordinator_ptr self, const push_info& info, uint32_t shard, uint32_t copy, push_reply reply);

/// The run cannot go on: observers hear why, everyone stops, and the driver,
/// which monitors the coordinator, reports `why`.
void fail_run(coordinator_ptr self, caf::error why);

/// The run stops (a limit, the target, a stop from outside): every worker is
/// released to stop, and `reason` is the run's end (the first one wins).
void begin_stop(coordinator_ptr self, const std::string& reason);

/// Every worker is gone (ended or lost): the shards flush, and the final
/// snapshot and evaluation follow.
void maybe_finish(coordinator_ptr self);

// -- membership (coordinator_membership.cpp): workers that go and join

/// Worker i is gone (`reason`: its exit): the protocol goes on without it.
void lose_worker(coordinator_ptr self, size_t i, const caf::error& reason);

/// Copy `copy` of shard `shard` is gone: a replica serves in a primary's
/// place, pushes every live copy now holds count, and the workers hear of it;
/// the shard's last copy gone fails the run (false; actors/coordinator_copies.cpp).
bool lose_copy(coordinator_ptr self, size_t shard, size_t copy, const std::string& why);

/// With cfg.check_copies: `then` once every live copy of each shard holds its
/// serving copy's model and version, bit for bit; `fail` otherwise.
void check_copies(coordinator_ptr self, std::function<void()> then, std::function<void(caf::error&)> fail);

/// The model from every shard, as one, to `then` (or an error to `fail`): a
/// shard's part from its serving copy, or, that copy gone before it answers,
/// from another live copy of the shard.
void gather_model(coordinator_ptr self, std::function<void(weights&)> then, std::function<void(caf::error&)> fail);

/// Asks `copy` for its final model: `got` with it, `failed` with the error
/// of the request, or `lost` if the copy is lost first (see final_lost).
void ask_final(coordinator_ptr self, const ps_actor& copy, std::function<void(weights&)> got,
               std::function<void(caf::error&)> failed, std::function<void()> lost);

/// `copy` is lost: what asked it for its final model does without it.
void final_lost(coordinator_ptr self, const caf::actor_addr& copy);

/// --ps-rereplicate: lost copy `copy` of shard `shard` is made again, from
/// its shard's serving copy once the run is at rest (actors/coordinator_replace.cpp).
void replace_copy(coordinator_ptr self, size_t shard, size_t copy);

/// The run may be at rest now: takes the checkpoint, or begins making a
/// lost copy, that waits for it.
void act_if_still(coordinator_ptr self);

/// Where a worker that joins late learns of every copy made so far.
void tell_of_copies(coordinator_ptr self, size_t worker);

/// A push that every shard's live copies have reported (or refused) counts now.
void recount_partials(coordinator_ptr self);

/// A monitored actor went: an observer (see observer_down), a worker (the
/// protocol goes on without it), or a PS shard, the evaluator or the tracer
/// (the run fails, naming the lost shard's values).
void on_down(coordinator_ptr self, const caf::down_msg& dm);

/// A vacant worker id (never started, or lost) gets a running worker; an
/// unwanted one is shut down.
void on_join(coordinator_ptr self, worker_id w, worker_actor handle, const std::string& where);

// -- observers (coordinator_observers.cpp): a program's own actors that follow the run

/// At the start: monitors each observer and hands it the job's control handle.
void greet_observers(coordinator_ptr self);

/// The run's counts so far, for whoever asks (a dashboard).
job_counts counts_of(coordinator_ptr self);

/// Whether the current message comes from the driver or one of the
/// observers: who may stop the run, ask for an evaluation or mark the trace.
bool from_driver_or_observer(coordinator_ptr self);

/// A down message from an observer: one that failed while the run goes on
/// ends it (user_actor_failed), one that quit is dropped. False when `dm` is
/// not an observer's.
bool observer_down(coordinator_ptr self, const caf::down_msg& dm);

/// An observer asks for an evaluation now, or writes a "mark" into the trace.
void observer_asks_eval(coordinator_ptr self);
void observer_marks(coordinator_ptr self, const std::string& note, double value);

/// Real clock: the checkpoint tick. Holds releases back until every live
/// worker waits, then gathers every actor's state, hands it to
/// cfg.on_checkpoint, and lets everyone go.
void begin_checkpoint(coordinator_ptr self);

/// A checkpoint_request from the driver or an observer: begin_checkpoint
/// now, outside the period (which goes on as it was); where none can be
/// taken, the progress line says why.
void checkpoint_asked(coordinator_ptr self, const std::string& why);

/// Takes the checkpoint if the run has come to rest since begin_checkpoint.
void checkpoint_if_still(coordinator_ptr self);

/// The state a checkpoint keeps, with the protocol's own; throws
/// std::logic_error if the protocol does not support checkpoints.
saved_coordinator save(coordinator_state& st);

/// Back to `s`, the protocol's state included (the configuration and
/// handles stay the new run's); held pushes wait for their workers to ask
/// again (resume_atom).
void restore(coordinator_state& st, const saved_coordinator& s);

}  // namespace syncpoint
