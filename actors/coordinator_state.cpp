// The coordinator's state (actors/coordinator_state.hpp): what it does for
// the protocol that takes more than a line, the run's phase moves, and its reports.
#include "actors/coordinator_state.hpp"

#include <cstdio>
#include <stdexcept>

namespace syncpoint {

void coordinator_state::fail_protocol(const std::string& what) {
  fail_run(self, make_error(sp_error::protocol_failed, "the protocol failed: " + what));
}

const char* to_string(coordinator_phase p) {
  switch (p) {
    case coordinator_phase::starting: return "starting";
    case coordinator_phase::running: return "running";
    case coordinator_phase::freezing: return "freezing";
    case coordinator_phase::collecting: return "collecting";
    case coordinator_phase::replicating: return "replicating";
    case coordinator_phase::stopping: return "stopping";
    case coordinator_phase::finishing: return "finishing";
  }
  return "?";
}

namespace {

// The moves of coordinator_phase's table (actors/coordinator_run.hpp).
bool allowed(coordinator_phase from, coordinator_phase to) {
  using p = coordinator_phase;
  switch (to) {
    case p::starting: return false;
    case p::running: return from == p::starting || from == p::collecting || from == p::replicating;
    case p::freezing: return from == p::running || from == p::replicating;
    case p::collecting: return from == p::freezing;
    case p::replicating: return from == p::freezing;
    case p::stopping:
      return from == p::running || from == p::freezing || from == p::collecting || from == p::replicating;
    case p::finishing: return from != p::finishing;
  }
  return false;
}

}  // namespace

void run_phase::move_to(coordinator_phase next) {
  if (!allowed(phase_, next))
    throw std::logic_error(std::string("coordinator: no move from ") + to_string(phase_) + " to " + to_string(next));
  phase_ = next;
}

void run_phase::expect(coordinator_phase p, const char* what) const {
  if (phase_ != p)
    throw std::logic_error(std::string("coordinator: ") + what + " in phase " + to_string(phase_));
}

proceed coordinator_state::release_of(size_t i, bool pull) const {
  auto& slot = workers[i];
  // An inner rate of 0 follows the PS's schedule (WBSP's local step), as it stands now.
  bool scheduled = slot.work.inner.type != inner_kind::none && slot.work.inner.lr == 0 && cfg->schedule.varies();
  return proceed{phase.ending(), pull, ps.pullable_version(), slot.batch, slot.accepted, slot.work,
                 scheduled ? cfg->schedule.at(run.samples) : 0.0, {}, run.samples, workers.live_count()};
}

// A release goes now, or is held back: by a checkpoint, by a shard sync, or
// until a resumed worker asks again for its reply.
void coordinator_state::release(worker_id w, bool pull) {
  if (!waiting(w))
    return;
  auto i = idx(w);
  auto& slot = workers[i];
  if (weights_stale)
    send_worker_weights();
  auto p = release_of(i, pull);
  if (slot.state == slot_state::unstarted) {
    // (While a new copy is made, a worker that started would send its first
    // push to the copies there are, and the new one could not apply it.)
    if (ps.syncing() || phase.is(coordinator_phase::replicating)) {
      workers.hold_release(i, p);
    } else {
      workers.release_now(i);
      start(i, p);
    }
    return;
  }
  if (slot.waiting_since < event)
    barrier_in_event = true;  // someone was held across events: a barrier opened
  if (phase.holding() || slot.state == slot_state::away || ps.syncing() || replacing.waits_for_news(i)) {
    workers.hold_release(i, p);  // delivered once the checkpoint is taken, the worker is back or the shards synced
    return;
  }
  auto rp = workers.release_now(i);
  answer(rp, i, p);
}

void coordinator_state::commit() {
  to_ps(commit_atom::value);
  ps.committed();
}

void coordinator_state::publish() {
  to_ps(publish_atom::value);
  ps.published_now();
}

void coordinator_state::set_mode(ps_mode mode) {
  to_ps(mode_atom::value, static_cast<uint8_t>(mode));
  ps.mode_set(mode);
  sync_remote_shards();
}

uint64_t coordinator_state::add_timer(double t, timer_entry e) {
  e.due = static_cast<nanos>(std::llround(t * 1e9));
  auto id = timers.add(e);
  self->delayed_send(self, until(t), timeout_atom::value, id);
  return id;
}

void coordinator_state::release_at(worker_id w, double t, bool pull) {
  if (!waiting(w))
    return;
  if (until(t).count() == 0) {
    release(w, pull);
    return;
  }
  workers[idx(w)].pending_release = add_timer(t, {true, w, pull, 0});
}

void coordinator_state::set_timer(double t, uint64_t tag) {
  add_timer(t, {false, -1, true, tag});
}

void coordinator_state::set_batch(worker_id w, uint32_t b) {
  if (!valid(w) || b == 0 || workers[idx(w)].batch == b)
    return;
  workers[idx(w)].batch = b;
  weights_stale = true;  // one message for a protocol that sets every batch (to_ps, release)
}

void coordinator_state::mark(const std::string& kind, const std::string& note, double value) {
  auto t = since(self, cfg->origin);
  trace_event ev{kind, -1, t, t, run.samples, ps.version(), value, note};
  if (kind == "phase")
    tell_followers(phase_atom::value, phase_of(ev));
  trace(std::move(ev));
}

// Replies wait while the run holds still; starts only while a new copy is
// made (a checkpoint waits for a started worker's first push, and would wait
// for ever for a start it held back).
void coordinator_state::deliver_deferred() {
  if (ps.syncing())
    return;
  if (!phase.holding())
    for (size_t i = 0; i < workers.size(); ++i)
      if (workers[i].state == slot_state::reply_deferred && !replacing.waits_for_news(i)) {
        auto p = workers[i].held_back;
        auto rp = workers.delivered(i);
        answer(rp, i, p);
      }
  if (!phase.is(coordinator_phase::replicating))
    for (size_t i = 0; i < workers.size(); ++i)
      if (workers[i].state == slot_state::start_deferred) {
        workers.delivered(i);
        start(i, workers[i].held_back);
      }
  flush_ops();
}

void coordinator_state::sync_remote_shards() {
  auto copies = cfg->ps.all_members();
  bool remote = std::any_of(copies.begin(), copies.end(),
                            [&](const ps_actor& s) { return s && s.node() != self->node(); });
  if (!remote)
    return;  // in this process, mailbox order already holds
  for (auto& shard : copies) {
    ps.sync_sent(shard.address());
    auto done = [this, from = shard.address()] {
      if (ps.sync_answered(from))
        deliver_deferred();
    };
    self->request(shard, caf::infinite, sync_atom::value).then([done](bool) { done(); }, [done](caf::error&) { done(); });
  }
}

void coordinator_state::send_worker_weights() {
  weights_stale = false;
  // Weight rule: a push counts b_i / (sum of the live workers' batches),
  // which is 1/n when every batch is the same.
  double total = 0;
  for (auto& s : workers.slots())
    if (s.live())
      total += s.batch;
  std::vector<float> wts(workers.size(), 0.0f);
  for (size_t i = 0; i < workers.size(); ++i)
    wts[i] = workers[i].live() && total > 0 ? static_cast<float>(workers[i].batch / total) : 0.0f;
  to_shards(weights_atom::value, wts);
}

void coordinator_state::report(std::string line, bool event) {
  progress_report r{std::move(line), run.samples, std::min(run_fraction(), 1.0), run.last_accuracy, event};
  tell_observers(r);
  if (cfg->on_progress)
    cfg->on_progress(r);
  else if (cfg->progress)
    std::fprintf(stderr, "%s\n", r.line.c_str());
  if (cfg->report_progress && cfg->driver)
    self->send(cfg->driver, progress_atom::value, std::move(r));
}

void coordinator_state::print_progress(const std::string& what) {
  if (!cfg->progress && !cfg->report_progress && !cfg->on_progress && observers.empty())
    return;
  double pct = 100.0 * run_fraction();
  char line[256];
  char acc[32];
  std::snprintf(acc, sizeof acc, "acc=%.4f", std::max(run.last_accuracy, 0.0));
  std::snprintf(line, sizeof line, "[%s] %-6s t=%9.2fs samples=%9llu (%5.1f%%) %s", cfg->protocol_name.c_str(),
                what.c_str(), now(), static_cast<unsigned long long>(run.samples), std::min(pct, 100.0),
                run.last_accuracy < 0 && !run.last_measure.empty() ? run.last_measure.c_str() : acc);
  report(line);
}

}  // namespace syncpoint
