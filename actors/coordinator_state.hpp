// The coordinator's state (actors/coordinator.cpp): what it knows of the
// run, and the coordinator_api its protocol sees. Shared with its checkpoint
// code (actors/coordinator_checkpoint.cpp). Not part of the API.
#pragma once

#include "actors/coordinator.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>

namespace syncpoint {

/// The coordinator's life, one phase at a time (transitions: move_to in
/// coordinator_state.cpp; anything else is a bug and stops the run):
///   starting -> running -> stopping -> finishing
///   running -> freezing -> collecting -> running     a real-clock checkpoint
///   any phase but finishing -> finishing              every worker is gone
///   freezing, collecting -> stopping                  a stop gives the checkpoint up
enum class coordinator_phase : uint8_t {
  starting,    // spawned, waiting for its workers (start_atom)
  running,
  freezing,    // a checkpoint is due: releases are held until every live worker waits
  collecting,  // everyone is at rest: the actors' states are being gathered
  stopping,    // a limit, a target or a stop: every worker is told to stop
  finishing,   // every worker is gone: the final snapshot, evaluation and outcome
};

const char* to_string(coordinator_phase p);

/// What the coordinator knows of one worker.
struct worker_slot {
  worker_actor handle;     // invalid until the start (and for a vacant place)
  bool live = true;        // in the run (set_live keeps the counts)
  bool gone = false;       // quit: finished, lost, or vacant
  uint64_t clock = 0;      // pushes so far (set_clock)
  bool waiting = true;     // its push (or its start) awaits a release (set_waiting)
  caf::typed_response_promise<proceed> promise;  // valid while a push awaits its release
  uint64_t waiting_since = 0;    // event number of the push being answered
  nanos accepted = 0;
  uint32_t batch = 0;            // sent with each release
  uint64_t pending_release = 0;  // the release_at timer that is current (0: none)
  uint64_t samples = 0;          // since this coordinator started
  // A release held back: by a checkpoint or a shard sync (deferred), or the
  // start's message during a shard sync (deferred_start).
  std::optional<proceed> deferred;
  std::optional<proceed> deferred_start;
  bool held_for_resume = false;  // resumed: held until the worker asks again
};

struct coordinator_state;
using coordinator_ptr = coordinator_actor::stateful_pointer<coordinator_state>;

struct coordinator_state : coordinator_api {
  coordinator_ptr self;
  std::shared_ptr<coordinator_config> cfg;
  evaluator_actor evaluator;
  std::vector<job_observer_actor> observers;  // a program's own actors that follow the run
  std::string end_reason = "end";             // why the run ended: the first stop's reason
  std::vector<worker_slot> slots_;            // one per worker id
  // Kept with each slot's live, waiting and clock (set_live, set_waiting,
  // set_clock) so that a protocol's per-push questions are O(1) (recount after
  // bulk changes).
  int live_count_ = 0;
  int waiting_count_ = 0;                  // live and waiting
  std::map<uint64_t, uint32_t> live_clocks_;  // clock -> live workers at it
  bool weights_stale_ = false;             // a batch changed: new weights go before the next release or PS message
  // Protocol timers: id -> what to do. A release_at is current while
  // slots_[w].pending_release holds its id.
  struct timer_entry {
    bool is_release = false;
    worker_id worker = -1;
    bool pull = true;
    uint64_t tag = 0;
    nanos due = 0;
  };
  std::map<uint64_t, timer_entry> timers_;
  uint64_t next_timer_ = 0;
  uint64_t version_ = 0;
  uint64_t buffered_ = 0;  // a sharded PS: pushes applied into the round since its last commit
  ps_mode mode_ = ps_mode::immediate;
  uint64_t published_version_ = 0;  // gated mode: what pulls can get
  bool local_step_ = false;
  bool overlap_ = false;
  uint64_t samples_ = 0;
  uint64_t next_eval = 0;
  uint64_t event = 0;                      // pushes and losses handled so far
  bool barrier_in_event = false;
  coordinator_phase phase_ = coordinator_phase::starting;
  bool checkpoint_asked_ = false;  // the checkpoint in the making was asked for (checkpoint_request)
  bool tick_missed_ = false;       // and the periodic tick came meanwhile
  bool resumed = false;  // restored from a checkpoint before the start
  std::optional<std::string> stop_before_start_;  // a stop that came before the workers
  uint64_t evals_pending = 0;
  uint64_t observer_eval_at = UINT64_MAX;  // samples at the last evaluation an observer asked for
  // Shards in other processes: after a mode change, releases wait until
  // every shard has it (sync_atom answered), because a released worker's
  // next push reaches a shard by another connection and could overtake the
  // mode. The start's releases (messages, not replies) wait too.
  int shard_syncs_pending_ = 0;
  nanos run_time = 0;
  double last_accuracy = -1;
  std::string last_measure;  // "mse=0.1940": the progress line's figure when the loop measures no accuracy
  double next_tick = 0.01;  // the run fraction of the next silent progress report (bars)
  bool target_reached = false;
  std::vector<worker_loss> losses;  // who left the run early, and why
  // Wall time spent in the handlers that decide (pushes, timers, losses,
  // joins), and pushes handled: the coordinator's cost per push.
  std::chrono::steady_clock::duration busy{};
  uint64_t pushes_handled = 0;
  uint64_t rejected_ = 0;  // pushes the PS refused (all shards', counted once)
  // A sharded PS: the ops of this message's handling, sent to every shard at
  // its end (or before any other message to the shards), in one order.
  std::vector<shard_op> ops_;
  static inline const char* name = "coordinator";

