// The coordinator's side of who trains: a worker that goes (its node lost,
// or it failed) and one that joins a vacant place; and the PS shards, the
// evaluator or the tracer going, which ends the run.
#include "actors/coordinator_state.hpp"

#include <algorithm>
#include <utility>

namespace syncpoint {

namespace {

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

}  // namespace

void lose_worker(coordinator_ptr self, size_t i, const caf::error& reason) {
  auto& st = self->state;
  auto w = static_cast<worker_id>(i);
  busy_timer busy(st);
  bool was_live = st.workers[i].live();
  auto record_loss = [&] {
    auto t = since(self, st.cfg->origin);
    st.trace({"lost", w, t, t, st.workers[i].clock, st.ps.version(), 0});
    st.losses.push_back({w, t, loss_reason(self, reason)});
    st.report("[" + st.cfg->protocol_name + "] worker " + std::to_string(w) + " lost: " +
                st.losses.back().reason,
              true);
  };
  if (was_live && st.phase.ending() && is_failure(reason))  // died while stopping: say so
    record_loss();
  // Nothing of its pushes stays: reports of some shards, slices staged on them,
  // the version a shard holds for its pull.
  auto mine = [w](const auto& kv) { return kv.first.first == w; };
  for (auto it = st.ps.partial.begin(); it != st.ps.partial.end();)
    it = mine(*it) ? st.ps.partial.erase(it) : std::next(it);
  st.ps.queue(shard_op::drop, w, shard_op::all);
  st.workers.lost(i);
  st.replacing.unanswered.erase(i);  // (news of new copies it never answered)
  if (was_live && !st.phase.ending()) {
    record_loss();
    st.send_worker_weights();
    st.protocol_event([&] { st.cfg->proto->on_lost(st.view, w); });
    // A user's loop that failed is a fault in the program, not a lost
    // machine: the others would fail the same way, so the run ends, saying why.
    if (reason && reason.category() == caf::atom("syncpoint") &&
        reason.code() == static_cast<uint8_t>(sp_error::user_loop_failed))  // (an empty error has no category)
      begin_stop(self, st.losses.back().reason);
  }
  st.flush_ops();
  maybe_finish(self);
  act_if_still(self);
}

namespace {

void member_down(coordinator_ptr self, const caf::down_msg& dm);

}  // namespace

void on_down(coordinator_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  if (observer_down(self, dm))
    return;
  // A copy whose process died never answers what it was asked (CAF 0.17): the syncs sent to it are
  // done (releases waited for ever), and a checkpoint that asked it for its state is given up (the
  // run held still for ever, and lost copies waited to be made again), and
  // its part of the final model is asked of another live copy of its shard.
  bool synced = st.ps.sync_lost(dm.source);
  bool asked = st.phase.is(coordinator_phase::collecting) &&
               std::find(st.gathering.asked.begin(), st.gathering.asked.end(), dm.source) != st.gathering.asked.end();
  member_down(self, dm);  // (first: a lost copy waits to be made again once the run goes on)
  if (asked && st.gathering.give_up && st.phase.is(coordinator_phase::collecting)) {
    auto give_up = st.gathering.give_up;  // (cleared as the run goes on)
    give_up(make_error(sp_error::not_now, "a worker or shard copy it asked for its state was lost"));
  }
  if (synced)
    st.deliver_deferred();
  final_lost(self, dm.source);  // (after member_down: another copy serves now)
}

namespace {

void member_down(coordinator_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  if (std::find(st.lost_copies.begin(), st.lost_copies.end(), dm.source) != st.lost_copies.end())
    return;  // a copy of a shard already given up for lost
  auto [shard, copy] = st.cfg->ps.copy_of(dm.source);
  if (shard >= 0 && (!st.phase.is(coordinator_phase::finishing) || is_failure(dm.reason))) {
    lose_copy(self, static_cast<size_t>(shard), static_cast<size_t>(copy), loss_reason(self, dm.reason));
    return;
  }
  auto& slots = st.workers.slots();
  auto it = std::find_if(slots.begin(), slots.end(),
                         [&](const worker_slot& s) { return s.handle.address() == dm.source; });
  if (it == slots.end()) {
    // The PS, the evaluator or the tracer died: the run cannot go on. The
    // driver monitors us and reports the reason.
    if (!st.phase.is(coordinator_phase::finishing) || is_failure(dm.reason)) {
      auto& shards = st.cfg->ps.shards;
      auto s = std::find_if(shards.begin(), shards.end(), [&](const ps_actor& a) { return a.address() == dm.source; });
      caf::error why = is_failure(dm.reason) ? dm.reason
                                             : caf::make_error(caf::sec::runtime_error,
                                                               "a parameter server, evaluator or tracer stopped");
      if (s != shards.end()) {  // (part of) the model is gone: say which
        auto k = static_cast<size_t>(s - shards.begin());
        auto which = shards.size() == 1 ? std::string("lost the parameter server")
                                        : "lost shard " + std::to_string(k) + " of the parameter server (values " +
                                            std::to_string(st.cfg->ps.begin(k)) + ".." +
                                            std::to_string(st.cfg->ps.end(k) - 1) + " of the model)";
        why = make_error(sp_error::lost_shard, which + ": " + self->system().render(dm.reason));
      }
      fail_run(self, std::move(why));
    }
    return;
  }
  auto w = static_cast<int>(it - slots.begin());
  lose_worker(self, static_cast<size_t>(w), dm.reason);
  if (w == st.cfg->fail_shard_with && !st.phase.ending())
    for (auto [k, c] : std::exchange(st.cfg->fail_copies, {})) {  // fault injection: they shared its host
      auto& ps = st.cfg->ps;
      auto victim = c < 0 ? ps.shards[static_cast<size_t>(k)] : ps.copies[static_cast<size_t>(k)][static_cast<size_t>(c)];
      auto [s, copy] = ps.copy_of(caf::actor_cast<caf::actor_addr>(victim));
      if (s < 0)
        continue;  // already gone
      self->send_exit(victim, caf::exit_reason::kill);
      if (!lose_copy(self, static_cast<size_t>(s), static_cast<size_t>(copy),
                     "injected failure: its host went with worker " + std::to_string(w)))
        break;  // the run failed with it
    }
}

}  // namespace

// A vacant worker id (never started, or lost) gets a running worker: live,
// waiting for its first release at the slowest live worker's clock, with the
// weights renormalised; the protocol takes it in (on_joined).
void on_join(coordinator_ptr self, worker_id w, worker_actor handle, const std::string& where) {
  auto& st = self->state;
  busy_timer busy(st);
  auto i = coordinator_state::idx(w);
  if (!st.phase.started() || st.phase.ending() || !st.valid(w) || st.workers[i].live() || !handle) {
    if (handle)  // not wanted: it goes
      self->send_exit(handle, caf::exit_reason::user_shutdown);
    return;
  }
  // Waiting for its first release at the slowest live worker's clock (0 with nobody live).
  st.workers.joined(i, std::move(handle), st.workers.min_clock(), st.event + 1, static_cast<uint32_t>(st.cfg->batch));
  self->monitor(st.workers[i].handle);
  st.to_shards(attach_atom::value, coordinator_actor{self}, st.workers.handles());
  tell_of_copies(self, i);  // its group may be from before a copy was made again
  // The newcomer's first push reaches a shard of another process by another
  // connection: its release waits until every such shard has the attach, or
  // that shard would refuse the push as not a member's.
  st.sync_remote_shards();
  st.send_worker_weights();
  auto t = since(self, st.cfg->origin);
  st.trace({"joined", w, t, t, st.workers[i].clock, st.ps.version(), 0, where});
  st.report("[" + st.cfg->protocol_name + "] worker " + std::to_string(w) + " joined" +
              (where.empty() ? "" : " (" + where + ")"),
            true);
  st.protocol_event([&] { st.cfg->proto->on_joined(st.view, w); });
}

}  // namespace syncpoint
