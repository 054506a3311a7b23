#include "actors/coordinator_state.hpp"

#include "actors/parameter_server.hpp"
#include "protocols/protocol_state.hpp"

#include <stdexcept>

namespace syncpoint {

saved_coordinator save(coordinator_state& st) {
  saved_coordinator s;
  for (auto& w : st.slots_) {
    s.live.push_back(w.live);
    s.gone.push_back(w.gone);
    s.waiting.push_back(w.waiting);
    s.held.push_back(w.promise.pending() || w.held_for_resume);
    s.has_deferred.push_back(w.deferred.has_value());
    s.deferred.push_back(w.deferred.value_or(proceed{}));
    s.clock.push_back(w.clock);
    s.waiting_since.push_back(w.waiting_since);
    s.pending_release.push_back(w.pending_release);
    s.accepted.push_back(w.accepted);
    s.batch.push_back(w.batch);
  }
  for (auto& [id, e] : st.timers_)
    s.timers.push_back({id, e.is_release, e.worker, e.pull, e.tag, e.due});
  s.next_timer = st.next_timer_;
  s.version = st.version_;
  s.published_version = st.published_version_;
  s.samples = st.samples_;
  s.next_eval = st.next_eval;
  s.event = st.event;
  s.mode = static_cast<uint8_t>(st.mode_);
  s.local_step = st.local_step_;
  s.overlap = st.overlap_;
  s.target_reached = st.target_reached;
  s.last_accuracy = st.last_accuracy;
  s.next_tick = st.next_tick;
  s.max_time_s = st.cfg->max_time_s;
  s.losses = st.losses;
  s.protocol_state = save_protocol_state(*st.cfg->proto, st.cfg->protocol_name);
  for (auto& [key, p] : st.partial_pushes)
    s.partial.push_back({p.info, p.reports, p.lead_in});
  s.buffered = st.buffered_;
  s.rejected = st.rejected_;
  return s;
}

void restore(coordinator_state& st, const saved_coordinator& s) {
  auto n = st.slots_.size();
  for (auto size : {s.live.size(), s.gone.size(), s.waiting.size(), s.held.size(), s.has_deferred.size(),
                    s.deferred.size(), s.clock.size(),
                    s.waiting_since.size(), s.pending_release.size(), s.accepted.size(), s.batch.size()})
    if (size != n)
      throw std::invalid_argument("the checkpoint's coordinator has " + std::to_string(size) +
                                  " workers, the job " + std::to_string(n));
  for (size_t i = 0; i < n; ++i) {
    auto& w = st.slots_[i];
    w.live = s.live[i];
    w.gone = s.gone[i];
    w.waiting = s.waiting[i];
    w.held_for_resume = s.held[i];
    w.deferred = s.has_deferred[i] ? std::optional<proceed>(s.deferred[i]) : std::nullopt;
    w.clock = s.clock[i];
    w.waiting_since = s.waiting_since[i];
    w.pending_release = s.pending_release[i];
    w.accepted = s.accepted[i];
    w.batch = s.batch[i];
  }
  st.recount();
  st.timers_.clear();
  for (auto& t : s.timers)
    st.timers_[t.id] = {t.is_release, t.worker, t.pull, t.tag, t.due};
  st.next_timer_ = s.next_timer;
  st.version_ = s.version;
  st.published_version_ = s.published_version;
  st.samples_ = s.samples;
  st.next_eval = s.next_eval;
  st.event = s.event;
  st.mode_ = static_cast<ps_mode>(s.mode);
  st.local_step_ = s.local_step;
  st.overlap_ = s.overlap;
  st.target_reached = s.target_reached;
  st.last_accuracy = s.last_accuracy;
  st.next_tick = s.next_tick;
  st.losses = s.losses;
  load_protocol_state(*st.cfg->proto, st.cfg->protocol_name, s.protocol_state);
  st.partial_pushes.clear();
  if (!s.partial.empty() && st.cfg->ps.size() <= 1)
    throw std::invalid_argument("the checkpoint holds pushes some shards of its PS had and others not: resume it "
                                "with the shards it was taken with");
  for (auto& p : s.partial) {  // the lead's reply: the worker asks for it again
    auto& e = st.partial_pushes[{p.info.worker, p.info.iter}];
    e.info = p.info;
    e.reports = p.reports;
    e.lead_in = p.lead_in;
  }
  st.buffered_ = s.buffered;
  st.rejected_ = s.rejected;
  st.resumed = true;
}

// -- the real clock's checkpoints ---------------------------------------------

void begin_checkpoint(coordinator_ptr self) {
  auto& st = self->state;
  if (st.holding() && st.checkpoint_asked_)
    st.tick_missed_ = true;  // the asked one stands for it; the period goes on after it
  if (st.phase_ != coordinator_phase::running)
    return;
  st.move_to(coordinator_phase::freezing);
  checkpoint_if_still(self);
}

void checkpoint_asked(coordinator_ptr self, const std::string& why) {
  auto& st = self->state;
  auto no = [&](const char* reason) {
    st.report("[" + st.cfg->protocol_name + "] no checkpoint on request (" + why + "): " + reason, true);
  };
  if (!st.cfg->on_checkpoint)
    return no("the job has no checkpoint folder on the real clock (--checkpoint-dir)");
  if (st.holding())
    return;  // one is being taken: it is the one asked for
  if (st.phase_ != coordinator_phase::running)
    return no(st.started() ? "the run is ending" : "the run has not started");
  st.report("[" + st.cfg->protocol_name + "] checkpoint on request (" + why + ")", true);
  st.checkpoint_asked_ = true;
  st.tick_missed_ = false;
  begin_checkpoint(self);
}

namespace {

// Everyone may go on; the next checkpoint is due a period from now.
void resume_run(coordinator_ptr self) {
  auto& st = self->state;
  if (st.phase_ != coordinator_phase::collecting)
    return;  // stopped meanwhile: the checkpoint was given up
  st.move_to(coordinator_phase::running);
  st.deliver_deferred();
  bool periodic = !st.checkpoint_asked_ || st.tick_missed_;  // an asked one leaves the period's tick in flight
  st.checkpoint_asked_ = st.tick_missed_ = false;
  if (periodic && st.cfg->checkpoint_every_s > 0)
    self->delayed_send(self, seconds(st.cfg->checkpoint_every_s), checkpoint_atom::value);
}

}  // namespace

void checkpoint_if_still(coordinator_ptr self) {
  auto& st = self->state;
  if (st.phase_ != coordinator_phase::freezing || st.evals_pending > 0)
    return;
  for (size_t i = 0; i < st.slots_.size(); ++i)
    if (st.slots_[i].live && !st.slots_[i].promise.pending())
      return;  // computing, pushing or pulling: not at rest yet
  st.move_to(coordinator_phase::collecting);
  auto cp = std::make_shared<checkpoint_state>();
  try {
    cp->coordinator = save(st);
  } catch (const std::exception& e) {
    st.report("[" + st.cfg->protocol_name + "] no checkpoint: " + e.what(), true);
    resume_run(self);
    return;
  }
  cp->time_ns = since(self, st.cfg->origin);
  cp->samples = st.samples_;
  cp->workers.resize(st.slots_.size());
  for (size_t i = 0; i < cp->workers.size(); ++i)
    cp->workers[i].id = static_cast<worker_id>(i);
  // Everyone is at rest: ask each for its state, then write, then go on.
  auto& ps = st.cfg->ps;
  auto pending = std::make_shared<size_t>(1 + ps.size());
  auto parts = std::make_shared<std::vector<saved_ps>>(ps.size());
  auto failed = std::make_shared<bool>(false);
  auto one_more = [=] {
    if (*failed || --*pending > 0)
      return;
    auto& st = self->state;
    try {
      cp->ps = merge_shards(std::move(*parts), st.cfg->ps.bounds);
      st.report(st.cfg->on_checkpoint(*cp));
    } catch (const std::exception& e) {
      st.report("[" + st.cfg->protocol_name + "] checkpoint not written: " + e.what(), true);
    }
    resume_run(self);
  };
  auto fail = [=](caf::error& e) {
    if (*failed)
      return;
    *failed = true;
    self->state.report("[" + self->state.cfg->protocol_name + "] no checkpoint: " + self->system().render(e), true);
    resume_run(self);
  };
  auto timeout = st.cfg->request_timeout;
  for (size_t k = 0; k < ps.size(); ++k)
    self->request(ps.shards[k], timeout, save_atom::value).then([=](saved_ps& s) {
      (*parts)[k] = std::move(s);
      one_more();
    }, fail);
  // The tracer last. A worker's trace events travel on CAF, but its pushes
  // may not (a remote shard's bulk channel), so a push counted here can
  // overtake the event of the computation behind it. A worker's save reply
  // follows its events on the same connection: once every reply is in, so is
  // every event the checkpoint's samples stand for.
  auto ask_tracer = [=] {
    self->request(self->state.cfg->tracer, timeout, save_atom::value).then([=](std::vector<trace_event>& t) {
      cp->trace = std::move(t);
      one_more();
    }, fail);
  };
  auto workers_left = std::make_shared<size_t>(0);
  for (size_t i = 0; i < st.slots_.size(); ++i)
    if (!st.slots_[i].gone) {
      ++*pending;
      ++*workers_left;
      self->request(st.slots_[i].handle, timeout, save_atom::value).then([=](saved_worker& s) {
        cp->workers[i] = std::move(s);
        one_more();
        if (--*workers_left == 0)
          ask_tracer();
      }, fail);
    }
  if (*workers_left == 0)
    ask_tracer();
}

}  // namespace syncpoint
