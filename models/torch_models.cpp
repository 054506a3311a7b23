#include "models/torch_model.hpp"

#include "models/blas.hpp"

#include <atomic>
#include <mutex>

namespace syncpoint {

namespace {

// LibTorch's CPU parallelism is OpenMP, whose thread count is a per-thread
// setting: setting it on the main thread leaves every actor thread at "all
// cores", and two workers then each fork OpenMP teams onto the same 2 cores.
// So the wanted count is global and each thread applies it before its first op.
std::atomic<int> wanted_threads{0};
std::atomic<int> threads_epoch{0};

void apply_thread_setting() {
  thread_local int applied_epoch = -1;
  int epoch = threads_epoch.load(std::memory_order_acquire);
  if (epoch != applied_epoch) {
    applied_epoch = epoch;
    if (int n = wanted_threads.load(); n > 0)
      torch::set_num_threads(n);
  }
}

}  // namespace

torch_model::torch_model(std::shared_ptr<torch::nn::Module> module, forward_fn forward)
  : module_(std::move(module)), forward_(std::move(forward)) {
  params_ = module_->parameters();
  int64_t total = 0;
  for (auto& p : params_)
    total += p.numel();
  flat_ = torch::empty({total});
  own_ = flat_;
  torch::NoGradGuard no_grad;
  int64_t offset = 0;
  for (auto& p : params_) {
    flat_.narrow(0, offset, p.numel()).copy_(p.detach().reshape({-1}));
    offset += p.numel();
  }
  seat_parameters();
}

void torch_model::seat_parameters() {
  int64_t offset = 0;
  for (auto& p : params_) {
    p.set_data(flat_.narrow(0, offset, p.numel()).view(p.sizes()));
    offset += p.numel();
  }
}

void torch_model::adopt(std::shared_ptr<const std::vector<float>> w) {
  if (static_cast<int64_t>(w->size()) != flat_.numel())
    throw std::invalid_argument("torch_model::adopt: " + std::to_string(w->size()) +
                                " values for " + std::to_string(flat_.numel()) + " parameters");
  adopted_ = std::move(w);
  // Read-only from here on: gradients go to their own buffer, and load()
  // first gives the model storage of its own again.
  flat_ = torch::from_blob(const_cast<float*>(adopted_->data()), {flat_.numel()});
  seat_parameters();
}

size_t torch_model::size() const {
  return static_cast<size_t>(flat_.numel());
}

std::vector<float> torch_model::initial_weights(uint64_t seed) {
  // torch's global generator is process-wide: serialize its use.
  static std::mutex rng_mutex;
  std::lock_guard<std::mutex> guard(rng_mutex);
  torch::manual_seed(seed);
  torch::NoGradGuard no_grad;
  double bound = 1.0;
  for (auto& p : params_) {
    if (p.dim() >= 2)
      bound = 1.0 / std::sqrt(static_cast<double>(p.numel() / p.size(0)));
    p.uniform_(-bound, bound);  // a bias uses the fan-in of the weight before it
  }
  return std::vector<float>(flat_.data_ptr<float>(), flat_.data_ptr<float>() + flat_.numel());
}

void torch_model::load(const float* w) {
  torch::NoGradGuard no_grad;
  if (adopted_) {  // never write into a buffer we only borrowed
    adopted_.reset();
    flat_ = own_;
    seat_parameters();
  }
  flat_.copy_(torch::from_blob(const_cast<float*>(w), {flat_.numel()}));
}

std::vector<float> torch_model::current_weights() const {
  auto* p = flat_.data_ptr<float>();
  return std::vector<float>(p, p + flat_.numel());
}

void torch_model::local_step(const float* grad, float lr) {
  torch::NoGradGuard no_grad;
  if (adopted_) {  // copy on write: the adopted weights are shared
    own_.copy_(flat_);
    adopted_.reset();
    flat_ = own_;
    seat_parameters();
  }
  flat_.add_(torch::from_blob(const_cast<float*>(grad), {flat_.numel()}), -lr);
}

float torch_model::gradient(const batch_view& b, float* grad) {
  apply_thread_setting();
  // Each parameter's .grad is a view into `grad`, so autograd accumulates
  // straight into the caller's buffer (measured faster than copying out
  // freshly allocated gradients).
  auto g = torch::from_blob(grad, {flat_.numel()});
  g.zero_();
  int64_t offset = 0;
  std::vector<torch::Tensor> targets;
  targets.reserve(params_.size());
  for (auto& p : params_) {
    targets.push_back(g.narrow(0, offset, p.numel()).view(p.sizes()));
    p.mutable_grad() = targets.back();
    offset += p.numel();
  }
  auto x = torch::from_blob(const_cast<float*>(b.x), {b.count, b.dim});
  auto y = torch::from_blob(const_cast<int64_t*>(b.y), {b.count}, torch::kLong);
  auto turn = blas_turn();
  auto loss = torch::nn::functional::cross_entropy(forward_(x), y);
  loss.backward();
  for (size_t i = 0; i < params_.size(); ++i) {
    auto& pg = params_[i].mutable_grad();
    if (pg.data_ptr() != targets[i].data_ptr())  // autograd chose a fresh tensor
      targets[i].copy_(pg);
    pg = torch::Tensor();
  }
  return loss.item<float>();
}

void torch_model::predict(const batch_view& b, int64_t* labels) {
  apply_thread_setting();
  torch::NoGradGuard no_grad;
  auto x = torch::from_blob(const_cast<float*>(b.x), {b.count, b.dim});
  auto turn = blas_turn();
  auto predicted = forward_(x).argmax(1).contiguous();
  std::copy(predicted.data_ptr<int64_t>(), predicted.data_ptr<int64_t>() + b.count, labels);
}

namespace {

struct mlp : torch::nn::Module {
  torch::nn::Linear fc1{register_module("fc1", torch::nn::Linear(784, 256))};
  torch::nn::Linear fc2{register_module("fc2", torch::nn::Linear(256, 10))};
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x))); }
};

struct cnn : torch::nn::Module {
  torch::nn::Conv2d conv1{register_module("conv1", torch::nn::Conv2d(1, 8, 5))};
  torch::nn::Conv2d conv2{register_module("conv2", torch::nn::Conv2d(8, 16, 5))};
  torch::nn::Linear fc{register_module("fc", torch::nn::Linear(16 * 4 * 4, 10))};
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::max_pool2d(torch::relu(conv1(x.view({-1, 1, 28, 28}))), 2);
    h = torch::max_pool2d(torch::relu(conv2(h)), 2);
    return fc(h.flatten(1));
  }
};

}  // namespace

std::unique_ptr<model> make_torch_mlp() {
  return wrap_module(std::make_shared<mlp>());
}

std::unique_ptr<model> make_torch_cnn() {
  return wrap_module(std::make_shared<cnn>());
}

std::string torch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

void set_torch_threads(int n) {
  set_blas_threads(n);
  wanted_threads.store(n);
  threads_epoch.fetch_add(1, std::memory_order_release);
  apply_thread_setting();
}

}  // namespace syncpoint
