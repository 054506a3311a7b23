#include <syncpoint/worker_loop.hpp>

#include <map>
#include <mutex>
#include <stdexcept>

namespace syncpoint {

// models/classify_loop.cpp: the built-in loop.
loop_spec classify_loop_spec();

namespace {

std::map<std::string, loop_spec>& registry() {
  static std::map<std::string, loop_spec> loops{{"classify", classify_loop_spec()}};
  return loops;
}

std::mutex registry_mutex;

// Weights and nothing else: a loop of the user's own computes their gradient.
class weights_model : public model {
 public:
  weights_model(size_t n, std::function<std::vector<float>(uint64_t)> init) : w_(n), init_(std::move(init)) {}
  size_t size() const override { return w_.size(); }
  std::vector<float> initial_weights(uint64_t seed) override {
    if (!init_)
      return std::vector<float>(w_.size());
    auto w = init_(seed);
    if (w.size() != w_.size())
      throw std::invalid_argument("weights_only: the initializer gave " + std::to_string(w.size()) +
                                  " values for a model of " + std::to_string(w_.size()));
    return w;
  }
  void load(const float* w) override { std::copy(w, w + w_.size(), w_.begin()); }
  void local_step(const float* grad, float lr) override {
    for (size_t i = 0; i < w_.size(); ++i)
      w_[i] -= lr * grad[i];
  }
  std::vector<float> current_weights() const override { return w_; }
  float gradient(const batch_view&, float*) override {
    throw std::logic_error("a weights_only model has no loss of its own: run it with a loop of yours (--loop)");
  }
  void predict(const batch_view&, int64_t*) override {
    throw std::logic_error("a weights_only model predicts nothing: evaluate it with its loop's evaluate function");
  }

 private:
  std::vector<float> w_;
  std::function<std::vector<float>(uint64_t)> init_;
};

}  // namespace

bool register_loop(const std::string& name, loop_spec spec) {
  if (!spec.make)
    throw std::invalid_argument("register_loop('" + name + "'): the loop has no factory");
  std::lock_guard<std::mutex> guard(registry_mutex);
  return registry().emplace(name, std::move(spec)).second;
}

bool register_loop(const std::string& name, loop_factory make) {
  return register_loop(name, loop_spec{std::move(make), {}});
}

loop_spec find_loop(const std::string& name) {
  {
    std::lock_guard<std::mutex> guard(registry_mutex);
    auto i = registry().find(name);
    if (i != registry().end())
      return i->second;
  }
  std::string known;
  for (auto& n : loop_names())
    known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown loop '" + name + "' (known: " + known + ")");
}

std::vector<std::string> loop_names() {
  std::lock_guard<std::mutex> guard(registry_mutex);
  std::vector<std::string> out;
  for (auto& kv : registry())
    out.push_back(kv.first);
  return out;
}

std::unique_ptr<model> weights_only(size_t n, std::function<std::vector<float>(uint64_t)> init) {
  return std::make_unique<weights_model>(n, std::move(init));
}

}  // namespace syncpoint
