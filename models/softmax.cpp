// Softmax regression on Eigen alone: builds in a second, trains in milliseconds.
#include <syncpoint/model.hpp>

#include <Eigen/Dense>

#include <random>

namespace syncpoint {

namespace {

using matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using cmap = Eigen::Map<const matrix>;

class softmax_model : public model {
 public:
  softmax_model(int64_t dim, int64_t classes) : dim_(dim), classes_(classes) {
    w_.resize(size());
  }

  size_t size() const override { return static_cast<size_t>(classes_ * dim_ + classes_); }

  std::vector<float> initial_weights(uint64_t seed) override {
    std::vector<float> w(size(), 0.0f);
    std::mt19937_64 rng(seed ^ 0x5eed50f7a3a7ULL);  // a stream of its own, not the data's
    std::normal_distribution<float> normal(0.0f, 0.01f);
    for (int64_t i = 0; i < classes_ * dim_; ++i)
      w[i] = normal(rng);
    return w;
  }

  void load(const float* w) override { std::copy(w, w + size(), w_.begin()); }

  std::vector<float> current_weights() const override { return {w_.begin(), w_.end()}; }

  void local_step(const float* grad, float lr) override {
    for (size_t i = 0; i < w_.size(); ++i)
      w_[i] -= lr * grad[i];
  }

  float gradient(const batch_view& b, float* grad) override {
    for (int64_t i = 0; i < b.count; ++i)
      if (b.y[i] < 0 || b.y[i] >= classes_)
        throw std::invalid_argument("softmax: label " + std::to_string(b.y[i]) + " is outside its " +
                                    std::to_string(classes_) + " classes");
    matrix p = probabilities(b);
    float loss = 0;
    for (int64_t i = 0; i < b.count; ++i) {
      loss -= std::log(std::max(p(i, b.y[i]), 1e-12f));
      p(i, b.y[i]) -= 1.0f;
    }
    p /= static_cast<float>(b.count);
    cmap x(b.x, b.count, b.dim);
    Eigen::Map<matrix> gw(grad, classes_, dim_);
    gw.noalias() = p.transpose() * x;
    Eigen::Map<Eigen::VectorXf> gb(grad + classes_ * dim_, classes_);
    gb = p.colwise().sum().transpose();
    return loss / static_cast<float>(b.count);
  }

  void predict(const batch_view& b, int64_t* labels) override {
    matrix logits = scores(b);
    for (int64_t i = 0; i < b.count; ++i) {
      Eigen::Index arg;
      logits.row(i).maxCoeff(&arg);
      labels[i] = arg;
    }
  }

 private:
  matrix scores(const batch_view& b) const {
    if (b.dim != dim_)
      throw std::invalid_argument("softmax: takes examples of " + std::to_string(dim_) + " values, not " +
                                  std::to_string(b.dim));
    cmap x(b.x, b.count, b.dim);
    cmap w(w_.data(), classes_, dim_);
    Eigen::Map<const Eigen::RowVectorXf> bias(w_.data() + classes_ * dim_, classes_);
    matrix logits = x * w.transpose();
    logits.rowwise() += bias;
    return logits;
  }

  matrix probabilities(const batch_view& b) const {
    matrix logits = scores(b);
    for (int64_t i = 0; i < b.count; ++i) {
      logits.row(i).array() -= logits.row(i).maxCoeff();
      logits.row(i) = logits.row(i).array().exp();
      logits.row(i) /= logits.row(i).sum();
    }
    return logits;
  }

  int64_t dim_;
  int64_t classes_;
  std::vector<float> w_;
};

}  // namespace

std::unique_ptr<model> make_softmax_model(int64_t dim, int64_t classes) {
  return std::make_unique<softmax_model>(dim, classes);
}

}  // namespace syncpoint
