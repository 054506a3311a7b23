// A worker's local work between exchanges (<syncpoint/local_work.hpp>):
// each gradient moves its own copy of the model by its inner optimizer; after
// H of them it pushes their mean, or the outer gradient Δ = θ_pulled − θ_local
// (DiLoCo), of the fragment it exchanges; the pulled model replaces its copy,
// or is merged into it by a lerp (Streaming DiLoCo). The default work (one
// gradient, pushed as it is) never comes here.
#include "actors/worker_state.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace syncpoint {

namespace {

// The run's samples as this worker places itself: those of its release, and
// its own since, as many again from every live worker.
double run_samples_now(const worker_state& st) {
  return static_cast<double>(st.local.release_samples) +
         static_cast<double>(st.local.round_samples) * static_cast<double>(std::max(1, st.local.release_live));
}

// The rate of the next inner step.
double inner_lr(const worker_state& st) {
  const auto& spec = st.local.work.inner;
  if (spec.lr <= 0)  // the PS's rate at the release (WBSP's local step), or the job's
    return st.local.rate > 0 ? st.local.rate : st.cfg.lr;
  return inner_rate(spec, spec.lr, run_samples_now(st), static_cast<double>(st.cfg.sample_budget));
}

// The inner step on the worker's copy with st.grad: the model's own for plain
// SGD (WBSP's, bit for bit), else the inner optimizer's on the weights.
void inner_step(worker_state& st, double lr) {
  const auto& spec = st.local.work.inner;
  if (spec.type == inner_kind::none)
    return;
  if (plain_sgd(spec)) {
    st.m->local_step(st.grad.data(), static_cast<float>(lr));
    return;
  }
  auto w = st.m->current_weights();
  auto parameters = st.m->size() - st.m->buffers();
  inner_step(spec, st.local.inner, w.data(), st.grad.data(), parameters, lr);
  std::copy(st.grad.begin() + static_cast<std::ptrdiff_t>(parameters), st.grad.end(),
            w.begin() + static_cast<std::ptrdiff_t>(parameters));  // the buffers as the forward pass left them
  st.m->load(w.data());
}

// Each [begin, end) of `ranges` (pairs; empty: [0, n)), in turn.
template <class F>
void for_ranges(const std::vector<uint64_t>& ranges, size_t n, F f) {
  if (ranges.empty()) {
    f(size_t{0}, n);
    return;
  }
  for (size_t r = 0; r + 1 < ranges.size(); r += 2)
    f(static_cast<size_t>(ranges[r]), static_cast<size_t>(ranges[r + 1]));
}

// What the round pushes, into st.grad: the outer gradient of the fragment, or
// the mean of the round's gradients; the model's buffers as they are now.
void make_push(worker_state& st) {
  auto n = st.m->size();
  auto parameters = n - st.m->buffers();
  if (st.local.work.push == push_kind::outer) {
    auto local = st.m->current_weights();
    if (st.local.anchor.size() != n)
      throw std::logic_error("worker " + std::to_string(st.cfg.id) + ": an outer push before any pull");
    std::fill(st.grad.begin(), st.grad.end(), 0.0f);  // (outside the fragment: nothing pushed)
    for_ranges(fragment_ranges(*st.m, st.local.work), n, [&](size_t b, size_t e) {
      for (size_t i = b; i < std::min(e, parameters); ++i)
        st.grad[i] = st.local.anchor[i] - local[i];
    });
    std::copy(local.begin() + static_cast<std::ptrdiff_t>(parameters), local.end(),
              st.grad.begin() + static_cast<std::ptrdiff_t>(parameters));
  } else if (st.local.work.steps > 1) {
    auto h = static_cast<float>(st.local.steps_done);
    for (size_t i = 0; i < parameters; ++i)
      st.grad[i] = st.local.gradient_sum[i] / h;  // (the buffers: the last step's, in st.grad already)
  }
  st.samples = st.local.round_samples;
  // Until the reply, the τ steps' schedule goes on from here, not back.
  st.local.release_samples = static_cast<uint64_t>(run_samples_now(st));
  st.local.built_work = st.local.work;
  st.local.steps_done = 0;
  st.local.round_samples = 0;
  if (st.cfg.compress)
    compress_gradient(st);
}

}  // namespace