  explicit coordinator_state(coordinator_ptr ptr) : self(ptr) {}

  // -- the phase ----------------------------------------------------------------
  /// To `next`; an impossible move fails the run (a bug, not an input).
  void move_to(coordinator_phase next);
  bool started() const { return phase_ != coordinator_phase::starting; }
  /// A stop was decided, or every worker is gone: no new work, no checkpoint.
  bool ending() const { return phase_ == coordinator_phase::stopping || phase_ == coordinator_phase::finishing; }
  /// A checkpoint holds releases back (real clock).
  bool holding() const { return phase_ == coordinator_phase::freezing || phase_ == coordinator_phase::collecting; }
  /// Per worker, the samples it pushed since this coordinator started.
  std::vector<uint64_t> worker_samples() const {
    std::vector<uint64_t> out;
    for (auto& s : slots_)
      out.push_back(s.samples);
    return out;
  }
  /// The job's workers, by id (invalid: vacant or not started).
  std::vector<worker_actor> handles() const {
    std::vector<worker_actor> out;
    for (auto& s : slots_)
      out.push_back(s.handle);
    return out;
  }

  // -- coordinator_api --------------------------------------------------------
  int workers() const override { return static_cast<int>(slots_.size()); }
  bool live(worker_id w) const override { return valid(w) && slots_[idx(w)].live; }
  std::vector<worker_id> live_workers() const override {
    std::vector<worker_id> out;
    for (size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i].live)
        out.push_back(static_cast<worker_id>(i));
    return out;
  }
  int live_count() const override { return live_count_; }
  int waiting_count() const override { return waiting_count_; }
  uint64_t min_clock() const override { return live_clocks_.empty() ? 0 : live_clocks_.begin()->first; }
  uint64_t clock(worker_id w) const override { return valid(w) ? slots_[idx(w)].clock : 0; }
  double now() const override { return to_seconds(since(self, cfg->origin)); }
  bool waiting(worker_id w) const override { return live(w) && slots_[idx(w)].waiting; }

  void release(worker_id w, bool pull) override;

  void commit() override {
    to_ps(commit_atom::value);
    ++version_;
    buffered_ = 0;
  }

