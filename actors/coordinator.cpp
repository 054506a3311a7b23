#include "actors/coordinator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace syncpoint {

namespace {

struct coordinator_state;
using coordinator_ptr = coordinator_actor::stateful_pointer<coordinator_state>;

void begin_stop(coordinator_ptr self, const std::string& reason);
void maybe_finish(coordinator_ptr self);

struct coordinator_state : coordinator_api {
  coordinator_ptr self;
  std::shared_ptr<coordinator_config> cfg;
  evaluator_actor evaluator;
  std::vector<worker_actor> worker_handles;
  std::vector<bool> live_;
  std::vector<bool> gone_;                 // quit (finished or lost)
  std::vector<uint64_t> clock_;
  std::vector<bool> waiting_;
  std::vector<caf::typed_response_promise<proceed>> promise_;  // valid while a push awaits its release
  std::vector<uint64_t> waiting_since_;    // event number of the push being answered
  std::vector<nanos> accepted_;
  std::vector<uint32_t> batch_;            // per worker, sent with each release
  // Protocol timers: id -> what to do. A release_at is current while
  // pending_release_[w] holds its id.
  struct timer_entry {
    bool is_release = false;
    worker_id worker = -1;
    bool pull = true;
    uint64_t tag = 0;
  };
  std::map<uint64_t, timer_entry> timers_;
  uint64_t next_timer_ = 0;
  std::vector<uint64_t> pending_release_;
  uint64_t version_ = 0;
  ps_mode mode_ = ps_mode::immediate;
  uint64_t published_version_ = 0;  // gated mode: what pulls can get
  bool local_step_ = false;
  bool overlap_ = false;
  uint64_t samples_ = 0;
  uint64_t next_eval = 0;
  uint64_t event = 0;                      // pushes and losses handled so far
  bool barrier_in_event = false;
  bool started = false;
  bool stopping = false;
  bool finishing = false;
  nanos run_time = 0;
  double last_accuracy = -1;
  double next_tick = 0.01;  // the run fraction of the next silent progress report (bars)
  bool target_reached = false;
  std::vector<worker_loss> losses;  // who left the run early, and why
  static inline const char* name = "coordinator";

  explicit coordinator_state(coordinator_ptr ptr) : self(ptr) {}

  // -- coordinator_api --------------------------------------------------------
  int workers() const override { return static_cast<int>(live_.size()); }
  bool live(worker_id w) const override { return valid(w) && live_[idx(w)]; }
  std::vector<worker_id> live_workers() const override {
    std::vector<worker_id> out;
    for (size_t i = 0; i < live_.size(); ++i)
      if (live_[i])
        out.push_back(static_cast<worker_id>(i));
    return out;
  }
  uint64_t clock(worker_id w) const override { return valid(w) ? clock_[idx(w)] : 0; }
  double now() const override { return to_seconds(since(self, cfg->origin)); }
  bool waiting(worker_id w) const override { return live(w) && waiting_[idx(w)]; }

  void release(worker_id w, bool pull) override {
    if (!waiting(w))
      return;
    auto i = idx(w);
    waiting_[i] = false;
    pending_release_[i] = 0;
    proceed p{stopping, pull, mode_ == ps_mode::gated ? published_version_ : version_, batch_[i],
              accepted_[i], local_step_, overlap_};
    if (promise_[i].pending()) {
      if (waiting_since_[i] < event)
        barrier_in_event = true;  // someone was held across events: a barrier opened
      promise_[i].deliver(p);
      promise_[i] = caf::typed_response_promise<proceed>{};
    } else {
      self->send(worker_handles[i], p);  // the start of the run
    }
  }

  void commit() override {
    self->send(cfg->ps, commit_atom::value);
    ++version_;
  }

  void publish() override {
    self->send(cfg->ps, publish_atom::value);
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
    timers_.emplace(id, e);
    self->delayed_send(self, until(t), timeout_atom::value, id);
    return id;
  }

  void release_at(worker_id w, double t, bool pull) override {
    if (!waiting(w))
      return;
    if (until(t).count() == 0) {
      release(w, pull);
      return;
    }
    pending_release_[idx(w)] = add_timer(t, {true, w, pull, 0});
  }

  void set_timer(double t, uint64_t tag) override { add_timer(t, {false, -1, true, tag}); }

  void set_batch(worker_id w, uint32_t b) override {
    if (!valid(w) || b == 0 || batch_[idx(w)] == b)
      return;
    batch_[idx(w)] = b;
    send_worker_weights();
  }

