// The coordinator's side of --ps-rereplicate (docs/architecture.md,
// "Replacing a lost copy"). A lost copy of a replicated shard is made again,
// so the shard keeps its R replicas:
//   1. the run holds still as for a checkpoint: releases (and starts) wait
//      until every live worker waits for its reply, so no push is partly in;
//   2. the shard's serving copy saves its state, at this point of the
//      coordinator's sequence; what goes to the copies from here on is kept;
//   3. the placer (in one process a small actor, on a cluster the job's
//      runner) spawns a copy from that state, in the lost one's place;
//   4. the new copy is attached, takes what was kept, in order, and becomes
//      one of the shard's copies; every worker hears of it (and answers)
//      before any release goes: its next push goes to the new copy too;
//   5. the run goes on (or the next lost copy, or a checkpoint asked for
//      meanwhile, is taken first).
// The new copy never serves until a later loss promotes it.
#include "actors/coordinator_state.hpp"

#include <algorithm>
#include <memory>

namespace syncpoint {

namespace {

using slot = copy_replacement::slot;

std::string copy_name(slot s) {
  return "shard " + std::to_string(s.first) + "'s copy " + std::to_string(s.second);
}

// What a new copy starts from: its serving copy's state, less its link. At
// rest nothing on that link is a live worker's, and the new copy's link is idle.
saved_ps without_link(saved_ps s) {
  s.in_transit.clear();
  s.waiting_pulls.clear();
  s.staged.clear();
  s.copy_links.clear();
  s.shard_links.clear();
  s.link_free_at = 0;
  s.next_transfer = 0;
  return s;
}

void ask_for_state(coordinator_ptr self);

// The next lost copy is made (the run is at rest).
void make_next(coordinator_ptr self) {
  auto& r = self->state.replacing;
  r.making = r.waiting.front();
  r.waiting.pop_front();
  r.tries = 0;
  ask_for_state(self);
}

// The copy being made is made or given up: the next lost copy, a checkpoint
// due meanwhile, or the run goes on.
void next_or_go_on(coordinator_ptr self) {
  auto& st = self->state;
  auto& r = st.replacing;
  r.making.reset();
  r.missed.clear();
  if (!st.phase.is(coordinator_phase::replicating))
    return;  // stopped or finished meanwhile: the releases went
  if (!r.waiting.empty()) {  // still at rest: nobody was released
    make_next(self);
    return;
  }
  bool checkpoint = st.phase.replicated();
  st.deliver_deferred();  // starts now; replies once each worker has answered for the new copies (not for a checkpoint)
  if (checkpoint)
    checkpoint_if_still(self);
}

bool current(coordinator_ptr self, uint64_t attempt) {
  auto& st = self->state;
  return st.replacing.attempt == attempt && st.replacing.making && st.phase.is(coordinator_phase::replicating);
}

void give_up(coordinator_ptr self, const std::string& why) {
  auto& st = self->state;
  auto s = *st.replacing.making;
  auto left = st.cfg->ps.members(s.first).size();
  st.report("[" + st.cfg->protocol_name + "] " + copy_name(s) + " not made again (" + why + "): shard " +
              std::to_string(s.first) + " goes on with " + std::to_string(left) + " cop" + (left == 1 ? "y" : "ies"),
            true);
  next_or_go_on(self);
}

// Live worker i takes copy s into its group; its releases wait for its answer.
void tell_worker(coordinator_ptr self, size_t i, slot s) {
  auto& st = self->state;
  auto& handle = st.workers[i].handle;
  if (!handle || !st.workers[i].live())
    return;
  auto& ps = st.cfg->ps;
  auto bulk = s.first < ps.copy_bulk.size() ? ps.copy_bulk[s.first][s.second] : std::string();
  ++st.replacing.unanswered[i];
  auto answered = [self, i, asked = handle.address()] {
    auto& st = self->state;
    auto it = st.replacing.unanswered.find(i);
    if (it == st.replacing.unanswered.end() || st.workers[i].handle.address() != asked)
      return;  // lost meanwhile (and its place maybe taken)
    if (--it->second == 0) {
      st.replacing.unanswered.erase(it);
      st.deliver_deferred();
    }
  };
  self
    ->request(handle, st.cfg->request_timeout, copy_atom::value, static_cast<uint32_t>(s.first),
              static_cast<uint32_t>(s.second), caf::actor_cast<caf::actor>(ps.copies[s.first][s.second]), bulk)
    .then([answered](bool) { answered(); }, [answered](caf::error&) { answered(); });
}

// The new copy takes the lost one's place.
void install(coordinator_ptr self, ps_actor copy, const std::string& bulk, const std::string& where) {
  auto& st = self->state;
  auto& r = st.replacing;
  auto s = *r.making;
  auto& ps = st.cfg->ps;
  // What its serving copy took since the save, in the same order, after the
  // attach (which an attach kept among them only repeats, with fewer workers).
  self->send(copy, attach_atom::value, coordinator_actor{self}, st.workers.handles());
  for (auto& m : r.missed)
    if (!m.match_element<attach_atom>(0))
      st.send_to(copy, m);
  self->monitor(copy);
  ps.copies[s.first][s.second] = copy;
  if (s.first < ps.copy_bulk.size())
    ps.copy_bulk[s.first][s.second] = bulk;
  // Pushes some copies reported (refusals still settling): the new copy never
  // had their slices, and is not waited for.
  auto per = ps.replicas() + 1;
  for (auto& [key, p] : st.ps.partial)
    if (p.in.size() == ps.size() * per)
      p.in[s.first * per + s.second] = true;
  r.made.push_back(s);
  auto t = since(self, st.cfg->origin);
  st.trace({"copy_added", -1, t, t, s.first, st.ps.version(), static_cast<double>(s.second), where});
  st.report("[" + st.cfg->protocol_name + "] " + copy_name(s) + " made again" +
              (where.empty() ? std::string() : " on " + where),
            true);
  self->send(st.cfg->placer, copy_atom::value, static_cast<uint32_t>(s.first), static_cast<uint32_t>(s.second), copy,
             true);
  for (size_t i = 0; i < st.workers.size(); ++i)
    tell_worker(self, i, s);
  // Releases wait, too, until the new copy has what was sent to it: a worker's
  // push reaches a copy of another process on the bulk channel, and must not
  // overtake its attach.
  st.sync_remote_shards();
  next_or_go_on(self);
}

void place(coordinator_ptr self, uint64_t attempt, saved_ps state) {
  auto& st = self->state;
  auto s = *st.replacing.making;
  self
    ->request(st.cfg->placer, st.cfg->request_timeout, copy_atom::value, static_cast<uint32_t>(s.first),
              static_cast<uint32_t>(s.second), without_link(std::move(state)))
    .then(
      [=](ps_actor& copy, std::string& bulk, std::string& where) {
        auto& st = self->state;
        if (!current(self, attempt) || st.cfg->ps.members(s.first).empty()) {  // too late: it goes
          self->send(st.cfg->placer, copy_atom::value, static_cast<uint32_t>(s.first),
                     static_cast<uint32_t>(s.second), copy, false);
          self->send_exit(copy, caf::exit_reason::user_shutdown);
          return;
        }
        install(self, std::move(copy), bulk, where);
      },
      [=](caf::error& e) {
        // The placer may still spawn it (this request timed out): it goes once it comes.
        self->send(self->state.cfg->placer, copy_atom::value, static_cast<uint32_t>(s.first),
                   static_cast<uint32_t>(s.second), ps_actor{}, false);
        if (current(self, attempt))
          give_up(self, self->system().render(e));
      });
}

// The serving copy's state at this point of the sequence; from here on what
// goes to the copies is kept for the new one (to_members).
void ask_for_state(coordinator_ptr self) {
  auto& st = self->state;
  auto& r = st.replacing;
  auto s = *r.making;
  st.flush_ops();
  r.missed.clear();
  auto attempt = ++r.attempt;
  ++r.tries;
  auto from = st.cfg->ps.shards[s.first];
  r.asked = static_cast<size_t>(st.cfg->ps.copy_of(caf::actor_cast<caf::actor_addr>(from)).second);
  self->request(from, st.cfg->request_timeout, save_atom::value)
    .then([=](saved_ps& state) {
      if (current(self, attempt))
        place(self, attempt, std::move(state));
    },
    [=](caf::error& e) {
      if (!current(self, attempt))
        return;
      auto& st = self->state;
      // Lost meanwhile: the copy serving in its place saves, once the loss is
      // known (its down message comes right after this error: the next try
      // goes to the copy promoted by then).
      if (!st.cfg->ps.members(s.first).empty() && st.replacing.tries < 3)
        ask_for_state(self);
      else
        give_up(self, "its serving copy did not save its state: " + self->system().render(e));
    });
}

}  // namespace

void replace_copy(coordinator_ptr self, size_t shard, size_t copy) {
  auto& st = self->state;
  if (!st.cfg->placer || !st.phase.started() || st.phase.ending())
    return;
  auto& r = st.replacing;
  if (st.phase.is(coordinator_phase::replicating) && r.making && r.making->first == shard && r.asked == copy) {
    // The serving copy asked for its state is gone: its reply may never come
    // (a remote one's, until the request's timeout). The copy serving now is asked.
    r.waiting.emplace_back(shard, copy);
    ask_for_state(self);
    return;
  }
  r.waiting.emplace_back(shard, copy);
  if (st.phase.is(coordinator_phase::running))
    st.phase.freeze(checkpoint_cause::replica);
  // Freezing or collecting (a checkpoint), replicating (another copy): it waits its turn.
  act_if_still(self);
}

void act_if_still(coordinator_ptr self) {
  auto& st = self->state;
  if (!st.phase.is(coordinator_phase::freezing))
    return;
  if (st.replacing.waiting.empty()) {
    checkpoint_if_still(self);
    return;
  }
  if (!st.workers.at_rest(/*unstarted_too=*/true))  // (nothing of a live worker on any copy's link)
    return;
  st.flush_ops();  // before the save: the new copy starts from what these made
  st.phase.replicate();
  make_next(self);
}

void tell_of_copies(coordinator_ptr self, size_t worker) {
  auto& st = self->state;
  for (auto s : st.replacing.made)
    if (st.cfg->ps.copies[s.first][s.second])
      tell_worker(self, worker, s);
}

}  // namespace syncpoint