  void publish() override {
    to_ps(publish_atom::value);
    published_version_ = version_;
  }

  void set_worker_behavior(bool local_step, bool overlap) override {
    local_step_ = local_step;
    overlap_ = overlap;
  }

  // Nanoseconds from now until `t` seconds on the run clock: exact in virtual time.
  caf::timespan until(double t) const {
    auto target = static_cast<nanos>(std::llround(t * 1e9));
    auto now_ns = since(self, cfg->origin);
    return caf::timespan{std::max<nanos>(0, target - now_ns)};
  }

  uint64_t add_timer(double t, timer_entry e) {
    auto id = ++next_timer_;
    e.due = static_cast<nanos>(std::llround(t * 1e9));
    timers_.emplace(id, e);
    self->delayed_send(self, until(t), timeout_atom::value, id);
    return id;
  }

  // -- a sharded PS's sequence (actors/ps_sequence.cpp) ------------------------

  bool sequenced() const { return cfg->ps.size() > 1; }

  // The version a released worker pulls now: what the shards serve at this point of the sequence.
  /// What a worker taking local steps steps with now (0: no local steps, or the constant rate).
  double local_rate() const { return local_step_ && cfg->schedule.varies() ? cfg->schedule.at(samples_) : 0.0; }
  uint64_t pullable_version() const { return mode_ == ps_mode::gated ? published_version_ : version_; }

  // (actors/coordinator_sequence.cpp)
  void queue_op(uint8_t kind, worker_id w, uint64_t n);
  // A push every shard holds goes into the model: a new version, or the round's.
  void apply_op(worker_id w, uint64_t iter);
  // The PS applies what its round holds (flush, a mode change): a version if anything was.
  void round_flushed();
  // The ops queued while handling this message go out, to every shard in the same order.
  void flush_ops();
  // A release goes to worker i (a reply, or the start's message): a sharded PS holds the version it pulls.
  void answer(caf::typed_response_promise<proceed>& rp, size_t i, proceed p);
  void start(size_t i, proceed p);
  void serve(size_t i, proceed& p);

  // The releases held back, once neither a checkpoint nor a shard sync holds them.
  void deliver_deferred();

  // Releases wait until every shard of another process has what was sent so far.
  void sync_remote_shards();

  void release_at(worker_id w, double t, bool pull) override {
    if (!waiting(w))
      return;
    if (until(t).count() == 0) {
      release(w, pull);
      return;
    }
    slots_[idx(w)].pending_release = add_timer(t, {true, w, pull, 0});
  }

  void set_timer(double t, uint64_t tag) override { add_timer(t, {false, -1, true, tag}); }

  void set_batch(worker_id w, uint32_t b) override {
    if (!valid(w) || b == 0 || slots_[idx(w)].batch == b)
      return;
    slots_[idx(w)].batch = b;
    weights_stale_ = true;  // one message for a protocol that sets every batch (to_ps, release)
  }

  uint32_t batch(worker_id w) const override { return valid(w) ? slots_[idx(w)].batch : 0; }

  uint64_t samples() const override { return samples_; }
  uint64_t sample_budget() const override { return cfg->sample_budget; }
  double time_budget() const override { return cfg->max_time_s; }
  double base_momentum() const override { return cfg->momentum; }

  void set_momentum(double mu, bool clear, uint32_t ramp_steps) override {
    to_ps(momentum_atom::value, mu, clear, ramp_steps);
  }

  void mark(const std::string& kind, const std::string& note, double value) override {
    auto t = since(self, cfg->origin);
    trace_event ev{kind, -1, t, t, samples_, version_, value, note};
    if (kind == "phase")
      tell_followers(phase_atom::value, phase_of(ev));
    trace(std::move(ev));
  }

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

  void evaluate() override { request_snapshot(false); }

