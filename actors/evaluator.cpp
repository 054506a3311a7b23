#include "actors/evaluator.hpp"

namespace syncpoint {

namespace {

struct evaluator_state {
  std::unique_ptr<model> m;
  static inline const char* name = "evaluator";
};

evaluator_actor::behavior_type evaluator(evaluator_actor::stateful_pointer<evaluator_state> self,
                                         evaluator_config cfg) {
  self->state.m = make_model(cfg.model);
  return {
    [=](const snapshot& s) {
      self->state.m->adopt(s.values.shared());
      double acc = accuracy(*self->state.m, nullptr, *cfg.test, cfg.limit);
      self->send(cfg.coordinator, eval_atom::value,
                 eval_result{s.version, s.taken, s.samples, s.final, acc});
    },
  };
}

}  // namespace

evaluator_actor spawn_evaluator(caf::actor_system& sys, evaluator_config cfg) {
  if (cfg.detached)
    return sys.spawn<caf::detached>(evaluator, std::move(cfg));
  return sys.spawn(evaluator, std::move(cfg));
}

}  // namespace syncpoint
