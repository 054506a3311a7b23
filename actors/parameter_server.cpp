#include "actors/parameter_server.hpp"

#include "actors/ps_state.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstdio>
#include <functional>
#include <map>

namespace syncpoint {

namespace {

using cvec = Eigen::Map<const Eigen::VectorXf>;


// Where the next weights go: in place if no reader holds the current ones,
// else a spare nobody holds any more, else a new buffer.
float* writable_weights(ps_state& st) {
  // use_count() is a relaxed read: the fence orders our writes after the
  // last reader's release of its reference (made on another thread).
  if (st.w.use_count() == 1) {
    std::atomic_thread_fence(std::memory_order_acquire);
    return st.w->data();
  }
  for (auto& s : st.spares)
    if (s.use_count() == 1) {
      std::atomic_thread_fence(std::memory_order_acquire);
      return s->data();
    }
  if (st.spares.size() >= 8)  // readers hold them all: let one go to its readers
    st.spares.erase(st.spares.begin());
  st.spares.push_back(std::make_shared<std::vector<float>>(st.w->size()));
  return st.spares.back()->data();
}

shared_floats published(const ps_state& st) {
  return shared_floats(std::shared_ptr<const std::vector<float>>(st.w));
}

// After writing new weights into `out`: they become the current ones.
void adopt(ps_state& st, float* out) {
  if (out == st.w->data())
    return;
  auto it = std::find_if(st.spares.begin(), st.spares.end(),
                         [&](const auto& s) { return s->data() == out; });
  std::swap(*it, st.w);  // the old weights become a spare once their readers let go
}

// The momentum of the next step (a ramp after a protocol switch rises to it).
float momentum(ps_state& st) {
  auto mu = static_cast<float>(st.cfg.momentum);
  if (st.ramp_done < st.ramp_steps)
    mu *= static_cast<float>(++st.ramp_done) / static_cast<float>(st.ramp_steps);
  return mu;
}

// One fused pass (the model is large and memory bandwidth is the limit):
//   v <- mu * v + scale * g + share * wd * w,   w <- w - lr * v
// where `share` is the part of a full step this update stands for (1/n for
// one ASP push, 1 for a BSP round), so weight decay per round is protocol-independent.
// `g(i)` is the gradient's element i, read or computed in the same pass.
template <class Gradient>
void sgd_pass(ps_state& st, Gradient g, float scale, float share, float mu) {
  const auto n = st.w->size();
  const float* w = st.w->data();
  float* out = writable_weights(st);
  float* v = st.velocity.data();
  const auto lr = static_cast<float>(st.cfg.lr);
  const auto decay = static_cast<float>(st.cfg.weight_decay) * share;
  for (size_t i = 0; i < n; ++i) {
    v[i] = mu * v[i] + scale * g(i) + decay * w[i];
    out[i] = w[i] - lr * v[i];
  }
  adopt(st, out);
}

void sgd_step(ps_state& st, const float* g, float scale, float share, float mu) {
  sgd_pass(st, [g](size_t i) { return g[i]; }, scale, share, mu);
}

// A third (or later) push of a round: the held one joins the buffer.
void fold_held(ps_state& st) {
  if (st.held.empty())
    return;
  float* b = st.buffer.data();
  const float* h = st.held.data();
  const float scale = st.buffer_scale, weight = st.held_weight;
  for (size_t i = 0; i < st.buffer.size(); ++i)
    b[i] = round_sum(b[i], scale, h[i], weight);
  st.buffer_scale = 1;
  st.held = {};
}

// Gated mode, adjusted rule: a push moves the weights at once (a round's
// pushes sum, as in BSP's round) but is not a momentum step; it joins the
// round's step, which becomes one at the next publish (close_round).
void round_part(ps_state& st, const float* g, float scale, float share) {
  const auto n = st.w->size();
  if (st.round_step.size() != n)
    st.round_step.assign(n, 0.0f);  // close_round leaves it zeroed
  st.round_open = true;
  const float* w = st.w->data();
  float* out = writable_weights(st);
  float* r = st.round_step.data();
  const auto lr = static_cast<float>(st.cfg.lr);
  const auto decay = static_cast<float>(st.cfg.weight_decay) * share;
  for (size_t i = 0; i < n; ++i) {
    float d = scale * g[i] + decay * w[i];
    r[i] += d;
    out[i] = w[i] - lr * d;
  }
  adopt(st, out);
}

// The round's momentum step: w <- w - lr * mu * v, v <- mu * v + round.
// Together with the parts already applied this equals sgd_step on the round's sum.
void close_round(ps_state& st) {
  if (!st.round_open)
    return;
  const auto mu = momentum(st);
  const auto lr = static_cast<float>(st.cfg.lr);
  const float* w = st.w->data();
  float* out = writable_weights(st);
  float* v = st.velocity.data();
  float* r = st.round_step.data();
  for (size_t i = 0; i < st.round_step.size(); ++i) {
    out[i] = w[i] - lr * mu * v[i];
    v[i] = mu * v[i] + r[i];
    r[i] = 0;
  }
  adopt(st, out);
  st.round_open = false;
}

// Under the adjusted rule the velocity is per round in buffered and gated
// mode (v ~ the round's mean gradient) and per push in immediate mode (v ~ one
// push's share of it). A switch between the two (Sync-Switch) converts it, so
// the momentum carried over moves the weights as far per round as before
// instead of n times as far (or 1/n) until it decays.
void rescale_velocity(ps_state& st, ps_mode from, ps_mode to) {
  bool per_round_before = from != ps_mode::immediate, per_round_after = to != ps_mode::immediate;
  if (st.cfg.rule != momentum_rule::adjusted || per_round_before == per_round_after || st.worker_weight.empty())
    return;
  auto n = static_cast<float>(st.worker_weight.size());
  float factor = per_round_after ? n : 1 / n;
  for (auto& v : st.velocity)
    v *= factor;
}

// A vectorized read of `g`: NaN * 0 and Inf * 0 are NaN, so the sum is 0 iff all are finite.
bool all_finite(const std::vector<float>& g) {
  return (cvec(g.data(), g.size()).array() * 0.0f).sum() == 0.0f;
}

void trace(ps_ptr self, trace_event ev) {
  if (self->state.cfg.tracer)
    self->send(self->state.cfg.tracer, trace_atom::value, std::move(ev));
}

void accept_push(ps_ptr self, gradient_push& g, caf::typed_response_promise<proceed>& rp);

void arrive(ps_ptr self, transit& t) {
  if (t.is_push)
    accept_push(self, t.push, t.push_reply);
  else
    t.pull_reply.deliver(std::move(t.out));
}

// `t` arrives once its bytes have crossed the PS link (at once without a link model).
void transfer(ps_ptr self, transit t) {
  auto& st = self->state;
  if (!st.link.active()) {
    arrive(self, t);
    return;
  }
  double bytes = st.cfg.wire_bytes > 0
                   ? st.cfg.wire_bytes
                   : static_cast<double>((t.is_push ? t.push.grad.size() : t.out.values.size()) * sizeof(float));
  double now = to_seconds(since(self, st.cfg.origin));
  auto slot = st.link.reserve(now, bytes);
  double delay = slot.arrive - now;
  // The link's busy time, for its utilisation (value: bytes).
  auto ns = [](double t) { return static_cast<nanos>(std::llround(t * 1e9)); };
  trace(self, {"link", -1, ns(slot.start), ns(slot.end), 0, st.version, bytes});
  auto id = st.next_transfer++;
  st.in_transit.emplace(id, std::move(t));
  self->delayed_send(self, seconds(delay), link_atom::value, id);
}

// Answers a pull with the current weights, which then travel over the link.
void send_weights(ps_ptr self, pending_pull p) {
  auto& st = self->state;
  transit t;
  t.worker = p.worker;
  t.out = st.mode == ps_mode::gated ? weights{st.visible_version, st.visible} : weights{st.version, published(st)};
  t.pull_reply = std::move(p.reply);
  transfer(self, std::move(t));
}

uint64_t pullable_version(const ps_state& st) {
  return st.mode == ps_mode::gated ? st.visible_version : st.version;
}

void answer_pulls(ps_ptr self) {
  auto& st = self->state;
  auto last = st.waiting_pulls.upper_bound(pullable_version(st));
  for (auto i = st.waiting_pulls.begin(); i != last; ++i)
    send_weights(self, std::move(i->second));
  st.waiting_pulls.erase(st.waiting_pulls.begin(), last);
}

// Gated mode: pulls from now on see the current weights.
void publish(ps_ptr self) {
  auto& st = self->state;
  close_round(st);
  st.visible = published(st);
  st.visible_version = st.version;
  answer_pulls(self);
}

// Applies the buffered pushes as one step. A coordinator's commit always
// makes a new version, even from an empty buffer, because the coordinator
// counts its commits to know which version to release workers to; a flush
// (end of run, mode change) makes one only if something was buffered.
void commit(ps_ptr self, bool new_version_even_if_empty) {
  auto& st = self->state;
  if (st.buffered.empty()) {
    if (new_version_even_if_empty) {
      ++st.version;
      answer_pulls(self);
    }
    return;
  }
  // The mean of what arrived (weighted by batch size): a round that lost a
  // worker is still one step of the survivors' mean gradient. The held push
  // is added in the step's own pass: the round's last gradient costs the
  // barrier one pass over the model, not two.
  const auto weight = static_cast<float>(st.buffer_weight);
  if (st.held.empty()) {
    sgd_step(st, st.buffer.data(), st.buffer_scale / weight, 1.0f, momentum(st));
  } else {
    const float* b = st.buffer.data();
    const float* h = st.held.data();
    const float scale = st.buffer_scale, held_weight = st.held_weight;
    sgd_pass(st, [=](size_t i) { return round_sum(b[i], scale, h[i], held_weight); }, 1.0f / weight, 1.0f,
             momentum(st));
    st.buffer_scale = 1;
    st.held = {};
  }
  auto now = since(self, st.cfg.origin);
  for (auto& p : st.buffered)
    trace(self, {"apply", p.worker, now, now, p.iter, st.version + 1,
                 static_cast<double>(st.version - p.base_version)});
  ++st.version;
  st.buffer_weight = 0;
  st.buffered.clear();
  answer_pulls(self);
}

caf::error validate(const ps_state& st, const gradient_push& g) {
  if (g.worker < 0 || static_cast<size_t>(g.worker) >= st.worker_weight.size())
    return make_error(sp_error::unknown_worker,
                      "worker " + std::to_string(g.worker) + " is not one of 0.." +
                        std::to_string(st.worker_weight.size() - 1));
  if (g.grad.size() != st.w->size())
    return make_error(sp_error::wrong_size, "gradient from worker " + std::to_string(g.worker) +
                                              " has " + std::to_string(g.grad.size()) +
                                              " values, the model has " +
                                              std::to_string(st.w->size()));
  if (!all_finite(g.grad))
    return make_error(sp_error::non_finite, "gradient from worker " + std::to_string(g.worker) +
                                              " (iteration " + std::to_string(g.iter) +
                                              ") contains NaN or Inf");
  return caf::none;
}

// A push applied on arrival (immediate and gated modes), `tau` updates stale.
// The adjusted rule (docs/momentum.md): the push weighs 1/(1 + tau/n) of its
// share (staleness-aware SGD), and momentum is a step the workers can see:
// once per round when pulls are gated, else once per push, reduced by the
// mean staleness, because delayed gradients already act as momentum.
void apply_now(ps_state& st, const gradient_push& g, double tau) {
  auto share = st.worker_weight[static_cast<size_t>(g.worker)];
  if (st.cfg.rule == momentum_rule::plain) {
    sgd_step(st, g.grad.data(), share, share, momentum(st));
    return;
  }
  const auto n = static_cast<double>(st.worker_weight.size());
  st.mean_staleness = st.mean_staleness < 0 ? tau : 0.99 * st.mean_staleness + 0.01 * tau;
  auto scale = static_cast<float>(share / (1 + tau / n));
  if (st.mode == ps_mode::gated) {
    round_part(st, g.grad.data(), scale, share);
    return;
  }
  auto mu = momentum(st);
  auto reduced = 1 - (1 - static_cast<double>(mu)) * (1 + st.mean_staleness / n);
  sgd_step(st, g.grad.data(), scale, share, static_cast<float>(std::max(0.0, reduced)));
}

// A push whose bytes have arrived: validated, applied or buffered, then
// handed to the coordinator, whose `proceed` answers the worker.
void accept_push(ps_ptr self, gradient_push& g, caf::typed_response_promise<proceed>& rp) {
  auto& st = self->state;
  if (auto err = validate(st, g)) {
    auto now = since(self, st.cfg.origin);
    trace(self, {"rejected", g.worker, now, now, g.iter, st.version, 0});
    rp.deliver(std::move(err));
    return;
  }
  if (st.mode == ps_mode::buffered) {
    // Weighted by batch size, normalized at commit: independent of how
    // many workers are live when each push arrives.
    auto weight = static_cast<float>(g.samples);
    if (st.buffered.empty()) {  // the round's first gradient becomes the buffer, no copy
      st.buffer = std::move(g.grad);
      st.buffer_scale = weight;
    } else {  // later ones are held, and summed when the next arrives or the round commits
      fold_held(st);
      st.held = std::move(g.grad);
      st.held_weight = weight;
    }
    st.buffer_weight += weight;
    st.buffered.push_back({g.worker, g.iter, g.base_version});
  } else {
    auto tau = static_cast<double>(st.version - std::min(st.version, g.base_version));
    apply_now(st, g, tau);
    auto now = since(self, st.cfg.origin);
    trace(self, {"apply", g.worker, now, now, g.iter, st.version + 1, tau});
    ++st.version;
    answer_pulls(self);
  }
  push_info info{g.worker, g.iter, g.samples, st.version, since(self, st.cfg.origin)};
  if (!st.coordinator)  // no coordinator: behave as ASP
    rp.deliver(proceed{false, true, st.version, 0, info.accepted});
  else
    rp.delegate(st.coordinator, pushed_atom::value, info);
}

caf::actor_addr sender(ps_ptr self) {
  return caf::actor_cast<caf::actor_addr>(self->current_sender());
}

// The sender's worker id, or -1 if it is not one of the job's members.
worker_id member_index(ps_ptr self) {
  auto& ids = self->state.member_ids;
  auto i = ids.find(sender(self));
  return i == ids.end() ? -1 : i->second;
}

// Pushes and pulls come from the job's workers only (once it has members):
// a push must also come from the worker whose id it carries.
caf::error check_member(ps_ptr self, worker_id claimed) {
  auto& st = self->state;
  if (st.members.empty())
    return caf::none;
  auto from = sender(self);
  bool ok = claimed >= 0 ? static_cast<size_t>(claimed) < st.members.size()
                             && st.members[static_cast<size_t>(claimed)] == from
                         : st.member_ids.count(from) > 0;
  if (ok)
    return caf::none;
  return make_error(sp_error::not_a_member,
                    "the parameter server refused a request from " + to_string(from) +
                      ", which is not " +
                      (claimed >= 0 ? "worker " + std::to_string(claimed) : std::string("a worker")) +
                      " of this job");
}

// Control messages come from the job's coordinator only (once attached);
// anything else is refused and logged, and changes nothing.
bool from_coordinator(ps_ptr self, const char* what) {
  auto& st = self->state;
  if (!st.coordinator || sender(self) == caf::actor_cast<caf::actor_addr>(st.coordinator))
    return true;
  std::fprintf(stderr, "parameter server: refused '%s' from %s, which is not the job's coordinator\n",
               what, to_string(sender(self)).c_str());
  return false;
}

ps_actor::behavior_type parameter_server(ps_ptr self, ps_config cfg) {
  auto& st = self->state;
  st.w = std::make_shared<std::vector<float>>(std::move(cfg.initial));
  st.link = link_model(cfg.bandwidth, cfg.latency_s);
  st.velocity.assign(st.w->size(), 0.0f);
  st.worker_weight.assign(static_cast<size_t>(cfg.workers), 1.0f / static_cast<float>(cfg.workers));
  st.cfg = std::move(cfg);
  if (st.cfg.resume)
    restore(st, *st.cfg.resume);
  return {
    [=](push_atom, gradient_push& g) -> caf::result<proceed> {
      if (auto err = check_member(self, g.worker))
        return err;
      transit t;
      t.worker = g.worker;
      t.is_push = true;
      t.push = std::move(g);
      t.push_reply = self->make_response_promise<proceed>();
      auto rp = t.push_reply;
      transfer(self, std::move(t));
      return rp;
    },
    [=](pull_atom, uint64_t min_version) -> caf::result<weights> {
      if (auto err = check_member(self, -1))
        return err;
      auto& st = self->state;
      pending_pull p{member_index(self), self->make_response_promise<weights>()};
      auto rp = p.reply;
      if (pullable_version(st) >= min_version)
        send_weights(self, std::move(p));
      else
        st.waiting_pulls.emplace(min_version, std::move(p));
      return rp;
    },
    [=](push_atom, resume_atom, uint64_t iter) -> caf::result<proceed> {
      return resume_push(self, member_index(self), iter);
    },
    [=](pull_atom, resume_atom, uint64_t) -> caf::result<weights> {
      return resume_pull(self, member_index(self));
    },
    [=](save_atom) { return save(self->state); },
    [=](link_atom, uint64_t id) {
      if (self->current_sender() != self->ctrl())
        return;  // only the PS's own timers move transfers along
      auto& st = self->state;
      auto i = st.in_transit.find(id);
      if (i == st.in_transit.end())
        return;
      auto t = std::move(i->second);
      st.in_transit.erase(i);
      arrive(self, t);
    },
    [=](attach_atom, coordinator_actor coordinator, std::vector<worker_actor> workers) {
      if (!from_coordinator(self, "attach"))
        return;
      auto& st = self->state;
      st.coordinator = std::move(coordinator);
      st.members.clear();
      st.member_ids.clear();
      for (auto& w : workers) {
        st.members.push_back(caf::actor_cast<caf::actor_addr>(w));
        if (w)  // a vacant id (an elastic job short of slots) has no handle yet
          st.member_ids.emplace(st.members.back(), static_cast<worker_id>(st.members.size() - 1));
      }
    },
    [=](mode_atom, uint8_t mode) {
      if (!from_coordinator(self, "mode"))
        return;
      auto& st = self->state;
      if (mode > static_cast<uint8_t>(ps_mode::gated))
        return;  // not a mode: ignore rather than guess
      auto m = static_cast<ps_mode>(mode);
      close_round(st);  // a gated round's step is complete before the mode changes
      if (m != ps_mode::buffered)
        commit(self, false);  // never strand buffered pushes
      rescale_velocity(st, st.mode, m);
      st.mode = m;
      if (m == ps_mode::gated)
        publish(self);  // what pulls see until the next publish
      else
        answer_pulls(self);
    },
    [=](publish_atom) {
      if (from_coordinator(self, "publish"))
        publish(self);
    },
    [=](commit_atom) {
      if (from_coordinator(self, "commit"))
        commit(self, true);
    },
    [=](flush_atom) {
      if (from_coordinator(self, "flush"))
        commit(self, false);
    },
    [=](stop_atom) {
      if (!from_coordinator(self, "stop"))
        return;
      // The run is stopping: a worker waiting for a version that will never
      // come gets the current weights, pushes once more and is told to stop.
      auto& st = self->state;
      for (auto& kv : st.waiting_pulls)
        send_weights(self, std::move(kv.second));
      st.waiting_pulls.clear();
    },
    [=](momentum_atom, double mu, bool clear, uint32_t ramp_steps) {
      auto& st = self->state;
      if (!from_coordinator(self, "momentum") || !(mu >= 0 && mu < 1))
        return;
      st.cfg.momentum = mu;
      if (clear)
        std::fill(st.velocity.begin(), st.velocity.end(), 0.0f);
      st.ramp_steps = ramp_steps;
      st.ramp_done = 0;
    },
    [=](weights_atom, std::vector<float>& per_worker) {
      if (from_coordinator(self, "weights") && per_worker.size() == self->state.worker_weight.size())
        self->state.worker_weight = std::move(per_worker);
    },
    [=](snapshot_atom, evaluator_actor evaluator, uint64_t samples, bool final) {
      if (!from_coordinator(self, "snapshot"))
        return;
      auto& st = self->state;
      self->send(evaluator,
                 snapshot{st.version, since(self, st.cfg.origin), samples, final, published(st)});
    },
    [=](final_atom) -> caf::result<weights> {
      if (!from_coordinator(self, "final"))
        return make_error(sp_error::not_a_member, "only the job's coordinator reads the final model");
      return weights{self->state.version, published(self->state)};
    },
  };
}

}  // namespace

ps_actor spawn_parameter_server(caf::actor_system& sys, ps_config cfg) {
  return sys.spawn(parameter_server, std::move(cfg));
}

}  // namespace syncpoint