bool take_local_step(worker_state& st) {
  if (st.local.steps_done == 0 && st.local.work.push == push_kind::outer && st.local.anchor.size() != st.m->size())
    st.local.anchor = st.m->current_weights();  // released without a pull: the round starts from its own copy
  inner_step(st, inner_lr(st));
  st.local.round_samples += st.samples;
  ++st.local.steps_done;
  if (st.local.work.push == push_kind::gradient && st.local.work.steps > 1) {
    auto parameters = st.m->size() - st.m->buffers();
    if (st.local.steps_done == 1)
      st.local.gradient_sum.assign(st.grad.begin(), st.grad.begin() + static_cast<std::ptrdiff_t>(parameters));
    else
      for (size_t i = 0; i < parameters; ++i)
        st.local.gradient_sum[i] += st.grad[i];
  }
  if (st.local.steps_done < st.local.work.steps)
    return false;
  make_push(st);
  return true;
}

void merge_pulled(worker_state& st, shared_floats::pointer values) {
  const auto& work = st.local.pushed_work;
  auto n = st.m->size();
  bool keeps_anchor = st.local.work.push == push_kind::outer || work.push == push_kind::outer;
  if (work.fragments <= 1 && work.alpha == 0) {  // the pulled model replaces the worker's
    if (keeps_anchor)
      st.local.anchor = *values;
    st.m->adopt(std::move(values));
    return;
  }
  auto local = st.m->current_weights();
  if (st.local.anchor.size() != n)
    st.local.anchor = *values;
  const auto a = static_cast<float>(work.alpha), b = static_cast<float>(1 - work.alpha);
  const float* pulled = values->data();
  for_ranges(fragment_ranges(*st.m, work), n, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) {
      local[i] = a * local[i] + b * pulled[i];
      st.local.anchor[i] = pulled[i];
    }
  });
  st.m->load(local.data());
}

std::vector<uint64_t> fragment_ranges(const model& m, const local_work& work) {
  if (work.fragments <= 1)
    return {};
  auto sizes = m.tensor_sizes();
  auto f = static_cast<size_t>(work.fragments), p = static_cast<size_t>(work.fragment);
  if (f > sizes.size())
    throw std::invalid_argument("the model has " + std::to_string(sizes.size()) + " tensors, too few for " +
                                std::to_string(f) + " fragments");
  std::vector<size_t> owner(sizes.size());
  if (work.layout == fragment_layout::strided) {
    // Dealt in order, each tensor to the fragment with the fewest values so
    // far: every fragment spans the depth, they are about equal, and tensors
    // of one size go round-robin, as Streaming DiLoCo's layer blocks do.
    std::vector<size_t> held(f, 0);
    for (size_t t = 0; t < sizes.size(); ++t) {
      owner[t] = static_cast<size_t>(std::min_element(held.begin(), held.end()) - held.begin());
      held[owner[t]] += std::max<size_t>(sizes[t], 1);
    }
  } else {
    // Runs of consecutive tensors of about equal size: a tensor goes where its
    // middle falls, no fragment skipped, and each keeps at least one tensor.
    double total = static_cast<double>(std::accumulate(sizes.begin(), sizes.end(), size_t{0}));
    double at = 0;
    size_t t_count = sizes.size();
    for (size_t t = 0; t < t_count; ++t) {
      double mid = at + static_cast<double>(sizes[t]) / 2;
      auto o = std::min(f - 1, static_cast<size_t>(mid / total * static_cast<double>(f)));
      if (t > 0)
        o = std::min(std::max(o, owner[t - 1]), owner[t - 1] + 1);
      else
        o = 0;
      owner[t] = std::max(o, f - std::min(f, t_count - t));
      at += static_cast<double>(sizes[t]);
    }
  }
  std::vector<uint64_t> ranges;
  uint64_t at = 0;
  for (size_t t = 0; t < sizes.size(); ++t) {
    if (owner[t] == p) {
      if (!ranges.empty() && ranges.back() == at)
        ranges.back() = at + sizes[t];  // adjoining: one range
      else
        ranges.insert(ranges.end(), {at, at + sizes[t]});
    }
    at += sizes[t];
  }
  if (m.buffers() > 0)  // the buffers are values: they go with every fragment
    ranges.insert(ranges.end(), {at, at + m.buffers()});
  return ranges;
}

}  // namespace syncpoint
