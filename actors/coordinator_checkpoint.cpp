#include "actors/coordinator_state.hpp"

#include "actors/parameter_server.hpp"
#include "protocols/protocol_state.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>

namespace syncpoint {

saved_coordinator save(coordinator_state& st) {
  saved_coordinator s;
  for (size_t i = 0; i < st.workers.size(); ++i) {
    auto& w = st.workers[i];
    auto f = st.workers.flags(i);
    s.live.push_back(f.live);
    s.gone.push_back(f.gone);
    s.waiting.push_back(f.waiting);
    s.held.push_back(f.held);
    s.has_deferred.push_back(f.has_deferred);
    s.deferred.push_back(f.has_deferred ? w.held_back : proceed{});
    s.clock.push_back(w.clock);
    s.waiting_since.push_back(w.waiting_since);
    s.pending_release.push_back(w.pending_release);
    s.accepted.push_back(w.accepted);
    s.batch.push_back(w.batch);
    s.work.push_back(w.work);
  }
  for (auto& [id, e] : st.timers.pending())
    s.timers.push_back({id, e.is_release, e.worker, e.pull, e.tag, e.due});
  s.next_timer = st.timers.last_id();
  s.version = st.ps.version();
  s.published_version = st.ps.published();
  s.samples = st.run.samples;
  s.next_eval = st.run.next_eval;
  s.event = st.event;
  s.mode = static_cast<uint8_t>(st.ps.mode());
  s.target_reached = st.run.target_reached;
  s.last_accuracy = st.run.last_accuracy;
  s.next_tick = st.run.next_tick;
  s.max_time_s = st.cfg->max_time_s;
  s.losses = st.losses;
  s.protocol_state = save_protocol_state(*st.cfg->proto, st.cfg->protocol_name);
  for (auto& [key, p] : st.ps.partial)
    s.partial.push_back({p.info, p.reports, p.lead_in, p.in});
  s.buffered = st.ps.buffered();
  s.rejected = st.rejected;
  auto& ps = st.cfg->ps;
  for (size_t k = 0; k < ps.copies.size(); ++k) {
    s.serving.push_back(static_cast<uint32_t>(ps.copy_of(caf::actor_cast<caf::actor_addr>(ps.shards[k])).second));
    for (auto& copy : ps.copies[k])
      s.copy_lost.push_back(!copy);
  }
  return s;
}

namespace {

// Who had reported a partial push, by this job's copies (by shard without
// replicas): each copy as the saved copy it comes back as (saved_copy_of).
std::vector<bool> reported(const saved_partial_push& p, const saved_coordinator& s, const ps_group& ps) {
  auto shards = ps.size();
  auto per = ps.replicas() + 1;
  if (p.in.empty() || p.in.size() % shards != 0)
    throw std::invalid_argument("the checkpoint's partly reported push of worker " + std::to_string(p.info.worker) +
                                " has reports of " + std::to_string(p.in.size()) + " copies, not a multiple of the " +
                                std::to_string(shards) + " shards");
  auto saved_per = p.in.size() / shards;
  std::vector<bool> in(shards * per);
  for (size_t k = 0; k < shards; ++k)
    for (size_t r = 0; r < per; ++r)
      in[k * per + r] = p.in.at(k * saved_per + saved_copy_of(s, k, r, per));
  return in;
}

}  // namespace

void restore(coordinator_state& st, const saved_coordinator& s) {
  auto n = st.workers.size();
  for (auto size : {s.live.size(), s.gone.size(), s.waiting.size(), s.held.size(), s.has_deferred.size(),
                    s.deferred.size(), s.clock.size(),
                    s.waiting_since.size(), s.pending_release.size(), s.accepted.size(), s.batch.size(),
                    s.work.size()})
    if (size != n)
      throw std::invalid_argument("the checkpoint's coordinator has " + std::to_string(size) +
                                  " workers, the job " + std::to_string(n));
  for (size_t i = 0; i < n; ++i) {
    st.workers.restore(i, {s.live[i], s.gone[i], s.waiting[i], s.held[i], s.has_deferred[i]}, s.deferred[i],
                       s.clock[i]);
    auto& w = st.workers[i];
    w.waiting_since = s.waiting_since[i];
    w.pending_release = s.pending_release[i];
    w.accepted = s.accepted[i];
    w.batch = s.batch[i];
    w.work = s.work[i];
  }
  std::map<uint64_t, timer_entry> timers;
  for (auto& t : s.timers)
    timers[t.id] = {t.is_release, t.worker, t.pull, t.tag, t.due};
  st.timers.restore(std::move(timers), s.next_timer);
  st.ps.restore(static_cast<ps_mode>(s.mode), s.version, s.published_version, s.buffered);
  st.run.samples = s.samples;
  st.run.next_eval = s.next_eval;
  st.event = s.event;
  st.run.target_reached = s.target_reached;
  st.run.last_accuracy = s.last_accuracy;
  st.run.next_tick = s.next_tick;
  st.losses = s.losses;
  load_protocol_state(*st.cfg->proto, st.cfg->protocol_name, s.protocol_state);
  st.ps.partial.clear();
  if (!s.partial.empty() && !st.cfg->ps.sequenced())
    throw std::invalid_argument("the checkpoint holds pushes some shards (or copies) of its PS had and others not: "
                                "resume it with the shards it was taken with");
  for (auto& p : s.partial) {  // the lead's reply: the worker asks for it again
    auto& e = st.ps.partial[{p.info.worker, p.info.iter}];
    e.info = p.info;
    e.in = reported(p, s, st.cfg->ps);
    e.reports = static_cast<uint32_t>(std::count(e.in.begin(), e.in.end(), true));
    e.lead_in = p.lead_in;
  }
  st.rejected = s.rejected;
  st.phase.restored();
}

// -- the real clock's checkpoints ---------------------------------------------

void begin_checkpoint(coordinator_ptr self) {
  auto& st = self->state;
  st.phase.tick_while_holding();
  if (!st.phase.is(coordinator_phase::running))
    return;
  st.phase.freeze(checkpoint_cause::tick);
  checkpoint_if_still(self);
}

void checkpoint_asked(coordinator_ptr self, const std::string& why) {
  auto& st = self->state;
  auto no = [&](const char* reason) {
    st.report("[" + st.cfg->protocol_name + "] no checkpoint on request (" + why + "): " + reason, true);
  };
  if (!st.cfg->on_checkpoint)
    return no("the job has no checkpoint folder on the real clock (--checkpoint-dir)");
  if (st.phase.checkpoint_due())
    return;  // one is being taken: it is the one asked for
  if (st.phase.holding()) {  // a lost copy is being made again: the checkpoint follows
    st.report("[" + st.cfg->protocol_name + "] checkpoint on request (" + why + "), once a new shard copy is in", true);
    st.phase.asked_while_replicating();
    return;
  }
  if (!st.phase.is(coordinator_phase::running))
    return no(st.phase.started() ? "the run is ending" : "the run has not started");
  st.report("[" + st.cfg->protocol_name + "] checkpoint on request (" + why + ")", true);
  st.phase.freeze(checkpoint_cause::asked);
  checkpoint_if_still(self);
}

namespace {

// Everyone may go on; the next checkpoint is due a period from now.
void resume_run(coordinator_ptr self) {
  auto& st = self->state;
  st.gathering.asked.clear();
  st.gathering.give_up = nullptr;
  if (!st.phase.is(coordinator_phase::collecting))
    return;  // stopped meanwhile: the checkpoint was given up
  bool periodic = st.phase.thaw();
  if (periodic && st.cfg->checkpoint_every_s > 0)
    self->delayed_send(self, seconds(st.cfg->checkpoint_every_s), checkpoint_atom::value);
  if (!st.replacing.waiting.empty()) {  // copies lost meanwhile are made again first
    st.phase.freeze(checkpoint_cause::replica);
    act_if_still(self);
    return;
  }
  st.deliver_deferred();
}

}  // namespace

namespace {

// A sparse model's tables into `out`, chunk after chunk: shard k's table t
// from position `from`, then the rest; `done` when every shard's are in.
void save_rows(coordinator_ptr self, std::shared_ptr<checkpoint_sink> out, std::vector<ps_actor> shards, size_t k,
               uint32_t t, uint64_t from, std::function<void()> done, std::function<void(caf::error&)> fail) {
  if (k >= shards.size())
    return done();
  self->state.gathering.asked.push_back(shards[k].address());
  self->request(shards[k], self->state.cfg->request_timeout, save_atom::value, t, from)
    .then([=](saved_rows& chunk) {
      if (t >= chunk.tables)
        return save_rows(self, out, shards, k + 1, 0, 0, done, fail);
      try {
        out->add(chunk);
      } catch (const std::exception& e) {
        auto err = make_error(sp_error::bad_input, e.what());
        return fail(err);
      }
      if (chunk.last)
        save_rows(self, out, shards, k, t + 1, 0, done, fail);
      else
        save_rows(self, out, shards, k, t, chunk.next, done, fail);
    }, fail);
}

// What a checkpoint gathers from everyone at rest, until the last answer.
struct gathered {
  std::shared_ptr<checkpoint_state> cp;
  std::vector<std::optional<saved_ps>> parts;  // each copy's of each shard (none: lost)
  size_t pending = 0;                          // answers still to come
  bool failed = false;
};

using on_failure = std::function<void(caf::error&)>;

// Every answer is in: the copies merged, the checkpoint written, a sparse
// model's rows saved from each shard's serving copy, committed; then the run goes on.
void write_gathered(coordinator_ptr self, std::shared_ptr<gathered> g, on_failure fail) {
  auto& st = self->state;
  auto& cp = *g->cp;
  std::shared_ptr<checkpoint_sink> out;
  try {
    cp.ps = merge_copies(std::move(g->parts), st.cfg->ps.bounds, cp.coordinator.serving);
    out = st.cfg->on_checkpoint(cp);
  } catch (const std::exception& e) {
    st.report("[" + st.cfg->protocol_name + "] checkpoint not written: " + e.what(), true);
    resume_run(self);
    return;
  }
  std::vector<ps_actor> serving_copies;
  auto copies = every_copy(st.cfg->ps);
  for (size_t k = 0; k < st.cfg->ps.size(); ++k)
    serving_copies.push_back(serving_copy(copies, cp.coordinator, k, st.cfg->ps.size()));
  save_rows(self, out, std::move(serving_copies), 0, 0, 0, [=] {
    try {
      self->state.report(out->commit());
    } catch (const std::exception& e) {
      self->state.report("[" + self->state.cfg->protocol_name + "] checkpoint not written: " + e.what(), true);
    }
    resume_run(self);
  }, std::move(fail));
}

// The coordinator's own part, and the checkpoint's frame; none (and the run
// going on) if the protocol cannot save.
std::shared_ptr<checkpoint_state> begin_checkpoint_state(coordinator_ptr self) {
  auto& st = self->state;
  auto cp = std::make_shared<checkpoint_state>();
  try {
    cp->coordinator = save(st);
  } catch (const std::exception& e) {
    st.report("[" + st.cfg->protocol_name + "] no checkpoint: " + e.what(), true);
    resume_run(self);
    return nullptr;
  }
  cp->time_ns = since(self, st.cfg->origin);
  cp->samples = st.run.samples;
  cp->workers.resize(st.workers.size());
  for (size_t i = 0; i < cp->workers.size(); ++i)
    cp->workers[i].id = static_cast<worker_id>(i);
  return cp;
}

}  // namespace

void checkpoint_if_still(coordinator_ptr self) {
  auto& st = self->state;
  if (!st.phase.is(coordinator_phase::freezing) || !st.run.evals_pending.empty())
    return;
  if (!st.workers.at_rest(/*unstarted_too=*/false))
    return;  // computing, pushing or pulling: not at rest yet
  st.phase.collect();
  auto cp = begin_checkpoint_state(self);
  if (!cp)
    return;
  // Everyone is at rest: ask each for its state (each live copy of a
  // replicated shard, whose links differ), then write, then go on.
  auto copies = every_copy(st.cfg->ps);  // (invalid: lost)
  auto g = std::make_shared<gathered>();
  g->cp = cp;
  g->parts.resize(copies.size());
  g->pending = 1 + static_cast<size_t>(std::count_if(copies.begin(), copies.end(), [](auto& c) { return !!c; }));
  on_failure fail = [=](caf::error& e) {
    if (g->failed)
      return;
    g->failed = true;
    self->state.report("[" + self->state.cfg->protocol_name + "] no checkpoint: " + self->system().render(e), true);
    resume_run(self);
  };
  auto one_more = [=] {
    if (!g->failed && --g->pending == 0)
      write_gathered(self, g, fail);
  };
  auto timeout = st.cfg->request_timeout;
  st.gathering.give_up = [fail](caf::error e) { fail(e); };
  for (size_t j = 0; j < copies.size(); ++j)
    if (copies[j]) {
      st.gathering.asked.push_back(copies[j].address());
      self->request(copies[j], timeout, save_atom::value).then([=](saved_ps& s) {
        g->parts[j] = std::move(s);
        one_more();
      }, fail);
    }
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
  for (size_t i = 0; i < st.workers.size(); ++i)
    if (st.workers[i].live()) {
      ++g->pending;
      ++*workers_left;
      st.gathering.asked.push_back(st.workers[i].handle.address());
      self->request(st.workers[i].handle, timeout, save_atom::value).then([=](saved_worker& s) {
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
