// The coordinator's side of a sharded PS (docs/architecture.md, "Shards"):
// each shard's report of a push, accepted or refused; a push counts once,
// when every shard has it, or is dropped by all when one refused it; and the
// ops every shard takes in the coordinator's order (actors/ps_sequence.cpp
// is the shards' side).
#include "actors/coordinator_state.hpp"

#include <algorithm>

namespace syncpoint {

namespace {

// A refused push is counted once and traced once,
void count_refusal(coordinator_ptr self, const push_info& info) {
  auto& st = self->state;
  ++st.rejected;
  auto t = since(self, st.cfg->origin);
  st.trace({"rejected", info.worker, t, t, info.iter, st.ps.version(), 0, info.refused});
}

// ... and its worker is told why. It drops the gradient and pulls (on a
// sharded PS, the version of now, which every shard holds for it); the
// protocol never sees the push.
void answer_refusal(coordinator_ptr self, const push_info& info, push_reply& reply) {
  auto& st = self->state;
  if (!reply.pending())
    return;
  auto p = st.release_of(coordinator_state::idx(info.worker), true);
  p.batch = 0;
  p.accepted = info.accepted;
  p.refused = info.refused;
  st.answer(reply, coordinator_state::idx(info.worker), p);
}

}  // namespace

namespace {

// Whether every shard holds the push: K reports, or with replicas a report
// from every copy still there (a lost copy's report is not waited for).
bool everyone_has(const ps_group& ps, const ps_sequence::partial_push& p) {
  if (ps.copies.empty())
    return p.reports >= ps.size();
  auto per = ps.replicas() + 1;
  for (size_t k = 0; k < ps.size(); ++k)
    for (size_t r = 0; r < per; ++r)
      if (ps.copies[k][r] && !p.in[k * per + r])
        return false;
  return true;
}

// Every shard holds it: the push counts, and the apply op queued now reaches
// every shard before anything the protocol decides on it.
void count_push(coordinator_ptr self, std::pair<worker_id, uint64_t> key) {
  auto& st = self->state;
  auto done = std::move(st.ps.partial[key]);
  st.ps.partial.erase(key);
  st.ps.applied(key.first, key.second);
  done.info.version = st.ps.version();
  on_pushed(self, done.info, std::move(done.reply));
}

}  // namespace

// Copy `copy` of shard `shard` took the push's slice in or refused it (a
// report of the lead's copies carries the worker's reply). One PS's report is
// the whole push. With K shards the push counts once every shard (every live
// copy of it) has reported. If any refused, every shard drops it.
void shard_reported(coordinator_ptr self, const push_info& info, uint32_t shard, uint32_t copy, push_reply reply) {
  auto& st = self->state;
  auto& ps = st.cfg->ps;
  if (!ps.sequenced()) {
    if (info.refused.empty()) {
      on_pushed(self, info, std::move(reply));
    } else {
      count_refusal(self, info);
      answer_refusal(self, info, reply);
    }
    return;
  }
  if (!st.live(info.worker)) {  // a late slice of a worker declared lost: nothing of it stays
    st.ps.queue(shard_op::drop, info.worker, info.iter);
    st.flush_ops();
    reply.deliver(proceed{true, false, 0, 0, info.accepted});
    return;
  }
  auto key = std::make_pair(info.worker, info.iter);
  auto& p = st.ps.partial[key];
  if (p.reports++ == 0) {
    p.info = info;
    p.info.refused.clear();
    p.in.assign(ps.size() * (ps.replicas() + 1), false);  // (a checkpoint keeps it: who must report still)
  }
  p.in[shard * (ps.replicas() + 1) + copy] = true;
  p.info.accepted = std::max(p.info.accepted, info.accepted);  // in once the last shard has it
  if (shard == 0) {
    p.lead_in = true;
    p.reply.add(std::move(reply));
  }
  bool refused_before = !p.info.refused.empty();
  if (!info.refused.empty() && !refused_before)
    p.info.refused = info.refused;
  if (!p.info.refused.empty()) {
    // Every shard forgets its slice, and one that stages it later does too.
    if (!refused_before || info.refused.empty())
      st.ps.queue(shard_op::drop, info.worker, info.iter);
    if (!refused_before)
      count_refusal(self, p.info);
    if (p.lead_in)
      answer_refusal(self, p.info, p.reply);  // now, or when the lead reports
    if (everyone_has(ps, p))
      st.ps.partial.erase(key);
    st.flush_ops();
    return;
  }
  if (!everyone_has(ps, p))
    return;
  count_push(self, key);
  st.flush_ops();
}

void recount_partials(coordinator_ptr self) {
  auto& st = self->state;
  std::vector<std::pair<worker_id, uint64_t>> complete;
  std::vector<std::pair<worker_id, uint64_t>> settled;  // refused, and every live copy has heard
  for (auto& [key, p] : st.ps.partial)
    if (everyone_has(st.cfg->ps, p))
      (p.info.refused.empty() ? complete : settled).push_back(key);
  for (auto& key : settled)
    st.ps.partial.erase(key);
  for (auto& key : complete)
    count_push(self, key);
  st.flush_ops();
}

// -- the sequence ---------------------------------------------------------------

void coordinator_state::flush_ops() {
  if (!ps.ops_queued())
    return;
  to_members(caf::make_message(sequence_atom::value, ps.take_ops()));
}

void coordinator_state::to_members(const caf::message& msg) {
  if (replacing.making && phase.is(coordinator_phase::replicating))
    replacing.missed.push_back(msg);
  for (auto& shard : cfg->ps.all_members())
    send_to(shard, msg);
}

void coordinator_state::send_to(const ps_actor& copy, const caf::message& msg) {
  // (A typed send takes its elements one by one: a message kept as one goes as one.)
  caf::actor_cast<caf::actor>(copy)->enqueue(self->ctrl(), caf::make_message_id(), msg, self->context());
}

void coordinator_state::answer(push_reply& rp, size_t i, proceed p) {
  serve(i, p);
  workers[i].answered_iter = workers[i].push_iter;
  workers[i].answered = p;
  rp.deliver(p);
}

void coordinator_state::start(size_t i, proceed p) {
  serve(i, p);
  self->send(workers[i].handle, p);
}

void coordinator_state::serve(size_t i, proceed& p) {
  if (!ps.sequenced() || !p.pull || p.stop)
    return;
  p.min_version = ps.pullable_version();  // released earlier and held back: the version of now
  ps.queue(shard_op::serve, static_cast<worker_id>(i), p.min_version);
}

}  // namespace syncpoint
