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
void answer_refusal(coordinator_ptr self, const push_info& info, caf::typed_response_promise<proceed>& reply) {
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

// Shard `shard` took the push's slice in or refused it (the lead's report
// carries the worker's reply). One PS's report is the whole push. With K
// shards the push counts once, when the last reports: then every shard holds
// its slice, and the apply op queued now reaches every shard before anything
// the protocol decides on it. If any shard refused, every shard drops it.
void shard_reported(coordinator_ptr self, const push_info& info, uint32_t shard,
                    caf::typed_response_promise<proceed> reply) {
  auto& st = self->state;
  auto shards = static_cast<uint32_t>(st.cfg->ps.size());
  if (shards <= 1) {
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
    if (reply.pending())
      reply.deliver(proceed{true, false, 0, 0, info.accepted});
    return;
  }
  auto key = std::make_pair(info.worker, info.iter);
  auto& p = st.ps.partial[key];
  if (p.reports++ == 0) {
    p.info = info;
    p.info.refused.clear();
  }
  p.info.accepted = std::max(p.info.accepted, info.accepted);  // in once the last shard has it
  if (shard == 0) {
    p.lead_in = true;
    p.reply = std::move(reply);
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
    if (p.reports == shards)
      st.ps.partial.erase(key);
    st.flush_ops();
    return;
  }
  if (p.reports < shards)
    return;
  auto done = std::move(p);
  st.ps.partial.erase(key);
  st.ps.applied(info.worker, info.iter);
  done.info.version = st.ps.version();
  on_pushed(self, done.info, std::move(done.reply));
  st.flush_ops();
}

// -- the sequence ---------------------------------------------------------------

void coordinator_state::flush_ops() {
  if (!ps.ops_queued())
    return;
  auto ops = ps.take_ops();
  for (auto& shard : cfg->ps.shards)
    self->send(shard, sequence_atom::value, ops);
}

void coordinator_state::answer(caf::typed_response_promise<proceed>& rp, size_t i, proceed p) {
  serve(i, p);
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
