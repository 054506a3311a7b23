// The coordinator's side of replicated shards (--ps-replicas R;
// docs/architecture.md, "Replicated shards"). Every copy of a shard takes the
// workers' pushes and the coordinator's whole sequence, and a push counts
// only once every live copy has reported it, so a copy that is lost takes
// nothing with it that the others lack. When the lost copy was the primary,
// the next live copy serves in its place: it is told so, and so is every
// worker, which asks it again for a pull the lost one had not answered, and
// the evaluator, which gets again the parts of snapshots it had not answered.
// At the run's end its model is gathered from the serving copies, a part that
// a lost copy never gave from another copy of its shard.
#include "actors/coordinator_state.hpp"

#include <algorithm>
#include <cstring>

namespace syncpoint {

namespace {

bool same_bits(const weights& a, const weights& b) {
  return a.version == b.version && a.values.size() == b.values.size() &&
         std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)) == 0;
}

}  // namespace

bool lose_copy(coordinator_ptr self, size_t shard, size_t copy, const std::string& why) {
  auto& st = self->state;
  auto& ps = st.cfg->ps;
  busy_timer busy(st);
  auto lost = ps.copies[shard][copy];
  bool was_primary = lost == ps.shards[shard];
  st.lost_copies.push_back(caf::actor_cast<caf::actor_addr>(lost));
  ps.copies[shard][copy] = nullptr;
  auto what = "shard " + std::to_string(shard) + (was_primary ? "'s primary" : "'s replica") + " (copy " +
              std::to_string(copy) + "): " + why;
  st.copy_losses[shard].push_back(what);
  auto live = ps.members(shard);
  if (live.empty()) {
    std::string all;
    for (auto& l : st.copy_losses[shard])
      all += (all.empty() ? "" : "; then ") + l;
    fail_run(self, make_error(sp_error::lost_shard,
                              "lost shard " + std::to_string(shard) + " of the parameter server (values " +
                                std::to_string(ps.begin(shard)) + ".." + std::to_string(ps.end(shard) - 1) +
                                " of the model), every copy of it: " + all));
    return false;
  }
  auto t = since(self, st.cfg->origin);
  if (was_primary) {
    ps.shards[shard] = live.front();
    self->send(live.front(), replica_atom::value);
    // The snapshots the lost one may not have sent: without its part, no
    // evaluation would come again (nor the final one, and the run's end).
    for (auto& s : st.run.evals_pending)
      self->send(live.front(), snapshot_atom::value, st.evaluator, s.samples, s.final, s.id);
    auto [s, c] = ps.copy_of(caf::actor_cast<caf::actor_addr>(live.front()));
    st.report("[" + st.cfg->protocol_name + "] lost " + what + "; copy " + std::to_string(c) + " serves it now",
              true);
  } else {
    st.report("[" + st.cfg->protocol_name + "] lost " + what, true);
  }
  st.trace({"copy_lost", -1, t, t, shard, st.ps.version(), static_cast<double>(copy), why});
  for (auto& slot : st.workers.slots())
    if (slot.handle)
      self->send(slot.handle, replica_atom::value, static_cast<uint32_t>(shard), static_cast<uint32_t>(copy),
                 caf::actor_cast<caf::actor>(ps.shards[shard]));
  recount_partials(self);
  replace_copy(self, shard, copy);  // --ps-rereplicate
  return true;
}

namespace {

// The model from every shard, as one, being gathered.
struct model_gathering {
  std::vector<float> whole;
  uint64_t version = UINT64_MAX;
  size_t left = 0;
  bool failed = false;
  std::vector<caf::actor_addr> gone;  // copies asked that gave no part (they are not asked again)
  std::function<void(weights&)> then;
  std::function<void(caf::error&)> fail;
};

void ask_part(coordinator_ptr self, std::shared_ptr<model_gathering> g, size_t k, const ps_actor& copy);

// Shard k's part asked of `gone` was not given (its copy is gone): another
// live copy of the shard is asked, one serving in its place first; with none,
// the run fails with `why`.
void ask_elsewhere(coordinator_ptr self, std::shared_ptr<model_gathering> g, size_t k, const caf::actor_addr& gone,
                   caf::error why) {
  if (g->failed)
    return;
  g->gone.push_back(gone);
  auto& ps = self->state.cfg->ps;
  std::vector<ps_actor> others{ps.shards[k]};
  for (auto& c : ps.members(k))
    others.push_back(c);
  for (auto& c : others)
    if (c && std::find(g->gone.begin(), g->gone.end(), c.address()) == g->gone.end()) {
      ask_part(self, g, k, c);
      return;
    }
  g->failed = true;
  g->fail(why);
}

// Shard k's part of the model, from `copy` (its serving copy, unless that
// went); a copy that is gone before it answers: from another (ask_elsewhere).
void ask_part(coordinator_ptr self, std::shared_ptr<model_gathering> g, size_t k, const ps_actor& copy) {
  auto& ps = self->state.cfg->ps;
  auto begin = ps.begin(k), end = ps.end(k);
  auto asked = copy.address();
  ask_final(
    self, copy,
    [=](weights& part) {
      if (g->failed)
        return;
      if (g->whole.empty()) {  // one shard: the model is its part
        g->then(part);
        return;
      }
      // Every shard applied the same pushes: one version, or the sequence broke.
      caf::error err;
      if (part.values.size() != end - begin)
        err = make_error(sp_error::wrong_size, "a shard's final model has the wrong size");
      else if (g->version != UINT64_MAX && part.version != g->version)
        err = make_error(sp_error::bad_input, "shard " + std::to_string(k) + " ends at version " +
                                                std::to_string(part.version) + ", another shard at " +
                                                std::to_string(g->version) + ": the shards were out of step");
      if (err) {
        g->failed = true;
        g->fail(err);
        return;
      }
      std::copy(part.values.data(), part.values.data() + part.values.size(), g->whole.data() + begin);
      g->version = part.version;
      if (--g->left == 0) {
        weights w{g->version, shared_floats(std::make_shared<const std::vector<float>>(std::move(g->whole)))};
        g->then(w);
      }
    },
    [=](caf::error& err) {
      if (err == caf::sec::request_receiver_down)  // it ended with the request unread: bounced
        ask_elsewhere(self, g, k, asked, err);
      else if (!g->failed) {
        g->failed = true;
        g->fail(err);
      }
    },
    [=] {  // its process died with the request (its down message; a replica may serve now)
      ask_elsewhere(self, g, k, asked,
                    make_error(sp_error::lost_shard, "lost shard " + std::to_string(k) +
                                                       " of the parameter server while its final model was asked"));
    });
}

}  // namespace

