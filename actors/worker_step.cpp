// One step of a worker, top to bottom, as worker_pipeline.hpp's transitions
// drive it:
//
//   advance ─▶ compute ─(its charged time)─▶ computed ─▶ push ─▶ [the exchange
//   sends a slice to each shard] ─▶ push_accepted | push_refused ─▶ advance ─▶
//   act on the answer: stop, or the release's work, or pull ─▶ [the exchange
//   gathers one version] ─▶ pulled ─▶ advance ─▶ compute ...
//
// Each step leaves the pipeline in the state its transition names and hands
// on to advance, which alone decides what comes next. The messages themselves
// (the requests to the shards and the replies they are read from) are
// actors/worker_exchange.cpp's.
#include "actors/worker_state.hpp"

#include "core/float_buffers.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace syncpoint {

namespace {

void compute(worker_ptr self);
void push(worker_ptr self);
void pull(worker_ptr self, uint64_t min_version);

// The answer the worker waited for: stop, or the release's work and its
// rate, and a pull when it says so. False when the worker stopped or pulls.
bool take_answer(worker_ptr self) {
  auto& st = self->state;
  auto p = *st.reply;
  st.reply.reset();
  if (p.stop) {
    leave(self);
    return false;
  }
  if (p.batch > 0)
    st.batch = static_cast<int>(p.batch);
  st.local.work = p.work;
  st.local.rate = p.lr;
  st.local.release_samples = p.samples;
  st.local.release_live = p.live;
  if (p.pull) {
    pull(self, p.min_version);
    return false;
  }
  return true;
}

}  // namespace

// Moves the pipeline on: act on an answer (stop, pull), push a waiting
// gradient, or start computing the next one.
void advance(worker_ptr self) {
  auto& st = self->state;
  if (st.pipe.pulling())
    return;
  if (st.reply && !take_answer(self))
    return;
  if (st.pipe.pushing()) {
    if (st.local.steps_done >= st.local.work.overlap || st.pipe.computing() || st.pipe.ready())
      return;  // wait for the answer (a computed gradient waits with us; τ local steps may go on first)
    compute(self);
    return;
  }
  if (st.pipe.ready()) {
    push(self);
    return;
  }
  if (!st.pipe.computing())
    compute(self);
}

namespace {

// Global-norm clipping of one pushed gradient (docs/optimizers.md): scaled
// by max_norm / ||g|| when ||g|| is larger, as torch.nn.utils.clip_grad_norm_
// does to the gradient it is given. The norm is summed in double, in order.
// The model's buffers at the end of the vector are values, not gradients: left as they are.
void clip(std::vector<float>& g, size_t parameters, double max_norm) {
  double sum = 0;
  for (size_t i = 0; i < parameters; ++i)
    sum += static_cast<double>(g[i]) * g[i];
  double norm = std::sqrt(sum);
  if (norm <= max_norm)
    return;
  auto scale = static_cast<float>(max_norm / (norm + 1e-6));
  for (size_t i = 0; i < parameters; ++i)
    g[i] *= scale;
}

// The time the step is charged beyond what it took: the virtual clock's
// cost of its samples, or a straggler's slowdown and extra delay.
double charged_delay(const worker_state& st, double measured_s, int64_t samples) {
  double t_s = to_seconds(st.compute_start);
  double factor = st.cfg.stragglers.factor(st.cfg.id, t_s);
  double extra = st.cfg.stragglers.extra_s(st.cfg.id, t_s);
  return st.cfg.virtual_clock ? st.cfg.iter_cost_s * static_cast<double>(samples) / st.cfg.batch * factor + extra
                              : std::max(0.0, (factor - 1.0) * measured_s) + extra;
}

// After the loop's step: the round's local step, or the gradient as it is
// pushed (compressed, if the job compresses).
void shape_gradient(worker_state& st) {
  if (st.cfg.clip_norm > 0)
    clip(st.grad, st.m->size() - st.m->buffers(), st.cfg.clip_norm);
  if (st.local.work.local()) {  // its own copy moves with the gradient (as computed); the round may go on
    st.local.round_done = take_local_step(st);
    return;
  }
  st.local.round_done = true;
  st.local.built_work = st.local.work;
  if (st.cfg.compress) {
    compress_gradient(st);
    compress_rows(st);
  }
}

// 1. The loop computes a gradient on the batch prefetched; it is done
// (computed) once its charged time has passed.
void compute(worker_ptr self) {
  auto& st = self->state;
  st.pipe.compute_started();
  st.compute_start = now(self);
  st.grad_version = st.version;
  if (st.grad.size() != st.m->size())  // pushed away (whole, or as views): one handed back, the model writes it whole
    st.grad = float_buffers::take(st.m->size());
  auto wall0 = std::chrono::steady_clock::now();
  step_result r;
  try {
    r = st.loop->step(*st.m,
                      step_input{st.batch, st.version, st.iter, st.local.rate, st.refused,
                                 st.rows_loaded ? &st.rows_held : nullptr},
                      st.grad.data());
  } catch (const std::exception& e) {
    leave(self, make_error(sp_error::user_loop_failed,
                           "worker " + std::to_string(st.cfg.id) + "'s loop failed: " + first_line(e.what())));
    return;
  }
  if (!st.widths.empty()) {  // a sparse model: the rows' gradients go with the push
    std::string why;
    if (!keep_row_gradients(st, why, std::move(r.row_gradients))) {
      leave(self, make_error(sp_error::bad_input, "worker " + std::to_string(st.cfg.id) + ": " + why));
      return;
    }
  }
  st.refused.clear();
  st.loss = r.loss;
  st.samples = r.samples;
  for (auto& mt : r.metrics) {  // a "metric" instant each, its name in the note
    auto t = now(self);
    trace(self, "metric", t, t, mt.value, mt.name);
  }
  shape_gradient(st);
  double delay = charged_delay(st, std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count(),
                               r.samples);
  if (delay > 0) {
    st.compute_due = now(self) + seconds(delay).count();
    self->delayed_send(self, seconds(delay), computed_atom::value);
  } else {
    computed(self);
  }
}

}  // namespace

