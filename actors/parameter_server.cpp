#include "actors/parameter_server.hpp"

#include <Eigen/Core>

#include <map>

namespace syncpoint {

namespace {

using vec = Eigen::Map<Eigen::VectorXf>;
using cvec = Eigen::Map<const Eigen::VectorXf>;

struct buffered_push {
  worker_id worker;
  uint64_t iter;
  uint64_t base_version;
};

struct ps_state {
  ps_config cfg;
  std::vector<float> w;
  std::vector<float> velocity;
  std::vector<float> buffer;      // weighted sum of buffered gradients
  double buffer_weight = 0;
  std::vector<buffered_push> buffered;
  std::vector<float> worker_weight;
  uint64_t version = 0;
  bool buffered_mode = false;
  caf::actor coordinator;
  std::multimap<uint64_t, caf::response_promise> waiting_pulls;
  static inline const char* name = "parameter_server";
};

using ps_actor = caf::stateful_actor<ps_state>;

// w <- w - lr * v,  v <- momentum * v + d + scale * wd * w, where d is the
// weighted gradient and scale the total weight it carries (1 for a full round).
void sgd_step(ps_state& st, const float* d, double scale) {
  vec w(st.w.data(), st.w.size());
  vec v(st.velocity.data(), st.velocity.size());
  cvec g(d, st.w.size());
  auto mu = static_cast<float>(st.cfg.momentum);
  auto wd = static_cast<float>(st.cfg.weight_decay * scale);
  v = mu * v + g + wd * w;
  w -= static_cast<float>(st.cfg.lr) * v;
}

void trace(ps_actor* self, trace_event ev) {
  if (self->state.cfg.tracer)
    self->send(self->state.cfg.tracer, trace_atom::value, std::move(ev));
}

void answer_pulls(ps_actor* self) {
  auto& st = self->state;
  auto last = st.waiting_pulls.upper_bound(st.version);
  for (auto i = st.waiting_pulls.begin(); i != last; ++i)
    i->second.deliver(weights{st.version, st.w});
  st.waiting_pulls.erase(st.waiting_pulls.begin(), last);
}

void commit(ps_actor* self) {
  auto& st = self->state;
  if (st.buffered.empty())
    return;
  // The mean of what arrived: a round that lost a worker is still one mean step.
  vec b(st.buffer.data(), st.buffer.size());
  b /= static_cast<float>(st.buffer_weight);
  sgd_step(st, st.buffer.data(), 1.0);
  auto now = since(self, st.cfg.origin);
  for (auto& p : st.buffered)
    trace(self, {"apply", p.worker, now, now, p.iter, st.version + 1,
                 static_cast<double>(st.version - p.base_version)});
  ++st.version;
  b.setZero();
  st.buffer_weight = 0;
  st.buffered.clear();
  answer_pulls(self);
}

caf::error validate(const ps_state& st, const gradient_push& g) {
  if (g.worker < 0 || static_cast<size_t>(g.worker) >= st.worker_weight.size())
    return make_error(sp_error::unknown_worker,
                      "worker " + std::to_string(g.worker) + " is not one of 0.." +
                        std::to_string(st.worker_weight.size() - 1));
  if (g.grad.size() != st.w.size())
    return make_error(sp_error::wrong_size, "gradient from worker " + std::to_string(g.worker) +
                                              " has " + std::to_string(g.grad.size()) +
                                              " values, the model has " +
                                              std::to_string(st.w.size()));
  if (!cvec(g.grad.data(), g.grad.size()).allFinite())
    return make_error(sp_error::non_finite, "gradient from worker " + std::to_string(g.worker) +
                                              " (iteration " + std::to_string(g.iter) +
                                              ") contains NaN or Inf");
  return caf::none;
}

caf::behavior parameter_server(ps_actor* self, ps_config cfg) {
  auto& st = self->state;
  st.w = cfg.initial;
  st.velocity.assign(st.w.size(), 0.0f);
  st.buffer.assign(st.w.size(), 0.0f);
  st.worker_weight.assign(static_cast<size_t>(cfg.workers), 1.0f / static_cast<float>(cfg.workers));
  st.cfg = std::move(cfg);
  st.cfg.initial.clear();
  st.cfg.initial.shrink_to_fit();
  return {
    [=](push_atom, gradient_push& g) -> caf::result<proceed> {
      auto& st = self->state;
      if (auto err = validate(st, g)) {
        auto now = since(self, st.cfg.origin);
        trace(self, {"rejected", g.worker, now, now, g.iter, st.version, 0});
        return err;
      }
      auto weight = st.worker_weight[static_cast<size_t>(g.worker)];
      if (st.buffered_mode) {
        vec(st.buffer.data(), st.buffer.size()) += weight * cvec(g.grad.data(), g.grad.size());
        st.buffer_weight += weight;
        st.buffered.push_back({g.worker, g.iter, g.base_version});
      } else {
        vec d(g.grad.data(), g.grad.size());
        d *= weight;
        sgd_step(st, g.grad.data(), weight);
        auto now = since(self, st.cfg.origin);
        trace(self, {"apply", g.worker, now, now, g.iter, st.version + 1,
                     static_cast<double>(st.version - std::min(st.version, g.base_version))});
        ++st.version;
        answer_pulls(self);
      }
      push_info info{g.worker, g.iter, g.samples, st.version, since(self, st.cfg.origin)};
      if (!st.coordinator)  // no coordinator: behave as ASP
        return proceed{false, true, st.version, 0, info.accepted};
      auto rp = self->make_response_promise();
      rp.delegate(st.coordinator, pushed_atom::value, info);
      return rp;
    },
    [=](pull_atom, uint64_t min_version) -> caf::result<weights> {
      auto& st = self->state;
      if (st.version >= min_version)
        return weights{st.version, st.w};
      auto rp = self->make_response_promise();
      st.waiting_pulls.emplace(min_version, rp);
      return rp;
    },
    [=](attach_atom, caf::actor coordinator) { self->state.coordinator = std::move(coordinator); },
    [=](mode_atom, bool buffered) {
      if (!buffered)
        commit(self);  // never strand buffered pushes
      self->state.buffered_mode = buffered;
    },
    [=](commit_atom) { commit(self); },
    [=](flush_atom) { commit(self); },
    [=](weights_atom, std::vector<float>& per_worker) {
      if (per_worker.size() == self->state.worker_weight.size())
        self->state.worker_weight = std::move(per_worker);
    },
    [=](snapshot_atom, caf::actor evaluator, uint64_t samples, bool final) {
      auto& st = self->state;
      self->send(evaluator,
                 snapshot{st.version, since(self, st.cfg.origin), samples, final, st.w});
    },
  };
}

}  // namespace

caf::actor spawn_parameter_server(caf::actor_system& sys, ps_config cfg) {
  return sys.spawn(parameter_server, std::move(cfg));
}

}  // namespace syncpoint