  void set_mode(ps_mode mode) override {
    to_ps(mode_atom::value, static_cast<uint8_t>(mode));
    if (mode != ps_mode::buffered)
      round_flushed();  // the PS never strands a round's pushes
    mode_ = mode;
    published_version_ = version_;
    sync_remote_shards();
  }

  // -- helpers ----------------------------------------------------------------
  bool valid(worker_id w) const { return w >= 0 && static_cast<size_t>(w) < slots_.size(); }
  static size_t idx(worker_id w) { return static_cast<size_t>(w); }

  void set_waiting(size_t i, bool v) {
    if (slots_[i].waiting == v)
      return;
    slots_[i].waiting = v;
    if (slots_[i].live)
      waiting_count_ += v ? 1 : -1;
  }

  void set_live(size_t i, bool v) {
    if (slots_[i].live == v)
      return;
    slots_[i].live = v;
    int d = v ? 1 : -1;
    live_count_ += d;
    if (slots_[i].waiting)
      waiting_count_ += d;
    if (v)
      ++live_clocks_[slots_[i].clock];
    else
      drop_clock(slots_[i].clock);
  }

  void set_clock(size_t i, uint64_t c) {
    if (slots_[i].live) {
      drop_clock(slots_[i].clock);
      ++live_clocks_[c];
    }
    slots_[i].clock = c;
  }

  void drop_clock(uint64_t c) {
    auto it = live_clocks_.find(c);
    if (--it->second == 0)
      live_clocks_.erase(it);
  }

  // The counts from the slots as they are (start, restore).
  void recount() {
    live_count_ = waiting_count_ = 0;
    live_clocks_.clear();
    for (auto& s : slots_)
      if (s.live) {
        ++live_count_;
        waiting_count_ += s.waiting ? 1 : 0;
        ++live_clocks_[s.clock];
      }
  }

  void trace(trace_event ev) {
    if (cfg->tracer)
      self->send(cfg->tracer, trace_atom::value, std::move(ev));
  }

  // Runs one protocol callback and records a barrier if it released anyone
  // who had been held since an earlier event.
  template <class F>
  void protocol_event(F&& f) {
    ++event;
    barrier_in_event = false;
    f();
    if (weights_stale_)  // batches set and nobody released since
      send_worker_weights();
    flush_ops();
    if (barrier_in_event) {
      auto t = since(self, cfg->origin);
      trace({"barrier", -1, t, t, event, version_, 0});
    }
  }

  // A message to the PS, after the weights of batches set before it: the PS
  // sees changes in the order the protocol made them, and consecutive batch
  // changes as one message.
  template <class... Ts>
  void to_ps(const Ts&... xs) {
    if (weights_stale_)
      send_worker_weights();
    to_shards(xs...);
  }

  /// To every shard of the PS, in the same order (after the ops queued so far).
  template <class... Ts>
  void to_shards(const Ts&... xs) {
    flush_ops();
    for (auto& shard : cfg->ps.shards)
      self->send(shard, xs...);
  }

  // A push some shards have reported and others not yet: acted on once all
  // have, or at once when one refused its slice (info.refused).
  struct partial_push {
    uint32_t reports = 0;
    push_info info;
    bool lead_in = false;                        // the lead has reported: reply is the worker's
    caf::typed_response_promise<proceed> reply;  // ... which waits for it
  };
  std::map<std::pair<worker_id, uint64_t>, partial_push> partial_pushes;

  void send_worker_weights();

  void request_snapshot(bool final) {
    ++evals_pending;
    to_ps(snapshot_atom::value, evaluator, samples_, final);
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
void on_pushed(coordinator_ptr self, const push_info& info, caf::typed_response_promise<proceed> rp);

/// Shard `shard` took its slice of a push in or refused it; `reply` is the
/// worker's when the lead reports (actors/coordinator_sequence.cpp).
void shard_reported(coordinator_ptr self, const push_info& info, uint32_t shard,
                    caf::typed_response_promise<proceed> reply);

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
