// A shard of several under the coordinator's sequence (docs/architecture.md,
// "Shards"): a push is every shard's or none's, and a pull gets one version
// from every shard.
//
// Each shard stages its slice of a push when it arrives and reports it (or
// why it refused it). The coordinator, once all K reports are in, sends every
// shard the same ops in the same order:
//   apply(worker, iter)   every shard has its slice: take it into the model;
//   drop(worker, iter)    a shard refused its slice: forget it (iter = all:
//                         the worker is gone, forget everything of it);
//   serve(worker, v)      the worker was released to pull version v.
// Every shard thus applies the same pushes in the same order and holds the
// same version at each point of the sequence. A pull names the version of its
// release, and each shard answers it with exactly that version: the current
// one, one it holds for the worker since the serve op, or one it waits for.
#include "actors/ps_state.hpp"
#include "actors/ps_rows.hpp"

#include <cstdio>
#include <string>

namespace syncpoint {

namespace {

std::string shard_name(const ps_state& st) {
  return "shard " + std::to_string(st.cfg.shard) + " of the parameter server";
}

// The coordinator's sequence and this shard disagree. Serving or applying
// anything else would mix or lose pushes: the shard stops, and the
// coordinator fails the run, naming it.
void broken(ps_ptr self, const std::string& what) {
  auto why = shard_name(self->state) + ": " + what + " (the shards' sequence is broken)";
  std::fprintf(stderr, "parameter server: %s\n", why.c_str());
  self->quit(make_error(sp_error::bad_input, why));
}

bool apply_staged(ps_ptr self, worker_id w, uint64_t iter) {
  auto& st = self->state;
  auto i = st.staged.find({w, iter});
  if (i == st.staged.end()) {
    broken(self, "told to apply push " + std::to_string(iter) + " of worker " + std::to_string(w) +
                   ", which it does not hold");
    return false;
  }
  auto g = std::move(i->second);
  st.staged.erase(i);
  take_in(self, g);
  return true;
}

void drop_staged(ps_ptr self, worker_id w, uint64_t iter) {
  auto& st = self->state;
  if (iter != shard_op::all) {
    st.staged.erase({w, iter});
    return;
  }
  st.staged.erase(st.staged.lower_bound({w, 0}), st.staged.lower_bound({w + 1, 0}));
  st.to_serve.erase(w);
  st.served_early.erase(w);
  for (auto i = st.waiting_pulls.begin(); i != st.waiting_pulls.end();)
    if (i->second.worker == w)
      i = st.waiting_pulls.erase(i);  // its worker is gone: nobody waits for the reply
    else
      ++i;
}

bool hold_for(ps_ptr self, worker_id w, uint64_t version) {
  auto& st = self->state;
  if (pullable_version(st) != version) {
    broken(self, "told to serve version " + std::to_string(version) + " to worker " + std::to_string(w) +
                   ", but it holds version " + std::to_string(pullable_version(st)));
    return false;
  }
  auto early = st.served_early.find(w);
  if (early != st.served_early.end() && early->second == version) {
    st.served_early.erase(early);  // the pull came first, and had this version
    return true;
  }
  st.to_serve[w] = pullable_weights(st);  // shared: the next update writes a spare
  keep_served(st);                        // ... and its rows stay as they are now for it
  return true;
}

}  // namespace

void run_sequence(ps_ptr self, std::vector<shard_op>& ops) {
  for (auto& op : ops) {
    bool ok = true;
    switch (op.kind) {
      case shard_op::apply:
        ok = apply_staged(self, op.worker, op.n);
        break;
      case shard_op::drop:
        drop_staged(self, op.worker, op.n);
        break;
      case shard_op::serve:
        ok = hold_for(self, op.worker, op.n);
        break;
      default:
        broken(self, "an op of unknown kind " + std::to_string(op.kind));
        ok = false;
    }
    if (!ok)
      return;
  }
}

caf::result<weights> take_sequenced_pull(ps_ptr self, worker_id w, uint64_t version, uint64_t charged,
                                         std::vector<row_block> asked) {
  auto& st = self->state;
  pending_pull p{w, self->make_response_promise<weights>(), charged, std::move(asked)};
  auto rp = p.reply;
  auto held = st.to_serve.find(w);
  if (held != st.to_serve.end() && held->second.version < version) {
    st.to_serve.erase(held);  // an older release whose pull went another way (a process's shared pull)
    held = st.to_serve.end();
  }
  if (held != st.to_serve.end()) {
    if (held->second.version != version)
      return make_error(sp_error::bad_input, shard_name(st) + ": worker " + std::to_string(w) + " pulls version " +
                                               std::to_string(version) + ", but was released to version " +
                                               std::to_string(held->second.version));
    auto out = std::move(held->second);
    st.to_serve.erase(held);
    send_weights(self, std::move(p), std::move(out));
    return rp;
  }
  auto now = pullable_version(st);
  if (version == now) {
    st.served_early[w] = version;
    send_weights(self, std::move(p), pullable_weights(st));
  } else if (version > now) {
    st.waiting_pulls.emplace(version, std::move(p));  // answered when the sequence gets there
  } else {
    return make_error(sp_error::bad_input, shard_name(st) + " holds no version " + std::to_string(version) +
                                             " for worker " + std::to_string(w) + " (it is at version " +
                                             std::to_string(now) + ")");
  }
  return rp;
}

void answer_sequenced_pulls(ps_ptr self) {
  auto& st = self->state;
  auto now = pullable_version(st);
  auto last = st.waiting_pulls.upper_bound(now);
  for (auto i = st.waiting_pulls.begin(); i != last; ++i) {
    auto& p = i->second;
    if (i->first != now) {  // versions move one at a time, or to a published one: never past a release's
      p.reply.deliver(make_error(sp_error::bad_input, shard_name(st) + " went past version " +
                                                        std::to_string(i->first) + " before a pull of it was served"));
      continue;
    }
    if (p.worker >= 0)
      st.served_early[p.worker] = now;
    send_weights(self, std::move(p), pullable_weights(st));
  }
  st.waiting_pulls.erase(st.waiting_pulls.begin(), last);
}

}  // namespace syncpoint
