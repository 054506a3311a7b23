#include "actors/coordinator_state.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

namespace syncpoint {


void on_pushed(coordinator_ptr self, const push_info& info, caf::typed_response_promise<proceed> rp) {
  auto& st = self->state;
  busy_timer busy(st);
  ++st.pushes_handled;
  if (!st.live(info.worker)) {  // a late push from a worker declared lost
    rp.deliver(proceed{true, false, 0, 0, info.accepted});
    return;
  }
  auto i = coordinator_state::idx(info.worker);
  st.set_clock(i, st.slots_[i].clock + 1);
  st.samples_ += info.samples;
  st.slots_[i].samples += info.samples;
  st.version_ = std::max(st.version_, info.version);
  st.set_waiting(i, true);
  st.slots_[i].promise = std::move(rp);
  st.slots_[i].waiting_since = st.event + 1;
  st.slots_[i].accepted = info.accepted;
  if (!st.ending() && st.cfg->sample_budget > 0 && st.samples_ >= st.cfg->sample_budget)
    begin_stop(self, "budget");
  if (st.ending())
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
  checkpoint_if_still(self);
}

namespace {


// The model from every shard, as one, to `then` (or an error to `fail`).
template <class Then, class Fail>
void gather_model(coordinator_ptr self, Then then, Fail fail) {
  auto& st = self->state;
  auto& ps = st.cfg->ps;
  if (ps.size() == 1) {
    self->request(ps.lead(), st.cfg->request_timeout, final_atom::value).then(then, fail);
    return;
  }
  auto whole = std::make_shared<std::vector<float>>(ps.model_size());
  auto version = std::make_shared<uint64_t>(UINT64_MAX);
  auto left = std::make_shared<size_t>(ps.size());
  auto failed = std::make_shared<bool>(false);
  for (size_t k = 0; k < ps.size(); ++k) {
    auto begin = ps.begin(k), end = ps.end(k);
    self->request(ps.shards[k], st.cfg->request_timeout, final_atom::value)
      .then(
        [=](weights& part) mutable {
          if (*failed)
            return;
          // Every shard applied the same pushes: one version, or the sequence broke.
          caf::error err;
          if (part.values.size() != end - begin)
            err = make_error(sp_error::wrong_size, "a shard's final model has the wrong size");
          else if (*version != UINT64_MAX && part.version != *version)
            err = make_error(sp_error::bad_input, "shard " + std::to_string(k) + " ends at version " +
                                                    std::to_string(part.version) + ", another shard at " +
                                                    std::to_string(*version) + ": the shards were out of step");
          if (err) {
            *failed = true;
            fail(err);
            return;
          }
          std::copy(part.values.data(), part.values.data() + part.values.size(), whole->data() + begin);
          *version = part.version;
          if (--*left == 0) {
            weights w{*version, shared_floats(std::shared_ptr<const std::vector<float>>(whole))};
            then(w);
          }
        },
        [=](caf::error& err) mutable {
          if (!*failed) {
            *failed = true;
            fail(err);
          }
        });
  }
}

void shut_down_everything(coordinator_ptr self) {
  auto& st = self->state;
  for (auto& shard : st.cfg->ps.shards)
    self->send_exit(shard, caf::exit_reason::user_shutdown);
  self->send_exit(st.evaluator, caf::exit_reason::user_shutdown);
  self->send_exit(st.cfg->tracer, caf::exit_reason::user_shutdown);
  for (auto& s : st.slots_)
    self->send_exit(s.handle, caf::exit_reason::user_shutdown);
}

}  // namespace

void fail_run(coordinator_ptr self, caf::error why) {
  auto& st = self->state;
  st.tell_observers(run_ended{"failed: " + self->system().render(why)});
  st.observers.clear();
  shut_down_everything(self);
  self->quit(std::move(why));
}

void maybe_finish(coordinator_ptr self) {
  auto& st = self->state;
  if (st.phase_ == coordinator_phase::finishing ||
      std::any_of(st.slots_.begin(), st.slots_.end(), [](const worker_slot& s) { return !s.gone; }))
    return;
  st.move_to(coordinator_phase::finishing);
  st.run_time = since(self, st.cfg->origin);
  st.to_shards(flush_atom::value);  // a partial BSP round is applied, not lost
  st.round_flushed();
  st.request_snapshot(true);
}

void begin_stop(coordinator_ptr self, const std::string& reason) {
  auto& st = self->state;
  if (st.ending())  // stopping already, or the run ends on its own
    return;
  st.move_to(coordinator_phase::stopping);
  st.end_reason = reason;
  st.deliver_deferred();  // a checkpoint in the making is given up
  st.print_progress(reason);
  st.to_shards(stop_atom::value);  // no worker stays parked in a pull
  for (auto w : st.live_workers())
    st.release(w, false);
}

namespace {

void on_eval(coordinator_ptr self, const eval_result& r) {
  auto& st = self->state;
  if (st.evals_pending > 0)
    --st.evals_pending;
  st.last_accuracy = r.accuracy;
  if (r.accuracy < 0 && !r.metrics.empty()) {  // the first of the loop's measures stands in the progress line
    char text[96];
    std::snprintf(text, sizeof text, "%.40s=%.4g", r.metrics.front().name.c_str(), r.metrics.front().value);
    st.last_measure = text;
  }
  st.trace({r.final ? "final_eval" : "eval", -1, r.taken, r.taken, r.samples, r.version, r.accuracy});
  for (auto& m : r.metrics)  // the accuracy is the eval event's own
    if (m.name != "accuracy")
      st.trace({"metric", -1, r.taken, r.taken, r.samples, r.version, m.value, m.name});
  st.tell_followers(eval_atom::value, r);
  if (!r.final) {
    st.print_progress("eval");
    checkpoint_if_still(self);
    if (st.cfg->target_accuracy > 0 && r.accuracy >= st.cfg->target_accuracy && !st.target_reached) {
      st.target_reached = true;
      if (st.cfg->stop_at_target)
        begin_stop(self, "target");
    }
    return;
  }
  st.trace({"end", -1, st.run_time, st.run_time, st.samples_, r.version, 0});
  st.print_progress("done");
  auto fail = [=](caf::error& err) { fail_run(self, std::move(err)); };
  self->request(st.cfg->tracer, st.cfg->request_timeout, collect_atom::value)
    .then([=](std::vector<trace_event>& trace) {
      // Held once (the model's gathering copies its handler per shard): a
      // trace of 10^6 events is 100 MB.
      auto events = std::make_shared<std::vector<trace_event>>(std::move(trace));
      gather_model(self, [=](weights& model) mutable {
          auto& st = self->state;
          st.tell_observers(run_ended{st.end_reason});
          self->send(st.cfg->driver, done_atom::value,
                     run_outcome{std::move(*events), st.losses, std::move(model),
                                 std::chrono::duration<double>(st.busy).count(), st.pushes_handled, st.end_reason,
                                 st.worker_samples()});
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
  worker_slot fresh;  // live, waiting for its start
  fresh.batch = static_cast<uint32_t>(st.cfg->batch);
  st.slots_.assign(n, fresh);
  st.next_eval = st.cfg->eval_every_samples;
  st.recount();
  std::optional<double> saved_cap;
  if (st.cfg->resume) {
    restore(st, *st.cfg->resume);
    saved_cap = st.cfg->resume->max_time_s;
  }
  // Attached before anyone else knows the PS: from here on it takes control
  // messages from this coordinator only.
  st.to_shards(attach_atom::value, coordinator_actor{self}, std::vector<worker_actor>{});
  self->set_down_handler([=](caf::down_msg& dm) { on_down(self, dm); });
  return {
    [=](start_atom, std::vector<worker_actor>& workers, evaluator_actor& evaluator) {
      auto& st = self->state;
      if (st.started() || workers.size() != st.slots_.size())
        return;
      for (size_t i = 0; i < workers.size(); ++i)
        st.slots_[i].handle = std::move(workers[i]);
      // The job's members: only these workers may push to and pull from the PS.
      st.to_shards(attach_atom::value, coordinator_actor{self}, st.handles());
      st.evaluator = std::move(evaluator);
      std::vector<size_t> missing;  // resumed without a worker: its node went with a shard
      for (size_t i = 0; i < st.slots_.size(); ++i)
        if (!st.slots_[i].handle && st.resumed && st.slots_[i].live && !st.slots_[i].gone) {
          missing.push_back(i);
        } else if (!st.slots_[i].handle) {  // vacant: an elastic job short of slots
          st.set_live(i, false);
          st.set_waiting(i, false);
          st.slots_[i].gone = true;
        } else if (!st.slots_[i].gone) {
          self->monitor(st.slots_[i].handle);
        }
      for (auto& shard : st.cfg->ps.shards)
        self->monitor(shard);
      if (st.evaluator)
        self->monitor(st.evaluator);
      if (st.cfg->tracer)
        self->monitor(st.cfg->tracer);
      greet_observers(self);
      st.move_to(coordinator_phase::running);
      if (st.stop_before_start_) {  // stopped before it started: every worker is told to stop at once
        begin_stop(self, *st.stop_before_start_);
        return;
      }
      if (st.resumed) {
        // The PS has its weights, the protocol its state, pending timers
        // come back with the checkpoint's; only a time cap that changed is new.
        if (st.cfg->max_time_s > 0 && (st.cfg->max_time_s != saved_cap || st.cfg->own_timers))
          self->delayed_send(self, st.until(st.cfg->max_time_s), timeout_atom::value);
        if (st.cfg->own_timers)  // the real clock: the runner does not restore them
          for (auto& [id, e] : st.timers_)
            self->delayed_send(self, st.until(to_seconds(e.due)), timeout_atom::value, id);
        if (st.cfg->checkpoint_every_s > 0)
          self->delayed_send(self, seconds(st.cfg->checkpoint_every_s), checkpoint_atom::value);
        for (size_t i = 0; i < st.slots_.size(); ++i)  // after the attach: the PS knows them
          if (!st.slots_[i].gone && st.slots_[i].handle)
            self->send(st.slots_[i].handle, resume_atom::value);
        for (auto i : missing)  // they leave as a lost node's workers do
          lose_worker(self, i, caf::exit_reason::remote_link_unreachable);
        return;
      }
      st.send_worker_weights();
      if (st.cfg->max_time_s > 0)
        self->delayed_send(self, seconds(st.cfg->max_time_s), timeout_atom::value);
      if (st.cfg->checkpoint_every_s > 0)
        self->delayed_send(self, seconds(st.cfg->checkpoint_every_s), checkpoint_atom::value);
      st.protocol_event([&] { st.cfg->proto->on_start(st); });
    },
    [=](pushed_atom, const push_info& info) -> caf::result<proceed> {
      // The PS delegates a worker's push request here, so the sender is that
      // worker: nobody else may report a push, nor one in another's name;
      // but the lead shard asks itself for a push that came on the bulk
      // channel, whose worker it knew by its key (runtime/cluster/transport/data_plane.hpp).
      auto& st = self->state;
      auto from = self->current_sender();
      if (!st.started() || !st.valid(info.worker)
          || (from != caf::actor_cast<caf::strong_actor_ptr>(st.slots_[coordinator_state::idx(info.worker)].handle)
              && from != caf::actor_cast<caf::strong_actor_ptr>(st.cfg->ps.lead())))
        return make_error(sp_error::not_a_member, "the coordinator takes pushes of the job's workers only");
      auto rp = self->make_response_promise<proceed>();
      shard_reported(self, info, 0, rp);
      return rp;
    },
    [=](pushed_atom, const push_info& info, uint32_t shard) {
      auto& st = self->state;
      auto from = caf::actor_cast<caf::actor_addr>(self->current_sender());
      if (!st.started() || !st.valid(info.worker) || shard == 0 || shard >= st.cfg->ps.size()
          || from != caf::actor_cast<caf::actor_addr>(st.cfg->ps.shards[shard]))
        return;  // only a shard reports its own slices
      shard_reported(self, info, shard, {});
    },
    [=](pushed_atom, resume_atom, worker_id w) -> caf::result<proceed> {
      // A resumed worker asks again for the reply to the push it was held on.
      auto& st = self->state;
      auto i = coordinator_state::idx(w);
      if (!st.started() || !st.valid(w)
          || self->current_sender() != caf::actor_cast<caf::strong_actor_ptr>(st.slots_[i].handle))
        return make_error(sp_error::not_a_member, "the coordinator takes pushes of the job's workers only");
      if (!st.slots_[i].held_for_resume) {
        // Its push was reported by some shards when the checkpoint was taken, the lead's among them.
        for (auto& [key, p] : st.partial_pushes)
          if (key.first == w && p.lead_in && !p.reply.pending()) {
            p.reply = self->make_response_promise<proceed>();
            return p.reply;
          }
        return make_error(sp_error::bad_input, "worker " + std::to_string(w) + " has no held push to resume");
      }
      st.slots_[i].held_for_resume = false;
      st.slots_[i].promise = self->make_response_promise<proceed>();
      auto rp = st.slots_[i].promise;
      if (auto p = st.slots_[i].deferred) {  // released while it was away
        st.slots_[i].deferred.reset();
        st.slots_[i].promise = caf::typed_response_promise<proceed>{};
        st.answer(rp, i, *p);
        st.flush_ops();
      }
      return rp;
    },
    [=](save_atom) -> caf::result<saved_coordinator> {
      auto& st = self->state;
      if (!st.started() || st.ending())
        return make_error(sp_error::not_now, "the run is starting or ending: no checkpoint now");
      try {
        return save(st);
      } catch (const std::exception& e) {  // a protocol without checkpoint support
        return make_error(sp_error::bad_input, e.what());
      }
    },
    [=](eval_atom, const eval_result& r) {
      if (self->current_sender() == caf::actor_cast<caf::strong_actor_ptr>(self->state.evaluator))
        on_eval(self, r);
    },
    [=](timeout_atom) {
      // A resumed run may have moved its cap: a timer for the old one is void.
      auto& st = self->state;
      if (self->current_sender() == self->ctrl() && st.cfg->max_time_s > 0
          && st.now() >= st.cfg->max_time_s - 1e-6)
        begin_stop(self, "time");
    },
    [=](timeout_atom, uint64_t id) {
      auto& st = self->state;
      auto i = st.timers_.find(id);
      if (self->current_sender() != self->ctrl() || i == st.timers_.end())
        return;
      busy_timer busy(st);
      auto e = i->second;
      st.timers_.erase(i);
      if (st.ending())
        return;
      if (e.is_release) {
        if (st.valid(e.worker) && st.slots_[coordinator_state::idx(e.worker)].pending_release == id)
          st.protocol_event([&] { st.release(e.worker, e.pull); });
      } else {
        st.protocol_event([&] { st.cfg->proto->on_timer(st, e.tag); });
      }
    },
    [=](join_atom, worker_id w, worker_actor& handle, const std::string& where) {
      if (self->current_sender() == caf::actor_cast<caf::strong_actor_ptr>(self->state.cfg->driver))
        on_join(self, w, std::move(handle), where);
    },
    [=](checkpoint_atom) {
      if (self->current_sender() == self->ctrl())
        begin_checkpoint(self);
    },
    [=](const stop_request& stop) {
      auto& st = self->state;  // once the run ends on its own, a stop changes nothing
      if (!from_driver_or_observer(self) || st.phase_ == coordinator_phase::finishing)
        return;
      if (st.started())
        begin_stop(self, stop.why);
      else if (!st.stop_before_start_)
        st.stop_before_start_ = stop.why;
    },
    [=](eval_request) { observer_asks_eval(self); },
    [=](const checkpoint_request& r) {
      if (from_driver_or_observer(self))
        checkpoint_asked(self, r.why);
    },
    [=](const mark_request& m) { observer_marks(self, m.note, m.value); },
    [=](counts_request) { return counts_of(self); },
  };
}

}  // namespace

coordinator_actor spawn_coordinator(caf::actor_system& sys, std::shared_ptr<coordinator_config> cfg) {
  return sys.spawn(coordinator, std::move(cfg));
}

}  // namespace syncpoint
