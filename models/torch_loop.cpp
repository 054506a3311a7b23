// A worker loop of a LibTorch model, a loss and a batch source
// (<syncpoint/torch_loop.hpp>): each step takes the source's next batch and
// the gradient of the loss on it (torch_model::gradient with a loss).
#include <syncpoint/torch_loop.hpp>

#include "models/shard_sampler.hpp"

#include <optional>
#include <stdexcept>

namespace syncpoint {

namespace {

torch_model& torch_model_of(model& m, const char* what) {
  auto* t = dynamic_cast<torch_model*>(&m);
  if (t == nullptr)
    throw std::invalid_argument(std::string(what) + " needs a LibTorch model (a registered torch module), "
                                                    "and the job's model is not one");
  return *t;
}

class torch_loop : public worker_loop {
 public:
  torch_loop(torch_model::loss_fn loss, std::unique_ptr<batch_source> source)
    : loss_(std::move(loss)), source_(std::move(source)) {}

  step_result step(model& m, const step_input& in, float* grad) override {
    auto& t = torch_model_of(m, "a torch loop");
    auto b = next_ ? std::move(*next_) : draw(in.batch);
    next_.reset();
    return {t.gradient(loss_, b, grad), b.data.size(0), {}};
  }

  // A sparse model (ps_embeddings): the next batch is drawn now, so that its
  // keys go with the pull; step() then computes on it.
  std::vector<std::vector<uint64_t>> keys(model& m, int64_t batch) override {
    auto& t = torch_model_of(m, "a torch loop");
    if (!next_)
      next_ = draw(batch);
    return t.keys(next_->data);
  }

  // A batch drawn for keys() and not yet computed on is drawn again after a
  // resume: the checkpoint keeps the source's position from before it.
  loop_state save() const override { return next_ ? before_next_ : source_->save(); }
  void restore(const loop_state& s) override {
    next_.reset();
    source_->restore(s);
  }

 private:
  torch_batch draw(int64_t batch) {
    before_next_ = source_->save();
    auto b = source_->next(batch);
    if (!b.data.defined() || b.data.dim() == 0 || b.data.size(0) < 1)
      throw std::invalid_argument("the batch source gave an empty batch");
    return b;
  }

  torch_model::loss_fn loss_;
  std::unique_ptr<batch_source> source_;
  std::optional<torch_batch> next_;  ///< drawn for keys(), computed on by the next step()
  loop_state before_next_;           ///< the source's position before next_ was drawn
};

// The job's data set, a shard per worker, drawn as the built-in loop draws it.
class dataset_source : public batch_source {
 public:
  explicit dataset_source(const loop_context& c)
    : train_(c.train), sampler_(c.train->size, c.workers, c.worker, c.seed), worker_(c.worker) {}

  torch_batch next(int64_t size) override {
    std::vector<int64_t> shape{size};
    shape.insert(shape.end(), train_->shape.begin(), train_->shape.end());
    auto x = torch::empty(shape, torch::kFloat);
    auto y = torch::empty({size}, torch::kLong);
    auto* xp = x.data_ptr<float>();
    auto* yp = y.data_ptr<int64_t>();
    for (int64_t i = 0; i < size; ++i) {
      auto idx = sampler_.next();
      std::copy(train_->row(idx), train_->row(idx) + train_->dim, xp + i * train_->dim);
      yp[i] = train_->y[static_cast<size_t>(idx)];
    }
    return {x, y};
  }

  loop_state save() const override { return sampler_.saved(); }
  void restore(const loop_state& s) override { sampler_.restore(s, worker_); }

 private:
  std::shared_ptr<const dataset> train_;
  shard_sampler sampler_;
  int worker_;
};

}  // namespace

source_factory dataset_batches() {
  return [](const loop_context& c) { return std::make_unique<dataset_source>(c); };
}

bool register_torch_loop(const std::string& name, torch_loop_spec spec) {
  if (!spec.loss)
    throw std::invalid_argument("register_torch_loop('" + name + "'): no loss");
  if (!spec.source)
    throw std::invalid_argument("register_torch_loop('" + name + "'): no batch source");
  loop_spec out;
  out.make = [loss = spec.loss, source = spec.source](const loop_context& c) {
    return std::make_unique<torch_loop>(loss, source(c));
  };
  out.check = [](model& m) { torch_model_of(m, "the loop"); };
  if (spec.evaluate)
    out.evaluate = [f = spec.evaluate](model& m, const dataset& test, const loop_context& job) {
      return f(torch_model_of(m, "a torch loop's evaluation"), test, job);
    };
  return register_loop(name, std::move(out));
}

}  // namespace syncpoint
