#include <syncpoint/model.hpp>

namespace syncpoint {

namespace {

// What `syncpoint simulate` runs: the time an iteration takes is charged by
// the virtual clock, so the model only has to be there. One parameter, a zero
// gradient, every example predicted as class 0.
class timing_model : public model {
 public:
  size_t size() const override { return 1; }
  std::vector<float> initial_weights(uint64_t) override { return {0.0f}; }
  void load(const float* w) override { w_ = w[0]; }
  void local_step(const float* grad, float lr) override { w_ -= lr * grad[0]; }
  std::vector<float> current_weights() const override { return {w_}; }
  float gradient(const batch_view&, float* grad) override {
    grad[0] = 0.0f;
    return 0.0f;
  }
  void predict(const batch_view& b, int64_t* labels) override {
    for (int64_t i = 0; i < b.count; ++i)
      labels[i] = 0;
  }

 private:
  float w_ = 0.0f;
};

}  // namespace

std::unique_ptr<model> make_timing_model() {
  return std::make_unique<timing_model>();
}

}  // namespace syncpoint