  uint32_t batch(worker_id w) const override { return valid(w) ? batch_[idx(w)] : 0; }

  uint64_t samples() const override { return samples_; }
  uint64_t sample_budget() const override { return cfg->sample_budget; }
  double time_budget() const override { return cfg->max_time_s; }
  double base_momentum() const override { return cfg->momentum; }

  void set_momentum(double mu, bool clear, uint32_t ramp_steps) override {
    self->send(cfg->ps, momentum_atom::value, mu, clear, ramp_steps);
  }

  void mark(const std::string& kind, const std::string& note, double value) override {
    auto t = since(self, cfg->origin);
    trace({kind, -1, t, t, samples_, version_, value, note});
  }

  void evaluate() override { request_snapshot(false); }

  void set_mode(ps_mode mode) override {
    self->send(cfg->ps, mode_atom::value, static_cast<uint8_t>(mode));
    mode_ = mode;
    published_version_ = version_;
  }

  // -- helpers ----------------------------------------------------------------
  bool valid(worker_id w) const { return w >= 0 && static_cast<size_t>(w) < live_.size(); }
  static size_t idx(worker_id w) { return static_cast<size_t>(w); }

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
    if (barrier_in_event) {
      auto t = since(self, cfg->origin);
      trace({"barrier", -1, t, t, event, version_, 0});
    }
  }

  void send_worker_weights() {
    // Weight rule: a push counts b_i / (sum of the live workers' batches),
    // which is 1/n when every batch is the same.
    double total = 0;
    for (size_t i = 0; i < live_.size(); ++i)
      if (live_[i])
        total += batch_[i];
    std::vector<float> wts(live_.size(), 0.0f);
    for (size_t i = 0; i < live_.size(); ++i)
      wts[i] = live_[i] && total > 0 ? static_cast<float>(batch_[i] / total) : 0.0f;
    self->send(cfg->ps, weights_atom::value, std::move(wts));
  }

  void request_snapshot(bool final) {
    self->send(cfg->ps, snapshot_atom::value, evaluator, samples_, final);
  }

  // One line on stderr and/or to the driver.
  void report(std::string line, bool event = false) {
    progress_report r{std::move(line), samples_, std::min(run_fraction(), 1.0), last_accuracy, event};
    if (cfg->on_progress)
      cfg->on_progress(r);
    else if (cfg->progress)
      std::fprintf(stderr, "%s\n", r.line.c_str());
    if (cfg->report_progress && cfg->driver)
      self->send(cfg->driver, progress_atom::value, std::move(r));
  }

  void print_progress(const std::string& what) {
    if (!cfg->progress && !cfg->report_progress && !cfg->on_progress)
      return;
    double pct = 100.0 * run_fraction();
    char line[256];
    std::snprintf(line, sizeof line, "[%s] %-6s t=%9.2fs samples=%9llu (%5.1f%%) acc=%.4f",
                  cfg->protocol_name.c_str(), what.c_str(), now(),
                  static_cast<unsigned long long>(samples_), std::min(pct, 100.0),
                  std::max(last_accuracy, 0.0));
    report(line);
  }
};

void on_pushed(coordinator_ptr self, const push_info& info, caf::typed_response_promise<proceed> rp) {
  auto& st = self->state;
  if (!st.live(info.worker)) {  // a late push from a worker declared lost
    rp.deliver(proceed{true, false, 0, 0, info.accepted});
    return;
  }
  auto i = coordinator_state::idx(info.worker);
  ++st.clock_[i];
  st.samples_ += info.samples;
  st.version_ = std::max(st.version_, info.version);
  st.waiting_[i] = true;
  st.promise_[i] = std::move(rp);
  st.waiting_since_[i] = st.event + 1;
  st.accepted_[i] = info.accepted;
  if (!st.stopping && st.cfg->sample_budget > 0 && st.samples_ >= st.cfg->sample_budget)
    begin_stop(self, "budget");
  if (st.stopping)
    st.release(info.worker, false);
  else
    st.protocol_event([&] { st.cfg->proto->on_push(st, info.worker); });
  if (st.cfg->on_progress && st.run_fraction() >= st.next_tick) {  // a bar moves every 1%, no line
    auto f = st.run_fraction();
    st.next_tick = (std::floor(f * 100) + 1) / 100;
    st.cfg->on_progress(progress_report{"", st.samples_, std::min(f, 1.0), st.last_accuracy, false});
  }
  // After the protocol: a commit it sent reaches the PS before this request.
  if (st.cfg->eval_every_samples > 0 && st.samples_ >= st.next_eval) {
    while (st.next_eval <= st.samples_)
      st.next_eval += st.cfg->eval_every_samples;
    st.request_snapshot(false);
  }
}

