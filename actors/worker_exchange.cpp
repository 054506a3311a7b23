// A worker's messages to the PS shards and how their replies are read; what
// the worker does with them is its step's (actors/worker_step.cpp). A
// gradient goes out as one slice per shard, and the reply that counts is the
// lead shard's (the coordinator's word); a pull gathers one version's slices
// into one model. With one shard, the gradient is moved and the pulled model
// adopted as they are. A replicated shard's copies lost and made, and a
// resumed worker's requests asked again, are here too.
#include "actors/worker_state.hpp"
#include "core/shared_floats.hpp"

#include <algorithm>
#include <cstdint>

namespace syncpoint {

namespace {

// The reply to a push `seq` (or to its resumption after a checkpoint) from
// one shard: the lead's carries the coordinator's word (`decides`), accepted
// or refused; another shard's only says it has the slice (a refused slice it
// reports to the coordinator, whose word comes through the lead).
template <class Handle>
void expect_proceed(worker_ptr self, Handle&& reply, uint64_t seq, bool decides) {
  std::move(reply).then(
    [=](const proceed& p) {
      auto& st = self->state;
      if (!decides || seq != st.push_seq || !st.pipe.pushing())
        return;
      answered(self);
      if (p.refused.empty())
        push_accepted(self, p);
      else
        push_refused(self, p, p.refused);
    },
    [=](caf::error& err) {
      auto& st = self->state;
      if (seq != st.push_seq || !st.pipe.pushing())
        return;  // the push is over (another shard refused it first)
      if (st.cfg.ps.replicas() > 0 && err.category() != caf::atom("syncpoint"))
        return;  // a copy of a replicated shard went: the others have the push, the coordinator says who serves
      answered(self);
      if (err.category() == caf::atom("syncpoint")) {
        // A PS on its own refused it (or a shard would not take it from this
        // worker): drop it, resync, go on.
        proceed p;  // drop it, pull, and go on with the work as it was
        p.work = st.local.work;
        p.lr = st.local.rate;
        p.samples = st.local.release_samples;
        p.live = st.local.release_live;
        push_refused(self, p, self->system().render(err));
        return;
      }
      leave(self, std::move(err));  // PS unreachable: the coordinator sees us go
    });
}

}  // namespace

// The gradient in hand goes to the shards: with one shard, itself; with K,
// a slice to each copy of each shard, as views of it. The lead's answer is the one that counts.
void send_push(worker_ptr self) {
  auto& st = self->state;
  asked(self, "push");
  auto seq = ++st.push_seq;
  auto& ps = st.cfg.ps;
  st.push_bytes = 0;
  st.push_relays.clear();
  bool fragment = st.local.built_work.fragments > 1;
  // A compressed slice or a fragment says its bytes, a sparse model's keys and rows included (the
  // link model charges them); a plain one, none.
  auto wire = [&](size_t k, const std::vector<row_block>& rows) {
    auto b = slice_bytes(st, k) + row_wire_bytes(st, rows);
    st.push_bytes += static_cast<double>(b);
    return st.cfg.compress || fragment ? b : uint64_t{0};
  };
  if (!ps.sequenced()) {  // the gradient itself goes, no copy
    auto bytes = wire(0, st.row_grads);
    gradient_push g{st.cfg.id, st.iter, st.grad_version, static_cast<uint32_t>(st.samples), std::move(st.grad), bytes,
                    slice_ranges(st, 0, st.local.built_work), std::move(st.row_grads)};
    st.grad = {};
    st.row_grads = {};
    st.push_relays.push_back(ps.lead().address());
    expect_proceed(self, self->request(ps.lead(), caf::infinite, push_atom::value, std::move(g)), seq, true);
    return;
  }
  auto whole = handed_back_floats(std::move(st.grad)).shared();  // the next gradient's buffer once all let go
  st.grad = {};
  for (size_t k = 0; k < ps.size(); ++k) {
    auto rows = st.widths.empty() ? std::vector<row_block>{} : row_gradients_for(st, k);
    auto bytes = wire(k, rows);
    gradient_push g{st.cfg.id, st.iter, st.grad_version, static_cast<uint32_t>(st.samples),
                    float_slice(whole, ps.begin(k), ps.end(k)), bytes, slice_ranges(st, k, st.local.built_work),
                    std::move(rows)};
    for (auto& copy : ps.members(k)) {  // a copy of the lead hands the request on too: any of them answers
      if (k == 0)
        st.push_relays.push_back(copy.address());
      expect_proceed(self, self->request(copy, caf::infinite, push_atom::value, g), seq, k == 0);
    }
  }
}

namespace {

// A buffer for the next pulled model that nobody else holds (the model may
// still hold the last one).
std::shared_ptr<std::vector<float>> pull_buffer(worker_state& st, size_t n) {
  if (!sole_owner(st.pulled))
    std::swap(st.pulled, st.spare);
  if (!sole_owner(st.pulled))
    st.pulled = std::make_shared<std::vector<float>>(n);
  st.pulled->resize(n);
  return st.pulled;
}

// The reply to pull `seq` from shard `k`: the whole model (one shard) or
// shard k's slice, which lands in place; the pull is over when every slice is in.
template <class Handle>
void expect_weights(worker_ptr self, Handle&& reply, uint64_t seq, size_t k) {
  std::move(reply).then(
    [=](weights& w) {
      auto& st = self->state;
      if (seq != st.pull_seq || !st.pipe.pulling())
        return;
      auto& ps = st.cfg.ps;
      if (ps.sequenced() && st.slice_in[k])
        return;  // a replica asked again, and the lost primary's answer came after all
      if (!st.widths.empty()) {
        try {
          rows_came(st, w.rows);
        } catch (const std::exception& e) {
          leave(self, make_error(sp_error::bad_input, "worker " + std::to_string(st.cfg.id) + ": shard " +
                                                        std::to_string(k) + ": " + e.what()));
          return;
        }
      }
      if (!ps.sequenced()) {
        answered(self);
        pulled(self, w.version, w.values.shared());
        return;
      }
      if (w.values.size() != ps.end(k) - ps.begin(k)) {
        leave(self, make_error(sp_error::wrong_size, "worker " + std::to_string(st.cfg.id) + ": shard " +
                                                       std::to_string(k) + " sent " + std::to_string(w.values.size()) +
                                                       " weights, not " + std::to_string(ps.end(k) - ps.begin(k))));
        return;
      }
      // Every shard serves the version of the worker's release: a pull never mixes versions.
      if (st.pull_version != UINT64_MAX && w.version != st.pull_version) {
        leave(self, make_error(sp_error::bad_input, "worker " + std::to_string(st.cfg.id) + ": shard " +
                                                      std::to_string(k) + " sent version " + std::to_string(w.version) +
                                                      " of the model, another shard version " +
                                                      std::to_string(st.pull_version) +
                                                      ": the slices of one pull must be of one version"));
        return;
      }
      std::copy(w.values.data(), w.values.data() + w.values.size(), st.pulled->data() + ps.begin(k));
      st.slice_in[k] = true;
      st.pull_version = w.version;
      if (--st.pull_left == 0) {
        answered(self);
        pulled(self, st.pull_version, st.pulled);
      }
    },
    [=](caf::error& err) {
      if (seq != self->state.pull_seq)
        return;
      if (self->state.cfg.ps.replicas() > 0 && err.category() != caf::atom("syncpoint"))
        return;  // the primary went: its replica is asked once the coordinator says it serves
      answered(self);
      leave(self, std::move(err));
    });
}

// Asks shard k's primary for its slice of pull `seq`.
void ask_slice(worker_ptr self, size_t k, uint64_t seq, uint64_t min_version, bool resumed) {
  auto& st = self->state;
  auto& shard = st.cfg.ps.shards[k];
  if (st.pull_from.size() != st.cfg.ps.size())
    st.pull_from.resize(st.cfg.ps.size());
  st.pull_from[k] = caf::actor_cast<caf::actor_addr>(shard);
  bool fragment = st.local.pushed_work.fragments > 1;  // the link charges the fragment it merges
  if (resumed)
    expect_weights(self, self->request(shard, caf::infinite, pull_atom::value, resume_atom::value, min_version), seq,
                   k);
  else if (fragment)
    expect_weights(
      self,
      self->request(shard, caf::infinite, pull_atom::value, min_version, slice_ranges(st, k, st.local.pushed_work)),
      seq, k);
  else if (!st.widths.empty())  // a sparse model: the rows of the next step's keys this shard keeps
    expect_weights(self, self->request(shard, caf::infinite, pull_atom::value, min_version, st.rows_asked[k]), seq, k);
  else
    expect_weights(self, self->request(shard, caf::infinite, pull_atom::value, min_version), seq, k);
}

}  // namespace

// Asks every shard for its slice of a version >= min_version (`resumed`: the
// pull the worker waited for when the checkpoint was taken, of which only
// the slices that had not come yet).
void send_pull(worker_ptr self, uint64_t min_version, bool resumed) {
  auto& st = self->state;
  asked(self, "pull");
  auto seq = ++st.pull_seq;
  auto& ps = st.cfg.ps;
  if (ps.sequenced() && !resumed) {
    pull_buffer(st, ps.model_size());
    st.pull_left = ps.size();
    st.pull_version = UINT64_MAX;
    st.slice_in.assign(ps.size(), false);
  }
  for (size_t k = 0; k < ps.size(); ++k)
    if (!ps.sequenced() || !st.slice_in[k])
      ask_slice(self, k, seq, min_version, resumed);
}

void copy_lost(worker_ptr self, size_t shard, size_t copy, ps_actor primary) {
  auto& st = self->state;
  auto& ps = st.cfg.ps;
  if (shard >= ps.size() || copy >= ps.replicas() + 1 || !primary)
    return;
  auto gone = ps.copies[shard][copy].address();
  ps.copies[shard][copy] = nullptr;
  // The coordinator gives a lost primary's place to the first live copy; this
  // worker's handle of it (a proxy on the bulk channel, or `primary` itself).
  auto live = ps.members(shard);
  ps.shards[shard] = live.empty() ? primary : live.front();
  // A pull the lost primary may not answer: asked again of the one that serves now
  // (which holds the version of the worker's release: the coordinator's sequence reached it too).
  if (st.pipe.pulling() && shard < st.slice_in.size() && !st.slice_in[shard] && shard < st.pull_from.size()
      && st.pull_from[shard] != caf::actor_cast<caf::actor_addr>(ps.shards[shard]))
    ask_slice(self, shard, st.pull_seq, st.pull_min_version, false);
  // The push's answer comes back through the lead's copies that took it: with
  // the last of them lost, it would never come (a reply relayed by a process
  // that died), so the copy that serves now asks the coordinator for it.
  auto& relays = st.push_relays;
  relays.erase(std::remove(relays.begin(), relays.end(), gone), relays.end());
  if (shard == 0 && st.pipe.pushing() && relays.empty() && ps.shards[0]) {
    relays.push_back(ps.shards[0].address());
    expect_proceed(self, self->request(ps.shards[0], caf::infinite, push_atom::value, resume_atom::value, st.iter),
                   st.push_seq, true);
  }
}

void copy_added(worker_ptr self, uint32_t shard, uint32_t copy, caf::actor handle, const std::string& bulk) {
  auto& st = self->state;
  auto& ps = st.cfg.ps;
  if (shard >= ps.copies.size() || copy >= ps.copies[shard].size() || !handle)
    return;
  auto& known = st.added_copies[{shard, copy}];
  if (known == handle)
    return;  // heard of already (a worker that joined late may hear twice)
  known = handle;
  auto typed = caf::actor_cast<ps_actor>(handle);
  auto reached = st.cfg.reach_copy ? st.cfg.reach_copy(typed, bulk, ps.end(shard) - ps.begin(shard)) : typed;
  if (reached == ps.copies[shard][copy])
    return;  // it started with it (joined after the copy was made)
  if (reached != typed)
    st.own_proxies->push_back(caf::actor_cast<caf::actor>(reached));  // ended with the worker
  ps.copies[shard][copy] = reached;
}

void ask_again(worker_ptr self) {
  auto& st = self->state;
  auto& ps = st.cfg.ps;
  if (st.pipe.pushing()) {
    asked(self, "push");
    auto seq = ++st.push_seq;
    st.push_relays.clear();
    // Every copy that took the push: one may still have it on its link. The
    // lead's serving copy carries the coordinator's word.
    for (size_t k = 0; k < ps.size(); ++k)
      for (auto& copy : ps.members(k)) {
        if (k == 0 && copy == ps.shards[0])  // (the lead's other copies have nothing to say to a resumed push)
          st.push_relays.push_back(copy.address());
        expect_proceed(self, self->request(copy, caf::infinite, push_atom::value, resume_atom::value, st.iter), seq,
                       k == 0 && copy == ps.shards[0]);
      }
  }
  if (st.pipe.pulling())
    send_pull(self, st.pull_min_version, true);
}

}  // namespace syncpoint
