#include "actors/evaluator.hpp"
#include "core/row_blocks.hpp"

#include <algorithm>
#include <deque>
#include <optional>

namespace syncpoint {

namespace {

struct evaluator_state {
  std::unique_ptr<model> m;
  evaluate_fn measure;  // the loop's (none: nothing to measure)
  dataset limited;      // the first `limit` test examples, when a limit is set
  // A sharded PS sends a snapshot as one part per shard, each shard's in the
  // order they were taken: the next model is the first part in every queue.
  std::vector<std::deque<snapshot>> parts;
  // By part, the id of the last one taken: a shard's parts come in the order
  // they were asked, and a replica promoted in a lost primary's place is asked
  // again for those the evaluator may have had from the primary already.
  std::vector<uint64_t> last_id;
  std::shared_ptr<std::vector<float>> assembled;
  static inline const char* name = "evaluator";
};

using evaluator_ptr = evaluator_actor::stateful_pointer<evaluator_state>;

void evaluate(evaluator_ptr self, const evaluator_config& cfg, const snapshot& s) {
  auto& st = self->state;
  st.m->adopt(s.values.shared());
  eval_result r{s.version, s.taken, s.samples, s.final, -1, {}};  // -1: no accuracy, unless the loop measures one
  if (st.measure) {
    const dataset& test = cfg.limit > 0 && cfg.limit < cfg.test->size ? st.limited : *cfg.test;
    try {
      if (!s.rows.empty())  // a sparse model: the rows of the test set's keys, of the same version
        st.m->load_rows(s.rows);
      r.metrics = st.measure(*st.m, test, cfg.job);
    } catch (const std::exception& e) {  // the run cannot be measured: it fails, saying why
      self->quit(make_error(sp_error::user_loop_failed, "the loop's evaluation failed: " + first_line(e.what())));
      return;
    }
    for (auto& mt : r.metrics)
      if (mt.name == "accuracy")
        r.accuracy = mt.value;
  }
  self->send(cfg.coordinator, eval_atom::value, std::move(r));
}

// The first snapshot of every shard as one model, once each shard's part is in.
std::optional<snapshot> next_whole(evaluator_state& st) {
  if (std::any_of(st.parts.begin(), st.parts.end(), [](auto& q) { return q.empty(); }))
    return std::nullopt;
  auto n = st.parts.front().front().model_size;
  if (!sole_owner(st.assembled) || st.assembled->size() != n)
    st.assembled = std::make_shared<std::vector<float>>(n);
  snapshot whole = st.parts.front().front();
  whole.rows.clear();
  for (auto& q : st.parts) {
    auto& p = q.front();
    for (auto& b : p.rows)  // each shard's rows of the test keys it keeps
      append_rows(whole.rows, b);
    std::copy(p.values.data(), p.values.data() + p.values.size(), st.assembled->data() + p.offset);
    whole.version = std::min(whole.version, p.version);
    whole.taken = std::max(whole.taken, p.taken);
    q.pop_front();
  }
  whole.values = shared_floats(std::shared_ptr<const std::vector<float>>(st.assembled));
  return whole;
}

evaluator_actor::behavior_type evaluator(evaluator_ptr self, evaluator_config cfg) {
  auto& st = self->state;
  st.m = make_model(cfg.model, cfg.input);
  st.measure = find_loop(cfg.loop).evaluate;
  if (cfg.limit > 0 && cfg.limit < cfg.test->size) {
    st.limited = *cfg.test;
    st.limited.truncate(cfg.limit);
  }
  return {
    [=](snapshot& s) {
      auto& st = self->state;
      auto parts = std::max<uint32_t>(s.parts, 1);
      if (s.part >= parts || (s.parts > 1 && s.offset + s.values.size() > s.model_size))
        return;  // not a part of this model
      if (st.last_id.size() != parts)
        st.last_id.assign(parts, 0);
      if (s.id > 0 && s.id <= st.last_id[s.part])
        return;  // one had already
      st.last_id[s.part] = std::max(st.last_id[s.part], s.id);
      if (s.parts <= 1) {
        evaluate(self, cfg, s);
        return;
      }
      if (st.parts.size() != s.parts)
        st.parts.assign(s.parts, {});
      st.parts[s.part].push_back(std::move(s));
      while (auto whole = next_whole(st))
        evaluate(self, cfg, *whole);
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