bool is_failure(const caf::error& reason) {
  return reason && reason != caf::exit_reason::normal && reason != caf::exit_reason::user_shutdown;
}

// Why a worker went, in words (CAF renders exit reasons as codes).
std::string loss_reason(coordinator_ptr self, const caf::error& reason) {
  if (reason == caf::exit_reason::remote_link_unreachable)
    return "its node became unreachable (connection lost or node killed)";
  if (reason == caf::exit_reason::user_shutdown)
    return "it was shut down";
  if (!reason || reason == caf::exit_reason::normal)
    return "it stopped before the end of the run";
  return self->system().render(reason);
}

void shut_down_everything(coordinator_ptr self) {
  auto& st = self->state;
  self->send_exit(st.cfg->ps, caf::exit_reason::user_shutdown);
  self->send_exit(st.evaluator, caf::exit_reason::user_shutdown);
  self->send_exit(st.cfg->tracer, caf::exit_reason::user_shutdown);
  for (auto& w : st.worker_handles)
    self->send_exit(w, caf::exit_reason::user_shutdown);
}

void on_down(coordinator_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  auto it = std::find_if(st.worker_handles.begin(), st.worker_handles.end(),
                         [&](const worker_actor& a) { return a.address() == dm.source; });
  if (it == st.worker_handles.end()) {
    // The PS, the evaluator or the tracer died: the run cannot go on. The
    // driver monitors us and reports the reason.
    if (!st.finishing || is_failure(dm.reason)) {
      shut_down_everything(self);
      self->quit(is_failure(dm.reason) ? dm.reason
                                       : caf::make_error(caf::sec::runtime_error,
                                                         "a parameter server, evaluator or tracer stopped"));
    }
    return;
  }
  auto i = static_cast<size_t>(it - st.worker_handles.begin());
  auto w = static_cast<worker_id>(i);
  st.gone_[i] = true;
  auto record_loss = [&] {
    auto t = since(self, st.cfg->origin);
    st.trace({"lost", w, t, t, st.clock_[i], st.version_, 0});
    st.losses.push_back({w, t, loss_reason(self, dm.reason)});
    st.report("[" + st.cfg->protocol_name + "] worker " + std::to_string(w) + " lost: " +
                st.losses.back().reason,
              true);
  };
  if (st.live_[i] && st.stopping && is_failure(dm.reason))  // died while stopping: say so
    record_loss();
  if (st.live_[i] && !st.stopping) {
    st.live_[i] = false;
    st.waiting_[i] = false;
    st.pending_release_[i] = 0;
    st.promise_[i] = caf::typed_response_promise<proceed>{};
    record_loss();
    st.send_worker_weights();
    st.protocol_event([&] { st.cfg->proto->on_lost(st, w); });
  }
  st.live_[i] = false;
  maybe_finish(self);
}

void begin_stop(coordinator_ptr self, const std::string& reason) {
  auto& st = self->state;
  if (st.stopping)
    return;
  st.stopping = true;
  st.print_progress(reason);
  self->send(st.cfg->ps, stop_atom::value);  // no worker stays parked in a pull
  for (auto w : st.live_workers())
    st.release(w, false);
}

void maybe_finish(coordinator_ptr self) {
  auto& st = self->state;
  if (st.finishing || std::any_of(st.gone_.begin(), st.gone_.end(), [](bool g) { return !g; }))
    return;
  st.finishing = true;
  st.run_time = since(self, st.cfg->origin);
  self->send(st.cfg->ps, flush_atom::value);  // a partial BSP round is applied, not lost
  st.request_snapshot(true);
}

void on_eval(coordinator_ptr self, const eval_result& r) {
  auto& st = self->state;
  st.last_accuracy = r.accuracy;
  st.trace({r.final ? "final_eval" : "eval", -1, r.taken, r.taken, r.samples, r.version, r.accuracy});
  if (!r.final) {
    st.print_progress("eval");
    if (st.cfg->target_accuracy > 0 && r.accuracy >= st.cfg->target_accuracy && !st.target_reached) {
      st.target_reached = true;
      if (st.cfg->stop_at_target)
        begin_stop(self, "target");
    }
    return;
  }
  st.trace({"end", -1, st.run_time, st.run_time, st.samples_, r.version, 0});
  st.print_progress("done");
  auto fail = [=](caf::error& err) {  // the driver sees us go and reports why
    shut_down_everything(self);
    self->quit(std::move(err));
  };
  self->request(st.cfg->tracer, st.cfg->request_timeout, collect_atom::value)
    .then([=](std::vector<trace_event>& events) {
      auto& st = self->state;
      self->request(st.cfg->ps, st.cfg->request_timeout, final_atom::value)
        .then([=](weights& model) mutable {
          auto& st = self->state;
          self->send(st.cfg->driver, done_atom::value,
                     run_outcome{std::move(events), st.losses, std::move(model)});
          shut_down_everything(self);
          self->quit();
        }, fail);
    }, fail);
}

