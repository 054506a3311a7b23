// The coordinator's state (actors/coordinator_state.hpp): its answers to
// the protocol that take more than a line, and its reports.
#include "actors/coordinator_state.hpp"

#include <cstdio>

namespace syncpoint {

void coordinator_state::release(worker_id w, bool pull) {
  if (!waiting(w))
    return;
  auto i = idx(w);
  set_waiting(i, false);
  pending_release_[i] = 0;
  if (weights_stale_)
    send_worker_weights();
  proceed p{stopping, pull, pullable_version(), batch_[i], accepted_[i], local_step_, overlap_,
            local_step_ && cfg->schedule.varies() ? cfg->schedule.at(samples_) : 0.0};
  if (promise_[i].pending() || held_for_resume_[i]) {
    if (waiting_since_[i] < event)
      barrier_in_event = true;  // someone was held across events: a barrier opened
    if (freezing || held_for_resume_[i] || shard_syncs_pending_ > 0) {
      deferred_[i] = p;  // delivered once the checkpoint is taken, the worker is back or the shards synced
      return;
    }
    answer(promise_[i], i, p);
    promise_[i] = caf::typed_response_promise<proceed>{};
  } else if (shard_syncs_pending_ > 0) {
    deferred_start_[i] = p;
  } else {
    start(i, p);
  }
}

void coordinator_state::deliver_deferred() {
  if (freezing || shard_syncs_pending_ > 0)
    return;
  for (size_t i = 0; i < deferred_.size(); ++i)
    if (deferred_[i] && promise_[i].pending() && !held_for_resume_[i]) {
      answer(promise_[i], i, *deferred_[i]);
      promise_[i] = caf::typed_response_promise<proceed>{};
      deferred_[i].reset();
    }
  for (size_t i = 0; i < deferred_start_.size(); ++i)
    if (deferred_start_[i]) {
      start(i, *deferred_start_[i]);
      deferred_start_[i].reset();
    }
  flush_ops();
}

void coordinator_state::sync_remote_shards() {
  bool remote = std::any_of(cfg->ps.shards.begin(), cfg->ps.shards.end(),
                            [&](const ps_actor& s) { return s && s.node() != self->node(); });
  if (!remote)
    return;  // in this process, mailbox order already holds
  if (deferred_start_.size() != deferred_.size())
    deferred_start_.assign(deferred_.size(), std::nullopt);
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
  for (size_t i = 0; i < live_.size(); ++i)
    if (live_[i])
      total += batch_[i];
  std::vector<float> wts(live_.size(), 0.0f);
  for (size_t i = 0; i < live_.size(); ++i)
    wts[i] = live_[i] && total > 0 ? static_cast<float>(batch_[i] / total) : 0.0f;
  to_shards(weights_atom::value, wts);
}

void coordinator_state::report(std::string line, bool event) {
  progress_report r{std::move(line), samples_, std::min(run_fraction(), 1.0), last_accuracy, event};
  tell_observers(progress_atom::value, r);
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
  std::snprintf(line, sizeof line, "[%s] %-6s t=%9.2fs samples=%9llu (%5.1f%%) acc=%.4f",
                cfg->protocol_name.c_str(), what.c_str(), now(),
                static_cast<unsigned long long>(samples_), std::min(pct, 100.0),
                std::max(last_accuracy, 0.0));
  report(line);
}

}  // namespace syncpoint
