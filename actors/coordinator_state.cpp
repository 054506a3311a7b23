// The coordinator's state (actors/coordinator_state.hpp): its answers to
// the protocol that take more than a line, and its reports.
#include "actors/coordinator_state.hpp"

#include <cstdio>
#include <stdexcept>

namespace syncpoint {

const char* to_string(coordinator_phase p) {
  switch (p) {
    case coordinator_phase::starting: return "starting";
    case coordinator_phase::running: return "running";
    case coordinator_phase::freezing: return "freezing";
    case coordinator_phase::collecting: return "collecting";
    case coordinator_phase::stopping: return "stopping";
    case coordinator_phase::finishing: return "finishing";
  }
  return "?";
}

namespace {

// The moves of coordinator_phase's table (actors/coordinator_state.hpp).
bool allowed(coordinator_phase from, coordinator_phase to) {
  using p = coordinator_phase;
  switch (to) {
    case p::starting: return false;
    case p::running: return from == p::starting || from == p::collecting;
    case p::freezing: return from == p::running;
    case p::collecting: return from == p::freezing;
    case p::stopping: return from == p::running || from == p::freezing || from == p::collecting;
    case p::finishing: return from != p::finishing;
  }
  return false;
}

}  // namespace

void coordinator_state::move_to(coordinator_phase next) {
  if (!allowed(phase_, next))
    throw std::logic_error(std::string("coordinator: no move from ") + to_string(phase_) + " to " + to_string(next));
  phase_ = next;
}

void coordinator_state::release(worker_id w, bool pull) {
  if (!waiting(w))
    return;
  auto i = idx(w);
  set_waiting(i, false);
  slots_[i].pending_release = 0;
  if (weights_stale_)
    send_worker_weights();
  proceed p{ending(), pull, pullable_version(), slots_[i].batch, slots_[i].accepted, local_step_, overlap_,
            local_rate()};
  if (slots_[i].promise.pending() || slots_[i].held_for_resume) {
    if (slots_[i].waiting_since < event)
      barrier_in_event = true;  // someone was held across events: a barrier opened
    if (holding() || slots_[i].held_for_resume || shard_syncs_pending_ > 0) {
      slots_[i].deferred = p;  // delivered once the checkpoint is taken, the worker is back or the shards synced
      return;
    }
    answer(slots_[i].promise, i, p);
    slots_[i].promise = caf::typed_response_promise<proceed>{};
  } else if (shard_syncs_pending_ > 0) {
    slots_[i].deferred_start = p;
  } else {
    start(i, p);
  }
}

void coordinator_state::deliver_deferred() {
  if (holding() || shard_syncs_pending_ > 0)
    return;
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].deferred && slots_[i].promise.pending() && !slots_[i].held_for_resume) {
      answer(slots_[i].promise, i, *slots_[i].deferred);
      slots_[i].promise = caf::typed_response_promise<proceed>{};
      slots_[i].deferred.reset();
    }
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].deferred_start) {
      start(i, *slots_[i].deferred_start);
      slots_[i].deferred_start.reset();
    }
  flush_ops();
}

void coordinator_state::sync_remote_shards() {
  bool remote = std::any_of(cfg->ps.shards.begin(), cfg->ps.shards.end(),
                            [&](const ps_actor& s) { return s && s.node() != self->node(); });
  if (!remote)
    return;  // in this process, mailbox order already holds
  for (auto& shard : cfg->ps.shards) {
    ++shard_syncs_pending_;
    auto done = [this] {
      if (--shard_syncs_pending_ == 0)
        deliver_deferred();
    };
    self->request(shard, caf::infinite, sync_atom::value).then([done](bool) { done(); }, [done](caf::error&) { done(); });
  }
}

void coordinator_state::send_worker_weights() {
  weights_stale_ = false;
  // Weight rule: a push counts b_i / (sum of the live workers' batches),
  // which is 1/n when every batch is the same.
  double total = 0;
  for (auto& s : slots_)
    if (s.live)
      total += s.batch;
  std::vector<float> wts(slots_.size(), 0.0f);
  for (size_t i = 0; i < slots_.size(); ++i)
    wts[i] = slots_[i].live && total > 0 ? static_cast<float>(slots_[i].batch / total) : 0.0f;
  to_shards(weights_atom::value, wts);
}

void coordinator_state::report(std::string line, bool event) {
  progress_report r{std::move(line), samples_, std::min(run_fraction(), 1.0), last_accuracy, event};
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
  std::snprintf(acc, sizeof acc, "acc=%.4f", std::max(last_accuracy, 0.0));
  std::snprintf(line, sizeof line, "[%s] %-6s t=%9.2fs samples=%9llu (%5.1f%%) %s", cfg->protocol_name.c_str(),
                what.c_str(), now(), static_cast<unsigned long long>(samples_), std::min(pct, 100.0),
                last_accuracy < 0 && !last_measure.empty() ? last_measure.c_str() : acc);
  report(line);
}

}  // namespace syncpoint
