// What the coordinator tells a parameter server (or a shard, or a copy) beside
// pushes and pulls, and how one starts: its members, the mode, commits and
// publishes, the run's stop, momentum, the evaluator's snapshots, and a
// resumed shard's rows (actors/parameter_server.cpp holds the pushes and pulls).
#include "actors/ps_rows.hpp"
#include "actors/ps_state.hpp"
#include "actors/ps_update.hpp"
#include "core/index_ranges.hpp"

#include <algorithm>
#include <cmath>

namespace syncpoint {

void start_state(ps_state& st, ps_config cfg) {
  st.w = std::make_shared<std::vector<float>>(std::move(cfg.initial));
  st.link = link_model(cfg.bandwidth, cfg.latency_s);
  st.velocity.assign(st.w->size(), 0.0f);
  if (cfg.optimizer.adaptive())
    st.second.assign(st.w->size(), 0.0f);
  st.worker_weight.assign(static_cast<size_t>(cfg.workers), 1.0f / static_cast<float>(cfg.workers));
  st.cfg = std::move(cfg);
  st.serving = st.cfg.copy == 0 && st.cfg.serving;
  st.lr = st.scheduled_lr();
  if (st.cfg.model_size == 0)
    st.cfg.model_size = st.w->size();
  {  // where this slice's buffers begin
    auto parameters = st.cfg.model_size - std::min(st.cfg.buffers, st.cfg.model_size);
    st.trained = static_cast<size_t>(std::clamp<uint64_t>(parameters, st.cfg.offset, st.cfg.offset + st.w->size()) -
                                     st.cfg.offset);
  }
  make_tables(st);
  remember_samples(st);  // version 0 has seen none
  if (st.cfg.resume)
    restore(st, *st.cfg.resume);
  if (st.cfg.resume_rows)
    st.cfg.resume_rows([&](const saved_rows& chunk) { load_rows_chunk(st, chunk); });
}

caf::result<uint64_t> take_resumed_rows(ps_state& st, const saved_rows& chunk) {
  if (!st.cfg.resume || st.cfg.resume_rows)
    return make_error(sp_error::bad_input, "rows of a checkpoint sent to " + who(st) +
                                             ", which was not resumed from one on a node");
  try {
    load_rows_chunk(st, chunk);
  } catch (const std::exception& e) {
    return make_error(sp_error::bad_input, who(st) + ": " + e.what());
  }
  uint64_t rows = 0;
  for (auto& t : st.tables)
    rows += t.rows();
  return rows;
}

void attach(ps_state& st, coordinator_actor coordinator, const std::vector<worker_actor>& workers) {
  st.coordinator = std::move(coordinator);
  st.members.clear();
  st.member_ids.clear();
  for (auto& w : workers) {
    st.members.push_back(caf::actor_cast<caf::actor_addr>(w));
    if (w)  // a vacant id (an elastic job short of slots) has no handle yet
      st.member_ids.emplace(st.members.back(), static_cast<worker_id>(st.members.size() - 1));
  }
}

void change_mode(ps_ptr self, ps_mode m) {
  auto& st = self->state;
  close_round(st);  // a gated round's step is complete before the mode changes
  if (m != ps_mode::buffered)
    commit(self, false);  // never strand buffered pushes
  rescale_velocity(st, st.mode, m);
  st.mode = m;
  if (m == ps_mode::gated)
    publish(self);  // what pulls see until the next publish
  else
    answer_pulls(self);
}

void release_waiting_pulls(ps_ptr self) {
  auto& st = self->state;
  // (Every shard of several stops at one point of the sequence: one version.)
  for (auto& kv : st.waiting_pulls)
    send_weights(self, std::move(kv.second), pullable_weights(st));
  st.waiting_pulls.clear();
}

void set_momentum(ps_state& st, double mu, bool clear, uint32_t ramp_steps) {
  st.cfg.momentum = mu;
  if (clear)
    std::fill(st.velocity.begin(), st.velocity.end(), 0.0f);
  st.ramp_steps = ramp_steps;
  st.ramp_done = 0;
}

void send_snapshot(ps_ptr self, const evaluator_actor& evaluator, uint64_t samples, bool final, uint64_t id) {
  auto& st = self->state;
  self->send(evaluator, snapshot{st.version, since(self, st.cfg.origin), samples, final, published(st),
                                 st.cfg.offset, st.cfg.model_size, st.cfg.shard, st.cfg.shards, id, eval_rows(st)});
}

void publish(ps_ptr self) {
  auto& st = self->state;
  close_round(st);
  st.visible = published(st);
  st.visible_version = st.version;
  keep_served(st);
  answer_pulls(self);
}

void trace_rate(ps_ptr self) {
  auto& st = self->state;
  if (!is_lead(st) || !st.cfg.schedule.varies())
    return;
  bool moved = st.lr_traced < 0 || std::abs(st.lr - st.lr_traced) >= 0.01 * st.cfg.schedule.base ||
               st.lr > 2 * st.lr_traced || st.lr < 0.5 * st.lr_traced;
  if (!moved)
    return;
  st.lr_traced = st.lr;
  auto now = since(self, st.cfg.origin);
  trace(self, {"lr", -1, now, now, st.samples_applied, st.version + 1, st.lr});  // the version it makes
}

void commit(ps_ptr self, bool new_version_even_if_empty) {
  auto& st = self->state;
  if (st.buffered.empty()) {
    if (new_version_even_if_empty) {
      ++st.version;
      remember_samples(st);
      answer_pulls(self);
    }
    return;
  }
  // The round steps what its pushes carried (all, unless every one was a fragment's).
  st.only = clip_ranges(st.round_ranges, st.cfg.offset, st.cfg.offset + st.w->size());
  if (ranges_size(st.only) == st.w->size())
    st.only.clear();  // all of it
  else if (st.only.empty())
    st.only = {0, 0};  // none of it
  step_round(st);
  st.only.clear();
  st.round_ranges.clear();
  trace_rate(self);
  auto now = since(self, st.cfg.origin);
  for (auto& p : st.buffered)
    if (is_lead(st))
      trace(self, {"apply", p.worker, now, now, p.iter, st.version + 1,
                 static_cast<double>(st.version - p.base_version)});
  ++st.version;
  remember_samples(st);
  st.buffer_weight = 0;
  st.buffer_taken = 0;
  st.buffer_share = 0;
  st.buffered.clear();
  answer_pulls(self);
}

}  // namespace syncpoint
