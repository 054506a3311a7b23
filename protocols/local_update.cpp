// What the local-update protocols share (protocols/local_update.hpp).
#include "protocols/local_update.hpp"

namespace syncpoint {

std::vector<option_spec> local_update_options(const std::string& inner_optimizer, const std::string& inner_lr,
                                              const std::string& local_steps) {
  using k = option_spec::kind;
  return {
    {"local-steps", k::integer, local_steps, "local steps each worker takes between exchanges (H)", 1, 1e9, {}, "H"},
    {"inner-optimizer", k::text, inner_optimizer, "how each local step moves a worker's copy", -1e300, 1e300,
     {"sgd", "nesterov", "adamw"}},
    {"inner-lr", k::real, inner_lr, "the inner optimizer's learning rate", 1e-12, 1e6},
    {"inner-momentum", k::real, "0", "sgd, nesterov: the inner momentum", 0, 0.999999},
    {"inner-weight-decay", k::real, "0", "the inner weight decay (adamw: decoupled)", 0, 1e6},
    {"inner-schedule", k::text, "constant", "the inner rate over the run: constant, or cosine to 0", -1e300, 1e300,
     {"constant", "cosine"}},
    {"inner-warmup", k::real, "0", "the share of the run over which the inner rate rises from 0", 0, 0.999},
  };
}

local_work local_update_work(const protocol_options& o) {
  local_work w;
  w.steps = static_cast<uint32_t>(o.integer("local-steps"));
  w.inner.type = parse_inner_kind(o.text("inner-optimizer"));
  w.inner.lr = o.real("inner-lr");
  w.inner.momentum = o.real("inner-momentum");
  w.inner.weight_decay = o.real("inner-weight-decay");
  w.inner.schedule = o.text("inner-schedule");
  w.inner.warmup = o.real("inner-warmup");
  w.push = push_kind::outer;
  return w;
}

void synchronous_local_update::on_start(coordinator_api& c) {
  c.set_mode(ps_mode::buffered);
  for (auto w : c.live_workers()) {
    c.set_local_work(w, work_);
    c.release(w);
  }
}

// A newcomer takes the same work, and waits for the round in progress to close.
void synchronous_local_update::on_joined(coordinator_api& c, worker_id w) {
  c.set_local_work(w, work_);
  close_round_if_complete(c);
}

// The round is complete when every live worker pushed its outer gradient and
// waits: the PS steps the outer optimizer once on their mean.
void synchronous_local_update::close_round_if_complete(coordinator_api& c) {
  if (!everyone_waiting(c))
    return;
  c.commit();
  for (auto w : c.live_workers())
    c.release(w);
}

}  // namespace syncpoint
