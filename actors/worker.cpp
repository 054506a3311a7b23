// A worker: its trace, its request watchdog, its checkpoint (save and
// restore), how it is set up, and its behavior, a table of handlers. Its step
// is actors/worker_step.cpp's; its messages to the PS, actors/worker_exchange.cpp's.
#include "actors/worker_state.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

namespace syncpoint {

void trace(worker_ptr self, const char* kind, nanos t0, nanos t1, double value, const std::string& note) {
  auto& st = self->state;
  if (!st.cfg.tracer)
    return;
  trace_event ev{kind, st.cfg.id, t0, t1, st.iter, st.version, value, note};
  if (!st.batch_trace) {
    self->send(st.cfg.tracer, trace_atom::value, std::move(ev));
    return;
  }
  if (!st.send_due && std::strcmp(kind, "compute") != 0) {  // one timer at a time
    st.send_due = true;
    self->delayed_send(self, std::chrono::milliseconds(20), trace_atom::value);
  }
  st.held_events.push_back(std::move(ev));
  if (std::strcmp(kind, "compute") == 0 || st.held_events.size() >= 64)
    send_held_events(self);
}

void send_held_events(worker_ptr self) {
  auto& st = self->state;
  if (st.held_events.empty())
    return;
  self->send(st.cfg.tracer, trace_atom::value, std::move(st.held_events));
  st.held_events = {};
}

void leave(worker_ptr self, caf::error reason) {
  send_held_events(self);  // its last events go first
  self->quit(std::move(reason));
}

nanos now(worker_ptr self) {
  return since(self, self->state.cfg.origin);
}

void asked(worker_ptr self, const char* what) {
  auto& st = self->state;
  if (st.outstanding++ == 0) {
    st.asked_at = now(self);
    st.asked_for = what;
  }
}

void answered(worker_ptr self) {
  auto& st = self->state;
  if (st.outstanding > 0 && --st.outstanding > 0)
    st.asked_at = now(self);  // (never happens today) the other request's clock restarts
}

namespace {

// The request watchdog. A reply that never comes (a peer that hangs without
// dying, a protocol that never releases a worker) ends the worker after
// --request-timeout. One timer per period instead of CAF's per-request
// timeouts, which wake its clock thread when each request is sent and again
// when it is answered (3-8% of a 1-worker run, docs/performance.md).
std::optional<caf::timespan> request_limit(const worker_state& st) {
  const auto& d = st.cfg.request_timeout;
  if (!d.valid())
    return std::nullopt;
  caf::timestamp t{};  // CAF converts its duration only by adding it to a time point
  t += d;
  return t.time_since_epoch();
}

// Fires every period: ends the worker if a request has waited the limit,
// else checks again when the oldest one would reach it.
void watch(worker_ptr self) {
  auto& st = self->state;
  auto limit = request_limit(st);
  if (!limit)
    return;
  auto waited = st.outstanding > 0 ? caf::timespan{now(self) - st.asked_at} : caf::timespan{0};
  if (waited >= *limit) {
    char secs[96];
    std::snprintf(secs, sizeof secs, "%.3g s (--request-timeout %g s)", std::chrono::duration<double>(waited).count(),
                  std::chrono::duration<double>(*limit).count());
    leave(self, caf::make_error(caf::sec::request_timeout, "worker " + std::to_string(st.cfg.id) + ": its " +
                                                             st.asked_for + " had no reply in " + secs));
    return;
  }
  self->delayed_send(self, *limit - waited, timeout_atom::value);
}

}  // namespace

namespace {

saved_worker save(worker_state& st) {
  saved_worker s;
  s.id = st.cfg.id;
  s.iter = st.iter;
  s.version = st.version;
  s.grad_version = st.grad_version;
  s.batch = st.batch;
  auto ls = st.loop->save();
  s.data_position = ls.position;
  s.rng_state = std::move(ls.bytes);
  s.model = st.m->current_weights();
  s.grad = st.grad;
  s.loss = st.loss;
  s.compute_start = st.compute_start;
  s.push_sent = st.push_sent;
  s.ready_since = st.ready_since;
  s.pull_start = st.pull_start;
  s.compute_due = st.compute_due;
  s.rejected_in_a_row = st.rejected_in_a_row;
  s.computing = st.pipe.computing();
  s.ready = st.pipe.ready();
  s.in_flight = st.pipe.pushing();
  s.pulling = st.pipe.pulling();
  s.started = st.started;
  s.pull_min_version = st.pull_min_version;
  if (s.pulling && st.cfg.ps.sequenced() && st.pull_left < st.cfg.ps.size()) {
    s.slices_in = st.slice_in;
    s.pulled = *st.pulled;
    s.pulled_version = st.pull_version;
  }
  s.has_reply = st.reply.has_value();
  if (st.reply)
    s.reply = *st.reply;
  s.local = st.local;
  s.samples = st.samples;
  s.residual = st.residual;
  s.push_bytes = st.push_bytes;
  s.pull_bytes = st.pull_bytes;
  if (!st.widths.empty())
    save_rows(st, s);
  return s;
}

// A pull from K > 1 shards: the slices that had come, or none. Slices are
// only kept for the shards they were saved with; a resume with another K
// finds no transfers in flight (runtime/job/checkpointing.cpp refuses those),
// so a pull of it is either whole or not begun on every shard.
void restore_pull(worker_state& st, const saved_worker& s) {
  auto& ps = st.cfg.ps;
  if (!ps.sequenced() || !s.pulling)
    return;
  st.pulled = std::make_shared<std::vector<float>>(ps.model_size());
  st.slice_in.assign(ps.size(), false);
  st.pull_left = ps.size();
  st.pull_version = UINT64_MAX;
  if (s.slices_in.empty())
    return;
  if (s.slices_in.size() != ps.size() || s.pulled.size() != ps.model_size())
    throw std::invalid_argument("worker " + std::to_string(s.id) + ": the checkpoint holds a pull of " +
                                std::to_string(s.slices_in.size()) + " slices, the PS has " +
                                std::to_string(ps.size()) + " shards");
  *st.pulled = s.pulled;
  st.slice_in = s.slices_in;
  st.pull_left = static_cast<size_t>(std::count(s.slices_in.begin(), s.slices_in.end(), false));
  st.pull_version = s.pulled_version;
}

// Back to where `s` was: the same examples next, the same model, the same
// gradient in hand; a compute in progress ends by its timer, which the
// runner restores with the other timers. A push or pull waiting for its
// reply is asked for again on (resume_atom), once the PS knows the job's workers.
void restore(worker_ptr self, const saved_worker& s) {
  auto& st = self->state;
  st.loop->restore(loop_state{s.data_position, s.rng_state});
  if (s.model.size() != st.m->size())
    throw std::invalid_argument("worker " + std::to_string(s.id) + ": the checkpoint's model has " +
                                std::to_string(s.model.size()) + " values, not " + std::to_string(st.m->size()));
  st.m->load(s.model.data());
  st.iter = s.iter;
  st.version = s.version;
  st.grad_version = s.grad_version;
  st.batch = s.batch;
  st.grad = s.grad;
  st.loss = s.loss;
  st.samples = s.samples;
  st.compute_start = s.compute_start;
  st.push_sent = s.push_sent;
  st.ready_since = s.ready_since;
  st.pull_start = s.pull_start;
  st.compute_due = s.compute_due;
  st.rejected_in_a_row = s.rejected_in_a_row;
  st.pipe = worker_pipeline::restored(s.computing, s.ready, s.in_flight, s.pulling, s.id);
  st.started = s.started;
  st.pull_min_version = s.pull_min_version;
  restore_pull(st, s);
  if (s.has_reply)
    st.reply = s.reply;
  st.local = s.local;
  if (!s.residual.empty() && s.residual.size() != st.m->size() - st.m->buffers())
    throw std::invalid_argument("worker " + std::to_string(s.id) + ": the checkpoint's residual has " +
                                std::to_string(s.residual.size()) + " values, not " +
                                std::to_string(st.m->size() - st.m->buffers()));
  st.residual = s.residual;
  st.push_bytes = s.push_bytes;
  st.pull_bytes = s.pull_bytes;
  if (!st.widths.empty())
    restore_rows(st, s);
  if (st.pipe.computing() && !st.cfg.virtual_clock)  // (the virtual clock's runner restores timers itself)
    self->delayed_send(self, caf::timespan{std::max<nanos>(0, st.compute_due - now(self))}, computed_atom::value);
}

// The coordinator says the job is back: ask again for the reply the worker waited for.
void resume(worker_ptr self) {
  auto& st = self->state;
  st.pipe.resumed();
  ask_again(self);
}

// The worker's state from its config, its watches (its shards, an exit from
// outside) and, when resuming, its checkpoint.
void set_up(worker_ptr self, worker_config cfg) {
  auto& st = self->state;
  st.m = make_model(cfg.model, cfg.input);
  st.loop = find_loop(cfg.loop).make(loop_context{cfg.id, cfg.workers, cfg.seed, cfg.batch, cfg.train, cfg.input, cfg.loop_timeout_s});
  st.batch = cfg.batch;
  for (auto& t : st.m->tables())
    st.widths.push_back(t.width);
  st.cfg = std::move(cfg);
  // Without its PS a worker has nothing to do (on a node: the job ended or
  // never started): it goes instead of waiting for a start that will not come.
  if (st.cfg.ps && st.cfg.ps.replicas() == 0) {  // (a replicated shard's copies: the coordinator follows them)
    for (auto& shard : st.cfg.ps.shards)
      self->monitor(shard);
    self->set_down_handler([=](caf::down_msg& dm) {
      if (self->state.cfg.ps.has(dm.source))
        leave(self, dm.reason ? dm.reason : caf::error{caf::exit_reason::normal});
    });
  }
  // Ended from outside (a node leaving, a job ending or restarting): the
  // events it holds go first, as on its own quits.
  self->set_exit_handler([=](caf::exit_msg& msg) {
    if (msg.reason)
      leave(self, std::move(msg.reason));
  });
  self->attach_functor([proxies = st.own_proxies] {
    for (auto& p : *proxies)
      caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
  });
  st.born = now(self);
  st.batch_trace = !st.cfg.virtual_clock && st.cfg.tracer && st.cfg.tracer->node() != self->node();
  if (st.cfg.resume)
    restore(self, *st.cfg.resume);
}

// The coordinator's first proceed: the start of the run (later proceeds come
// as replies to pushes, never as messages). News of copies that came before it
// is taken now, in the order told.
void on_start(worker_ptr self, const proceed& p) {
  auto& st = self->state;
  if (st.started)
    return;
  st.started = true;
  st.coordinator = self->current_sender();
  for (auto& news : std::exchange(st.copies_before_start, {}))
    if (news.from == st.coordinator && news.lost)
      copy_lost(self, news.shard, news.copy, caf::actor_cast<ps_actor>(news.handle));
    else if (news.from == st.coordinator)
      copy_added(self, news.shard, news.copy, std::move(news.handle), news.bulk);
  auto t = now(self);
  trace(self, "wait", std::min(st.born, t), t);
  st.reply = p;
  advance(self);
}

// Resumed: the coordinator's word on copies comes from the one that resumed it.
void on_resume(worker_ptr self) {
  auto& st = self->state;
  if (!st.coordinator)
    st.coordinator = self->current_sender();
  if (st.pipe.awaiting_resume())
    resume(self);
}

// A copy of a shard lost, or one added; before the start, kept for it (it comes from the same coordinator).
void on_copy_news(worker_ptr self, uint32_t shard, uint32_t copy, caf::actor handle, std::string bulk, bool lost) {
  auto& st = self->state;
  if (!st.started && (!lost || !st.coordinator))
    st.copies_before_start.push_back({self->current_sender(), shard, copy, std::move(handle), std::move(bulk), lost});
  else if (lost && st.coordinator && self->current_sender() == st.coordinator)
    copy_lost(self, shard, copy, caf::actor_cast<ps_actor>(handle));
  else if (!lost && self->current_sender() == st.coordinator)
    copy_added(self, shard, copy, std::move(handle), bulk);
}

// A table: each message to the handler that takes it.
worker_actor::behavior_type worker(worker_ptr self, worker_config cfg) {
  set_up(self, std::move(cfg));
  watch(self);
  return {
    [=](const proceed& p) { on_start(self, p); },
    [=](computed_atom) {
      if (self->current_sender() == self->ctrl() && self->state.pipe.computing())
        computed(self);
    },
    [=](timeout_atom) {
      if (self->current_sender() == self->ctrl())
        watch(self);
    },
    [=](trace_atom) {
      if (self->current_sender() == self->ctrl()) {
        self->state.send_due = false;
        send_held_events(self);
      }
    },
    [=](save_atom) { return save(self->state); },
    [=](resume_atom) { on_resume(self); },
    [=](replica_atom, uint32_t shard, uint32_t copy, caf::actor primary) {
      on_copy_news(self, shard, copy, std::move(primary), {}, true);
    },
    [=](copy_atom, uint32_t shard, uint32_t copy, caf::actor& handle, std::string& bulk) {
      on_copy_news(self, shard, copy, std::move(handle), std::move(bulk), false);
      return true;
    },
  };
}

}  // namespace

worker_actor spawn_worker(caf::actor_system& sys, worker_config cfg) {
  return sys.spawn(worker, std::move(cfg));
}

}  // namespace syncpoint