void gather_model(coordinator_ptr self, std::function<void(weights&)> then, std::function<void(caf::error&)> fail) {
  auto& ps = self->state.cfg->ps;
  auto g = std::make_shared<model_gathering>();
  if (ps.size() > 1)
    g->whole.resize(ps.model_size());
  g->left = ps.size();
  g->then = std::move(then);
  g->fail = std::move(fail);
  for (size_t k = 0; k < ps.size(); ++k)
    ask_part(self, g, k, ps.shards[k]);
}

void check_copies(coordinator_ptr self, std::function<void()> then, std::function<void(caf::error&)> fail) {
  auto& st = self->state;
  auto& ps = st.cfg->ps;
  if (!st.cfg->check_copies || ps.copies.empty()) {
    then();
    return;
  }
  struct gathered {
    std::vector<std::vector<std::pair<size_t, weights>>> by_shard;  // (copy, its model)
    size_t left = 0;
  };
  auto g = std::make_shared<gathered>();
  g->by_shard.resize(ps.size());
  std::vector<std::pair<size_t, size_t>> asked;
  for (size_t k = 0; k < ps.size(); ++k)
    for (size_t r = 0; r < ps.copies[k].size(); ++r)
      if (ps.copies[k][r])
        asked.emplace_back(k, r);
  g->left = asked.size();
  auto compare = [=] {
    auto& ps = self->state.cfg->ps;
    for (size_t k = 0; k < g->by_shard.size(); ++k) {
      auto serving = ps.copy_of(caf::actor_cast<caf::actor_addr>(ps.shards[k])).second;
      auto& copies = g->by_shard[k];
      auto ref = std::find_if(copies.begin(), copies.end(), [&](auto& c) { return c.first == static_cast<size_t>(serving); });
      for (auto& [r, w] : copies)
        if (ref != copies.end() && !same_bits(w, ref->second)) {
          auto err = make_error(sp_error::bad_input, "copy " + std::to_string(r) + " of shard " + std::to_string(k) +
                                                       " ends unlike its serving copy " + std::to_string(serving) +
                                                       " (version " + std::to_string(w.version) + ", " +
                                                       std::to_string(ref->second.version) + "): the copies were out of step");
          fail(err);
          return;
        }
    }
    then();
  };
  for (auto& kr : asked) {
    auto k = kr.first, r = kr.second;  // (named: a lambda may not take a structured binding in C++17)
    auto one_less = [=] {  // answered, or lost meanwhile (the others are compared)
      if (--g->left == 0)
        compare();
    };
    ask_final(
      self, ps.copies[k][r],
      [=](weights& w) {
        g->by_shard[k].emplace_back(r, std::move(w));
        one_less();
      },
      [=](caf::error&) { one_less(); }, one_less);
  }
}

void ask_final(coordinator_ptr self, const ps_actor& copy, std::function<void(weights&)> got,
               std::function<void(caf::error&)> failed, std::function<void()> lost) {
  auto& st = self->state;
  auto id = ++st.finals_count;
  st.finals_asked.emplace(id, coordinator_state::final_ask{copy.address(), std::move(lost)});
  // Whichever comes first settles the request: the answer, its error, or the copy's loss.
  self->request(copy, st.cfg->request_timeout, final_atom::value)
    .then(
      [=](weights& w) {
        if (self->state.finals_asked.erase(id) > 0)
          got(w);
      },
      [=](caf::error& err) {
        if (self->state.finals_asked.erase(id) > 0)
          failed(err);
      });
}

void final_lost(coordinator_ptr self, const caf::actor_addr& copy) {
  auto& asked = self->state.finals_asked;
  std::vector<std::function<void()>> instead;
  for (auto it = asked.begin(); it != asked.end();)
    if (it->second.copy == copy) {
      instead.push_back(std::move(it->second.on_lost));
      it = asked.erase(it);
    } else {
      ++it;
    }
  for (auto& f : instead)
    f();
}

}  // namespace syncpoint
