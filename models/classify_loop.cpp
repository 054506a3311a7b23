// The built-in loop: batches of the job's data set, each worker on its own
// shard (models/shard_sampler.hpp), and the model's own loss, the mean
// cross-entropy (model::gradient). Its evaluation is the test accuracy.
#include <syncpoint/worker_loop.hpp>

#include "models/shard_sampler.hpp"


namespace syncpoint {

namespace {

class classify_loop : public worker_loop {
 public:
  explicit classify_loop(const loop_context& c)
    : train_(c.train), sampler_(c.train->size, c.workers, c.worker, c.seed), worker_(c.worker) {}

  step_result step(model& m, const step_input& in, float* grad) override {
    auto b = next_batch(static_cast<size_t>(in.batch));
    return {m.gradient(b, grad), b.count, {}};
  }

  // Gathers the next batch while the worker waits for a reply (under a
  // barrier the PS's step runs on another core meanwhile), and has a GPU model
  // start copying it to the device. The sampler does not move, so a
  // checkpoint or a new batch size finds it where it was.
  void prepare(model& m, int64_t batch) override {
    auto b = static_cast<size_t>(batch);
    if (prefetched_ == batch || !sampler_.can_peek(b))
      return;
    gather(b, next_x_, next_y_, [&](size_t i) { return sampler_.peek(i); });
    prefetched_ = batch;
    m.stage(view_of(next_x_, next_y_));  // next_batch swaps these very buffers in
  }

  // A sparse model's keys of the next batch: gathered now (the sampler does
  // not move; at a pass's end a copy of it draws ahead), so step() takes
  // the very batch whose rows the worker pulls.
  std::vector<std::vector<uint64_t>> keys(model& m, int64_t batch) override {
    if (prefetched_ != batch) {
      auto b = static_cast<size_t>(batch);
      if (sampler_.can_peek(b)) {
        gather(b, next_x_, next_y_, [&](size_t i) { return sampler_.peek(i); });
      } else {
        auto ahead = sampler_;
        gather(b, next_x_, next_y_, [&](size_t) { return ahead.next(); });
      }
      prefetched_ = batch;
    }
    return m.keys(view_of(next_x_, next_y_));
  }

  loop_state save() const override { return sampler_.saved(); }
  void restore(const loop_state& s) override { sampler_.restore(s, worker_); }

 private:
  std::shared_ptr<const dataset> train_;
  shard_sampler sampler_;  // this worker's examples, pass after pass
  int worker_;
  std::vector<float> x_, next_x_;  // the batch, and the next one gathered while a push waits
  std::vector<int64_t> y_, next_y_;
  int64_t prefetched_ = 0;         // ... its size (0: none); the sampler has not moved

  batch_view view_of(const std::vector<float>& x, const std::vector<int64_t>& y) const {
    const auto& shape = train_->shape;
    return {x.data(), y.data(), static_cast<int64_t>(y.size()), train_->dim, shape.data(),
            static_cast<int64_t>(shape.size())};
  }

  template <class Index>
  void gather(size_t b, std::vector<float>& x, std::vector<int64_t>& y, Index index) {
    auto dim = static_cast<size_t>(train_->dim);
    x.resize(b * dim);
    y.resize(b);
    for (size_t i = 0; i < b; ++i) {
      auto idx = index(i);
      std::copy(train_->row(idx), train_->row(idx) + dim, x.data() + i * dim);
      y[i] = train_->y[static_cast<size_t>(idx)];
    }
  }

  batch_view next_batch(size_t b) {
    if (prefetched_ == static_cast<int64_t>(b)) {
      std::swap(x_, next_x_);
      std::swap(y_, next_y_);
      sampler_.advance(b);
    } else {
      gather(b, x_, y_, [&](size_t) { return sampler_.next(); });
    }
    prefetched_ = 0;
    return view_of(x_, y_);
  }
};

}  // namespace

loop_spec classify_loop_spec() {
  return {[](const loop_context& c) { return std::make_unique<classify_loop>(c); },
          [](model& m, const dataset& test, const loop_context&) { return m.evaluate(test); }};
}

}  // namespace syncpoint