// 2. The gradient is ready (or a local step is taken, and the round goes on).
void computed(worker_ptr self) {
  auto& st = self->state;
  auto t = now(self);
  trace(self, "compute", st.compute_start, t, st.loss);
  st.ready_since = t;  // (a local step's end: idle from here if the worker cannot go on)
  if (st.local.round_done)
    st.pipe.compute_done();
  else
    st.pipe.step_taken();  // a local step: more before the push
  advance(self);
}

namespace {

// The loop gets its next batch ready while the worker waits for the answer.
void prefetch(worker_state& st) {
  st.loop->prepare(*st.m, st.batch);
}

// 3. The ready gradient goes to the shards; overlapped, the next one starts
// meanwhile, else the loop prepares its next batch while the worker waits.
void push(worker_ptr self) {
  auto& st = self->state;
  auto t = now(self);
  if (st.cfg.fail_at_iter > 0 && st.iter + 1 == st.cfg.fail_at_iter) {
    leave(self, caf::make_error(caf::sec::runtime_error, "injected failure of worker " +
                                                           std::to_string(st.cfg.id)));
    return;
  }
  ++st.iter;
  if (st.ready_since < t)  // the gradient waited for the answer to the previous push
    trace(self, "wait", st.ready_since, t);
  st.pipe.push_sent();
  st.push_sent = t;
  st.local.pushed_work = st.local.built_work;
  send_push(self);
  if (st.local.work.overlap > 0)
    advance(self);
  else
    prefetch(st);
}

// A worker whose gradients the PS keeps refusing (NaN from a diverged model)
// gives up, so that the run ends instead of spinning.
constexpr int max_rejections_in_a_row = 8;

}  // namespace

// 4a. The lead shard's answer: the push is applied (or will be), and `p` is the
// coordinator's word on what comes next.
void push_accepted(worker_ptr self, const proceed& p) {
  auto& st = self->state;
  st.rejected_in_a_row = 0;
  auto t = now(self);
  auto accepted = std::clamp(p.accepted, st.push_sent, t);
  trace(self, "push", st.push_sent, accepted, st.push_bytes);
  if (st.local.work.overlap == 0) {  // idle from acceptance to this answer
    trace(self, "wait", accepted, t);
  } else if (st.pipe.ready()) {  // overlapped: idle only since the next gradient was done
    trace(self, "wait", st.ready_since, t);
    st.ready_since = t;
  } else if (!st.pipe.computing()) {  // overlapped by τ local steps: idle since the last of them
    trace(self, "wait", std::max(st.ready_since, st.push_sent), t);
  }
  st.pipe.push_answered();
  st.reply = p;
  advance(self);
}

// 4b. ... or it is refused (`why`): the gradient is dropped and the worker
// pulls as `p` says, unless the PS keeps refusing: a diverged model, which
// will not get better.
void push_refused(worker_ptr self, proceed p, const std::string& why) {
  auto& st = self->state;
  auto t = now(self);
  if (++st.rejected_in_a_row >= max_rejections_in_a_row) {
    leave(self, caf::make_error(caf::sec::runtime_error,
                                "worker " + std::to_string(st.cfg.id) + ": " + std::to_string(max_rejections_in_a_row) +
                                  " gradients in a row rejected (last: " + why +
                                  "); the model has diverged, try a lower --lr"));
    return;
  }
  trace(self, "push", st.push_sent, t, st.push_bytes);
  st.refused = why;  // the loop hears it with its next step
  st.pipe.push_answered();
  p.accepted = t;
  st.reply = p;
  advance(self);
}

namespace {

// 5. The answer says pull: one version of every shard's slice, of at least
// `min_version` (a sparse model's next keys go with it, and their rows come back).
void pull(worker_ptr self, uint64_t min_version) {
  auto& st = self->state;
  st.pipe.pull_sent();
  st.pull_start = now(self);
  st.pull_min_version = min_version;
  st.pull_bytes = 0;
  for (size_t k = 0; k < st.cfg.ps.size(); ++k)
    st.pull_bytes += static_cast<double>(pulled_bytes(st, k));
  if (!st.widths.empty()) {
    try {
      ask_rows(st);
    } catch (const std::exception& e) {
      leave(self, make_error(sp_error::user_loop_failed,
                             "worker " + std::to_string(st.cfg.id) + "'s loop failed: " + first_line(e.what())));
      return;
    }
    for (auto& asked : st.rows_asked)
      for (auto& b : asked)
        st.pull_bytes += static_cast<double>(b.keys.size() * (2 * sizeof(uint64_t) + st.widths[b.table] * sizeof(float)));
  }
  send_pull(self, min_version, false);
}

}  // namespace

// 6. The weights of one version are in: the model takes them, and the next
// compute may start.
void pulled(worker_ptr self, uint64_t version, shared_floats::pointer values) {
  auto& st = self->state;
  st.version = version;
  merge_pulled(st, std::move(values));
  if (!st.widths.empty())
    load_pulled_rows(st);
  trace(self, "pull", st.pull_start, now(self), st.pull_bytes);
  if (st.pipe.ready())
    st.ready_since = now(self);  // the pull is not waiting
  st.pipe.pull_answered();
  advance(self);
}

}  // namespace syncpoint
