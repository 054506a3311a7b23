#include "actors/coordinator_state.hpp"

#include "actors/parameter_server.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

namespace syncpoint {


void on_pushed(coordinator_ptr self, const push_info& info, push_reply rp) {
  auto& st = self->state;
  busy_timer busy(st);
  ++st.pushes_handled;
  if (!st.live(info.worker)) {  // a late push from a worker declared lost
    rp.deliver(proceed{true, false, 0, 0, info.accepted});
    return;
  }
  auto i = coordinator_state::idx(info.worker);
  st.workers.tick(i);
  st.run.samples += info.samples;
  st.workers[i].samples += info.samples;
  st.ps.reported_version(info.version);
  st.workers.pushed(i, std::move(rp), st.event + 1, info.accepted, info.iter);
  if (!st.phase.ending() && st.cfg->sample_budget > 0 && st.run.samples >= st.cfg->sample_budget)
    begin_stop(self, "budget");
  if (st.phase.ending())
    st.release(info.worker, false);
  else
    st.protocol_event([&] { st.cfg->proto->on_push(st.view, info.worker); });
  if (st.cfg->on_progress && st.run_fraction() >= st.run.next_tick) {  // a bar moves every 1%, no line
    auto f = st.run_fraction();
    st.run.next_tick = (std::floor(f * 100) + 1) / 100;
    st.cfg->on_progress(progress_report{"", st.run.samples, std::min(f, 1.0), st.run.last_accuracy, false});
  }
  // After the protocol: a commit it sent reaches the PS before this request.
  if (st.cfg->eval_every_samples > 0 && st.run.samples >= st.run.next_eval) {
    while (st.run.next_eval <= st.run.samples)
      st.run.next_eval += st.cfg->eval_every_samples;
    st.request_snapshot(false);
  }
  act_if_still(self);
}

namespace {

void shut_down_everything(coordinator_ptr self) {
  auto& st = self->state;
  for (auto& shard : st.cfg->ps.all_members())
    self->send_exit(shard, caf::exit_reason::user_shutdown);
  self->send_exit(st.evaluator, caf::exit_reason::user_shutdown);
  self->send_exit(st.cfg->tracer, caf::exit_reason::user_shutdown);
  for (auto& s : st.workers.slots())
    self->send_exit(s.handle, caf::exit_reason::user_shutdown);
  if (st.cfg->own_placer)
    self->send_exit(st.cfg->placer, caf::exit_reason::user_shutdown);
}

}  // namespace

void fail_run(coordinator_ptr self, caf::error why) {
  auto& st = self->state;
  st.finals_asked.clear();  // what waits on them is not done instead: the run ends here
  st.tell_observers(run_ended{"failed: " + self->system().render(why)});
  st.observers.clear();
  shut_down_everything(self);
  self->quit(std::move(why));
}

void maybe_finish(coordinator_ptr self) {
  auto& st = self->state;
  if (st.phase.is(coordinator_phase::finishing) || !st.workers.everyone_gone())
    return;
  st.phase.finish();
  st.run.run_time = since(self, st.cfg->origin);
  st.to_shards(flush_atom::value);  // a partial BSP round is applied, not lost
  st.ps.round_flushed();
  st.request_snapshot(true);
}

void begin_stop(coordinator_ptr self, const std::string& reason) {
  auto& st = self->state;
  if (st.phase.ending())  // stopping already, or the run ends on its own
    return;
  st.phase.stop();
  st.run.end_reason = reason;
  st.deliver_deferred();  // a checkpoint in the making is given up
  st.print_progress(reason);
  st.to_shards(stop_atom::value);  // no worker stays parked in a pull
  for (auto w : st.workers.live_workers())
    st.release(w, false);
}

namespace {

void on_eval(coordinator_ptr self, const eval_result& r) {
  auto& st = self->state;
  auto& run = st.run;
  if (!run.evals_pending.empty())
    run.evals_pending.pop_front();
  run.last_accuracy = r.accuracy;
  if (r.accuracy < 0 && !r.metrics.empty()) {  // the first of the loop's measures stands in the progress line
    char text[96];
    std::snprintf(text, sizeof text, "%.40s=%.4g", r.metrics.front().name.c_str(), r.metrics.front().value);
    run.last_measure = text;
  }
  st.trace({r.final ? "final_eval" : "eval", -1, r.taken, r.taken, r.samples, r.version, r.accuracy});
  for (auto& m : r.metrics)  // the accuracy is the eval event's own
    if (m.name != "accuracy")
      st.trace({"metric", -1, r.taken, r.taken, r.samples, r.version, m.value, m.name});
  st.tell_followers(eval_atom::value, r);
  if (!r.final) {
    st.print_progress("eval");
    act_if_still(self);
    if (st.cfg->target_accuracy > 0 && r.accuracy >= st.cfg->target_accuracy && !run.target_reached) {
      run.target_reached = true;
      if (st.cfg->stop_at_target)
        begin_stop(self, "target");
    }
    return;
  }
  st.trace({"end", -1, run.run_time, run.run_time, run.samples, r.version, 0});
  st.print_progress("done");
  auto fail = [=](caf::error& err) { fail_run(self, std::move(err)); };
  self->request(st.cfg->tracer, st.cfg->request_timeout, collect_atom::value)
    .then([=](std::vector<trace_event>& trace) {
      // Held once (the model's gathering copies its handler per shard): a
      // trace of 10^6 events is 100 MB.
      auto events = std::make_shared<std::vector<trace_event>>(std::move(trace));
      check_copies(self, [=] { gather_model(self, [=](weights& model) mutable {
          auto& st = self->state;
          st.tell_observers(run_ended{st.run.end_reason});
          self->send(st.cfg->driver, done_atom::value,
                     run_outcome{std::move(*events), st.losses, std::move(model),
                                 std::chrono::duration<double>(st.busy).count(), st.pushes_handled, st.run.end_reason,
                                 st.workers.samples()});
          shut_down_everything(self);
          self->quit();
        }, fail); }, fail);
    }, fail);
}

// -- the start, in its steps ----------------------------------------------------

// The job's workers take their places; those without a handle are vacant
// (an elastic job short of slots), or, resumed, missing: their node went
// with a shard, and they leave as a lost node's workers do (returned).
std::vector<size_t> take_places(coordinator_ptr self, std::vector<worker_actor>& handles, bool resumed) {
  auto& st = self->state;
  for (size_t i = 0; i < handles.size(); ++i)
    st.workers[i].handle = std::move(handles[i]);
  // The job's members: only these workers may push to and pull from the PS.
  st.to_shards(attach_atom::value, coordinator_actor{self}, st.workers.handles());
  std::vector<size_t> missing;
  for (size_t i = 0; i < st.workers.size(); ++i) {
    auto& slot = st.workers[i];
    if (!slot.handle && resumed && slot.live())
      missing.push_back(i);
    else if (!slot.handle)
      st.workers.lost(i);
    else if (slot.live())
      self->monitor(slot.handle);
  }
  return missing;
}

// Whatever the run cannot go on without: the PS's shards, the evaluator, the tracer.
void monitor_the_run(coordinator_ptr self) {
  auto& st = self->state;
  for (auto& shard : st.cfg->ps.all_members())
    self->monitor(shard);
  if (st.evaluator)
    self->monitor(st.evaluator);
  if (st.cfg->tracer)
    self->monitor(st.cfg->tracer);
}

// Resumed: the PS has its weights, the protocol its state, pending timers
// come back with the checkpoint's; only a time cap that changed is new. The
// workers ask again for the replies they waited for.
void resume_where_saved(coordinator_ptr self, const std::vector<size_t>& missing, std::optional<double> saved_cap) {
  auto& st = self->state;
  if (st.cfg->max_time_s > 0 && (st.cfg->max_time_s != saved_cap || st.cfg->own_timers))
    self->delayed_send(self, st.until(st.cfg->max_time_s), timeout_atom::value);
  if (st.cfg->own_timers)  // the real clock: the runner does not restore them
    for (auto& [id, e] : st.timers.pending())
      self->delayed_send(self, st.until(to_seconds(e.due)), timeout_atom::value, id);
  if (st.cfg->checkpoint_every_s > 0)
    self->delayed_send(self, seconds(st.cfg->checkpoint_every_s), checkpoint_atom::value);
  for (auto& slot : st.workers.slots())  // after the attach: the PS knows them
    if (slot.live() && slot.handle)
      self->send(slot.handle, resume_atom::value);
  for (auto i : missing)
    lose_worker(self, i, caf::exit_reason::remote_link_unreachable);
}

// A fresh run: the limits' timers, and the protocol starts it.
void start_fresh(coordinator_ptr self) {
  auto& st = self->state;
  st.send_worker_weights();
  if (st.cfg->max_time_s > 0)
    self->delayed_send(self, seconds(st.cfg->max_time_s), timeout_atom::value);
  if (st.cfg->checkpoint_every_s > 0)
    self->delayed_send(self, seconds(st.cfg->checkpoint_every_s), checkpoint_atom::value);
  st.protocol_event([&] { st.cfg->proto->on_start(st.view); });
}

void on_start(coordinator_ptr self, std::vector<worker_actor>& handles, evaluator_actor& evaluator,
              std::optional<double> saved_cap) {
  auto& st = self->state;
  if (st.phase.started() || handles.size() != st.workers.size())
    return;
  st.evaluator = std::move(evaluator);
  auto missing = take_places(self, handles, st.cfg->resume != nullptr);
  monitor_the_run(self);
  greet_observers(self);
  auto plan = st.phase.start();
  if (plan.stop)  // stopped before it started: every worker is told to stop at once
    begin_stop(self, *plan.stop);
  else if (plan.resumed)
    resume_where_saved(self, missing, saved_cap);
  else
    start_fresh(self);
}

// -- the rest of the behavior's handlers -----------------------------------------------

// The PS delegates a worker's push request here, so the sender is that
// worker: nobody else may report a push, nor one in another's name; but the
// lead shard asks itself for a push that came on the bulk channel, whose
// worker it knew by its key (runtime/cluster/dataplane/data_plane.hpp).
caf::result<proceed> on_push_request(coordinator_ptr self, const push_info& info, uint32_t copy = 0) {
  auto& st = self->state;
  auto from = self->current_sender();
  auto& ps = st.cfg->ps;
  auto lead_copy = ps.copies.empty() ? ps.lead() : ps.copies[0][copy];  // (bulk: it asks in the worker's name)
  bool from_worker = st.valid(info.worker) && from && from == caf::actor_cast<caf::strong_actor_ptr>(
                                                          st.workers[coordinator_state::idx(info.worker)].handle);
  bool from_lead = lead_copy && from == caf::actor_cast<caf::strong_actor_ptr>(lead_copy);
  if (!st.phase.started() || !st.valid(info.worker) || (!from_worker && !from_lead)) {
    auto addr = caf::actor_cast<caf::actor_addr>(from);
    if (from && std::find(st.lost_copies.begin(), st.lost_copies.end(), addr) != st.lost_copies.end())
      return caf::make_error(caf::sec::request_receiver_down);  // a copy given up for lost: its push counts without it
    return make_error(sp_error::not_a_member, "the coordinator takes pushes of the job's workers only");
  }
  auto rp = self->make_response_promise<proceed>();
  shard_reported(self, info, 0, copy, rp);
  return rp;
}

// Copy `copy` of shard `shard` (not the lead) reports a slice: only that copy itself may.
void on_slice_report(coordinator_ptr self, const push_info& info, uint32_t shard, uint32_t copy) {
  auto& st = self->state;
  auto& ps = st.cfg->ps;
  auto from = caf::actor_cast<caf::actor_addr>(self->current_sender());
  bool its_own = ps.copies.empty() ? copy == 0 && shard < ps.size() && from == ps.shards[shard].address()
                                   : ps.copy_of(from) == std::make_pair(static_cast<int>(shard), static_cast<int>(copy));
  if (st.phase.started() && st.valid(info.worker) && shard > 0 && its_own)
    shard_reported(self, info, shard, copy, {});
}

// A worker asks again for the reply to its push `iter`: resumed from a
// checkpoint, or every copy of the lead shard that took the push was lost
// (a copy on the bulk channel relays the answer, and a process that died
// relays nothing).
caf::result<proceed> on_resumed_push(coordinator_ptr self, worker_id w, uint64_t iter) {
  auto& st = self->state;
  auto i = coordinator_state::idx(w);
  if (!st.phase.started() || !st.valid(w)
      || self->current_sender() != caf::actor_cast<caf::strong_actor_ptr>(st.workers[i].handle))
    return make_error(sp_error::not_a_member, "the coordinator takes pushes of the job's workers only");
  auto& slot = st.workers[i];
  auto state = slot.state;
  if (state != slot_state::away && state != slot_state::away_released) {
    // Reported by some shards, not yet by all: the lead's reply (from the
    // checkpoint's time, or a lead's copy that had it on its link) or this
    // ask's gets the answer once every live copy has it.
    for (auto& [key, p] : st.ps.partial)
      if (key.first == w && (p.lead_in || key.second == iter)) {
        auto rp = self->make_response_promise<proceed>();
        p.reply.add(rp);
        return rp;
      }
    if (slot.holds_push() && slot.push_iter == iter) {  // counted, its answer not given yet
      auto rp = self->make_response_promise<proceed>();
      st.workers.also_answer(i, rp);
      return rp;
    }
    if (slot.answered_iter == iter && iter > 0)  // answered: the answer went with the copies that relayed it
      return slot.answered;
    // No live copy took it in: the worker drops it and pulls again (a refusal).
    return make_error(sp_error::bad_input, "worker " + std::to_string(w) + " has no held push to resume");
  }
  auto rp = self->make_response_promise<proceed>();
  st.workers.asked_again(i, rp);
  if (state == slot_state::away_released) {  // released while it was away
    push_reply reply{rp};
    st.answer(reply, i, st.workers[i].held_back);
    st.flush_ops();
  }
  return rp;
}

// A timer fired: a protocol's, or a delayed release that is still current.
void on_timer(coordinator_ptr self, uint64_t id) {
  auto& st = self->state;
  if (self->current_sender() != self->ctrl())
    return;
  auto e = st.timers.take(id);
  if (!e)
    return;
  busy_timer busy(st);
  if (st.phase.ending())
    return;
  if (e->is_release) {
    if (st.valid(e->worker) && st.workers[coordinator_state::idx(e->worker)].pending_release == id)
      st.protocol_event([&] { st.release(e->worker, e->pull); });
  } else {
    st.protocol_event([&] { st.cfg->proto->on_timer(st.view, e->tag); });
  }
}

// A replica of the lead shard forwards a push it took (copy 1..R).
caf::result<proceed> on_replica_push(coordinator_ptr self, const push_info& info, uint32_t copy) {
  auto& ps = self->state.cfg->ps;
  if (copy == 0 || copy > ps.replicas())
    return make_error(sp_error::not_a_member, "no such copy of the lead shard");
  return on_push_request(self, info, copy);
}

// The coordinator's part of a checkpoint, when the run is steady.
caf::result<saved_coordinator> on_save(coordinator_ptr self) {
  auto& st = self->state;
  if (!st.phase.started() || st.phase.ending() || st.phase.holding())
    return make_error(sp_error::not_now, "the run is starting, ending or holding still: no checkpoint now");
  try {
    return save(st);
  } catch (const std::exception& e) {  // a protocol without checkpoint support
    return make_error(sp_error::bad_input, e.what());
  }
}

// The time cap's timer. A resumed run may have moved its cap: a timer for the old one is void.
void on_time_cap(coordinator_ptr self) {
  auto& st = self->state;
  if (self->current_sender() == self->ctrl() && st.cfg->max_time_s > 0 && st.now() >= st.cfg->max_time_s - 1e-6)
    begin_stop(self, "time");
}

// Once the run ends on its own, a stop changes nothing.
void on_stop(coordinator_ptr self, const stop_request& stop) {
  auto& st = self->state;
  if (!from_driver_or_observer(self) || st.phase.is(coordinator_phase::finishing))
    return;
  if (st.phase.started())
    begin_stop(self, stop.why);
  else
    st.phase.stop_before_start(stop.why);
}

std::vector<caf::actor> copies_of(coordinator_ptr self) {
  std::vector<caf::actor> out;
  for (auto& c : every_copy(self->state.cfg->ps))
    out.push_back(caf::actor_cast<caf::actor>(c));
  return out;
}

// The state from the config (and a checkpoint's, when resuming); the checkpoint's time cap, if any.
std::optional<double> set_up(coordinator_ptr self, std::shared_ptr<coordinator_config> cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.workers = worker_table(static_cast<size_t>(st.cfg->workers), static_cast<uint32_t>(st.cfg->batch));
  st.ps = ps_sequence(st.cfg->ps.sequenced());
  st.run.next_eval = st.cfg->eval_every_samples;
  std::optional<double> saved_cap;
  if (st.cfg->resume) {
    restore(st, *st.cfg->resume);
    saved_cap = st.cfg->resume->max_time_s;
  }
  return saved_cap;
}

// A table: each message to the handler that takes it.
coordinator_actor::behavior_type coordinator(coordinator_ptr self,
                                             std::shared_ptr<coordinator_config> cfg) {
  auto saved_cap = set_up(self, std::move(cfg));
  // Attached before anyone else knows the PS: from here on it takes control
  // messages from this coordinator only.
  self->state.to_shards(attach_atom::value, coordinator_actor{self}, std::vector<worker_actor>{});
  self->set_down_handler([=](caf::down_msg& dm) { on_down(self, dm); });
  auto from = [self](const auto& who) {
    return self->current_sender() == caf::actor_cast<caf::strong_actor_ptr>(who);
  };
  return {
    [=](start_atom, std::vector<worker_actor>& workers, evaluator_actor& evaluator) {
      on_start(self, workers, evaluator, saved_cap);
    },
    [=](pushed_atom, const push_info& info) -> caf::result<proceed> { return on_push_request(self, info); },
    [=](pushed_atom, const push_info& info, uint32_t shard) { on_slice_report(self, info, shard, 0); },
    [=](pushed_atom, const push_info& info, replica_atom, uint32_t copy) -> caf::result<proceed> {
      return on_replica_push(self, info, copy);
    },
    [=](pushed_atom, const push_info& info, uint32_t shard, uint32_t copy) {
      if (copy > 0)  // (copy 0 reports without one)
        on_slice_report(self, info, shard, copy);
    },
    [=](pushed_atom, resume_atom, worker_id w, uint64_t iter) -> caf::result<proceed> {
      return on_resumed_push(self, w, iter);
    },
    [=](save_atom) -> caf::result<saved_coordinator> { return on_save(self); },
    [=](eval_atom, const eval_result& r) {
      if (from(self->state.evaluator))
        on_eval(self, r);
    },
    [=](timeout_atom) { on_time_cap(self); },
    [=](timeout_atom, uint64_t id) { on_timer(self, id); },
    [=](join_atom, worker_id w, worker_actor& handle, const std::string& where) {
      if (from(self->state.cfg->driver))
        on_join(self, w, std::move(handle), where);
    },
    [=](checkpoint_atom) {
      if (self->current_sender() == self->ctrl())
        begin_checkpoint(self);
    },
    [=](const stop_request& stop) { on_stop(self, stop); },
    [=](eval_request) { observer_asks_eval(self); },
    [=](const checkpoint_request& r) {
      if (from_driver_or_observer(self))
        checkpoint_asked(self, r.why);
    },
    [=](const mark_request& m) { observer_marks(self, m.note, m.value); },
    [=](counts_request) { return counts_of(self); },
    [=](copy_atom) { return copies_of(self); },
  };
}

}  // namespace

coordinator_actor spawn_coordinator(caf::actor_system& sys, std::shared_ptr<coordinator_config> cfg) {
  return sys.spawn(coordinator, std::move(cfg));
}

}  // namespace syncpoint