coordinator_actor::behavior_type coordinator(coordinator_ptr self,
                                             std::shared_ptr<coordinator_config> cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  auto n = static_cast<size_t>(st.cfg->workers);
  st.live_.assign(n, true);
  st.gone_.assign(n, false);
  st.clock_.assign(n, 0);
  st.waiting_.assign(n, true);  // every worker waits for its start
  st.promise_.assign(n, caf::typed_response_promise<proceed>{});
  st.waiting_since_.assign(n, 0);
  st.accepted_.assign(n, 0);
  st.batch_.assign(n, static_cast<uint32_t>(st.cfg->batch));
  st.pending_release_.assign(n, 0);
  st.next_eval = st.cfg->eval_every_samples;
  // Attached before anyone else knows the PS: from here on it takes control
  // messages from this coordinator only.
  self->send(st.cfg->ps, attach_atom::value, coordinator_actor{self}, std::vector<worker_actor>{});
  self->set_down_handler([=](caf::down_msg& dm) { on_down(self, dm); });
  return {
    [=](start_atom, std::vector<worker_actor>& workers, evaluator_actor& evaluator) {
      auto& st = self->state;
      if (st.started || workers.size() != st.live_.size())
        return;
      st.worker_handles = std::move(workers);
      // The job's members: only these workers may push to and pull from the PS.
      self->send(st.cfg->ps, attach_atom::value, coordinator_actor{self}, st.worker_handles);
      st.evaluator = std::move(evaluator);
      for (auto& w : st.worker_handles)
        self->monitor(w);
      if (st.cfg->ps)
        self->monitor(st.cfg->ps);
      if (st.evaluator)
        self->monitor(st.evaluator);
      if (st.cfg->tracer)
        self->monitor(st.cfg->tracer);
      st.send_worker_weights();
      if (st.cfg->max_time_s > 0)
        self->delayed_send(self, seconds(st.cfg->max_time_s), timeout_atom::value);
      st.started = true;
      st.protocol_event([&] { st.cfg->proto->on_start(st); });
    },
    [=](pushed_atom, const push_info& info) -> caf::result<proceed> {
      // The PS delegates a worker's push request here, so the sender is that
      // worker: nobody else may report a push, nor one in another's name.
      auto& st = self->state;
      if (!st.started || !st.valid(info.worker)
          || self->current_sender()
               != caf::actor_cast<caf::strong_actor_ptr>(st.worker_handles[coordinator_state::idx(info.worker)]))
        return make_error(sp_error::not_a_member, "the coordinator takes pushes of the job's workers only");
      auto rp = self->make_response_promise<proceed>();
      on_pushed(self, info, rp);
      return rp;
    },
    [=](eval_atom, const eval_result& r) {
      if (self->current_sender() == caf::actor_cast<caf::strong_actor_ptr>(self->state.evaluator))
        on_eval(self, r);
    },
    [=](timeout_atom) {
      if (self->current_sender() == self->ctrl())
        begin_stop(self, "time");
    },
    [=](timeout_atom, uint64_t id) {
      auto& st = self->state;
      auto i = st.timers_.find(id);
      if (self->current_sender() != self->ctrl() || i == st.timers_.end())
        return;
      auto e = i->second;
      st.timers_.erase(i);
      if (st.stopping)
        return;
      if (e.is_release) {
        if (st.valid(e.worker) && st.pending_release_[coordinator_state::idx(e.worker)] == id)
          st.protocol_event([&] { st.release(e.worker, e.pull); });
      } else {
        st.protocol_event([&] { st.cfg->proto->on_timer(st, e.tag); });
      }
    },
    [=](stop_atom, const std::string& reason) {
      if (self->current_sender() == caf::actor_cast<caf::strong_actor_ptr>(self->state.cfg->driver))
        begin_stop(self, reason);
    },
  };
}

}  // namespace

coordinator_actor spawn_coordinator(caf::actor_system& sys, std::shared_ptr<coordinator_config> cfg) {
  return sys.spawn(coordinator, std::move(cfg));
}

}  // namespace syncpoint
