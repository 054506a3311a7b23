#include "actors/ps_update.hpp"

#include <stdexcept>

namespace syncpoint {

caf::result<proceed> resume_push(ps_ptr self, worker_id w, uint64_t iter) {
  if (w < 0)
    return make_error(sp_error::not_a_member, "a resumed push from an actor that is not a worker of this job");
  for (auto& [id, t] : self->state.in_transit)
    if (t.is_push && t.worker == w && t.push.iter == iter && !t.push_reply.pending()) {
      t.push_reply = self->make_response_promise<proceed>();
      return t.push_reply;
    }
  if (!self->state.coordinator)
    return make_error(sp_error::bad_input, "no push of worker " + std::to_string(w) + " to resume");
  return self->delegate(self->state.coordinator, pushed_atom::value, resume_atom::value, w);
}

caf::result<weights> resume_pull(ps_ptr self, worker_id w) {
  if (w < 0)
    return make_error(sp_error::not_a_member, "a resumed pull from an actor that is not a worker of this job");
  auto& st = self->state;
  for (auto& [id, t] : st.in_transit)
    if (!t.is_push && t.worker == w && !t.pull_reply.pending()) {
      t.pull_reply = self->make_response_promise<weights>();
      return t.pull_reply;
    }
  for (auto& [version, p] : st.waiting_pulls)
    if (p.worker == w && !p.reply.pending()) {
      p.reply = self->make_response_promise<weights>();
      return p.reply;
    }
  return make_error(sp_error::bad_input, "no pull of worker " + std::to_string(w) + " to resume");
}

saved_ps save(const ps_state& st) {
  saved_ps s;
  s.w = *st.w;
  s.velocity = st.velocity;
  s.round_step = st.round_step;
  s.buffer = st.buffer;
  if (!st.held.empty())  // saved folded, as a later push would fold it
    for (size_t i = 0; i < s.buffer.size(); ++i)
      s.buffer[i] = round_sum(st.buffer[i], st.buffer_scale, st.held[i], st.held_weight);
  s.worker_weight = st.worker_weight;
  s.visible = st.visible.vec();
  s.momentum = st.cfg.momentum;
  s.ramp_steps = st.ramp_steps;
  s.ramp_done = st.ramp_done;
  s.round_open = st.round_open;
  s.mean_staleness = st.mean_staleness;
  s.buffer_scale = st.held.empty() ? st.buffer_scale : 1.0f;
  s.buffer_weight = st.buffer_weight;
  for (auto& b : st.buffered)
    s.buffered.push_back({b.worker, b.iter, b.base_version});
  s.version = st.version;
  s.visible_version = st.visible_version;
  s.mode = static_cast<uint8_t>(st.mode);
  for (auto& [version, p] : st.waiting_pulls)  // in the order they are answered
    s.waiting_pulls.push_back({version, p.worker});
  s.link_free_at = st.link.free_at();
  for (auto& [id, t] : st.in_transit) {
    saved_transfer x;
    x.id = id;
    x.worker = t.worker;
    x.is_push = t.is_push;
    if (t.is_push) {
      x.push = t.push;
    } else {
      x.version = t.out.version;
      x.values = t.out.values.vec();
    }
    s.in_transit.push_back(std::move(x));
  }
  s.next_transfer = st.next_transfer;
  return s;
}

void restore(ps_state& st, const saved_ps& s) {
  auto n = st.w->size();
  if (s.w.size() != n || s.velocity.size() != n)
    throw std::invalid_argument("the checkpoint's parameter server holds " + std::to_string(s.w.size()) +
                                " weights, the model has " + std::to_string(n));
  if (s.worker_weight.size() != st.worker_weight.size())
    throw std::invalid_argument("the checkpoint has " + std::to_string(s.worker_weight.size()) +
                                " workers, the job " + std::to_string(st.worker_weight.size()));
  *st.w = s.w;
  st.velocity = s.velocity;
  st.round_step = s.round_step;
  st.buffer = s.buffer;
  st.worker_weight = s.worker_weight;
  st.visible = shared_floats(s.visible);
  st.cfg.momentum = s.momentum;
  st.ramp_steps = s.ramp_steps;
  st.ramp_done = s.ramp_done;
  st.round_open = s.round_open;
  st.mean_staleness = s.mean_staleness;
  st.buffer_scale = s.buffer_scale;
  st.held = {};
  st.held_weight = 0;
  st.buffer_weight = s.buffer_weight;
  st.buffered.clear();
  for (auto& b : s.buffered)
    st.buffered.push_back({b.worker, b.iter, b.base_version});
  st.version = s.version;
  st.visible_version = s.visible_version;
  if (s.mode > static_cast<uint8_t>(ps_mode::gated))
    throw std::invalid_argument("the checkpoint's parameter server mode is not one");
  st.mode = static_cast<ps_mode>(s.mode);
  st.waiting_pulls.clear();
  for (auto& p : s.waiting_pulls)  // equal versions keep their order: a multimap appends
    st.waiting_pulls.emplace(p.min_version, pending_pull{p.worker, {}});
  st.link.resume_at(s.link_free_at);
  st.in_transit.clear();
  for (auto& x : s.in_transit) {
    transit t;
    t.worker = x.worker;
    t.is_push = x.is_push;
    if (x.is_push)
      t.push = x.push;
    else
      t.out = weights{x.version, shared_floats(x.values)};
    st.in_transit.emplace(x.id, std::move(t));
  }
  st.next_transfer = s.next_transfer;
}

}  // namespace syncpoint
