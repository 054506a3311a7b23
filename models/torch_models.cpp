#include <syncpoint/torch_model.hpp>

#include "models/blas.hpp"

#include <algorithm>
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

namespace {

bool normalization(torch::nn::Module& m) {
  return m.as<torch::nn::BatchNorm1d>() || m.as<torch::nn::BatchNorm2d>() || m.as<torch::nn::BatchNorm3d>() ||
         m.as<torch::nn::LayerNorm>() || m.as<torch::nn::GroupNorm>() || m.as<torch::nn::InstanceNorm1d>() ||
         m.as<torch::nn::InstanceNorm2d>() || m.as<torch::nn::InstanceNorm3d>();
}

}  // namespace

torch_model::torch_model(std::shared_ptr<torch::nn::Module> module, forward_fn forward)
  : module_(std::move(module)), forward_(std::move(forward)) {
  params_ = module_->parameters();
  std::vector<const void*> norm_params;
  for (auto& m : module_->modules(/*include_self=*/true))
    if (normalization(*m))
      for (auto& p : m->parameters(/*recurse=*/false))
        norm_params.push_back(p.unsafeGetTensorImpl());
  int64_t total = 0;
  for (auto& p : params_) {
    total += p.numel();
    keep_initial_.push_back(std::find(norm_params.begin(), norm_params.end(), p.unsafeGetTensorImpl()) !=
                            norm_params.end());
  }
  int64_t buffered = 0;
  for (auto& b : module_->buffers())
    if (b.scalar_type() == torch::kFloat) {
      buffers_.push_back(b);
      buffered += b.numel();
    }
  flat_ = torch::empty({total});
  own_ = flat_;
  buffer_store_ = torch::empty({buffered});
  torch::NoGradGuard no_grad;
  int64_t offset = 0;
  for (auto& p : params_) {
    flat_.narrow(0, offset, p.numel()).copy_(p.detach().reshape({-1}));
    offset += p.numel();
  }
  offset = 0;
  for (auto& b : buffers_) {
    auto view = buffer_store_.narrow(0, offset, b.numel());
    view.copy_(b.detach().reshape({-1}));
    b.set_data(view.view(b.sizes()));
    offset += b.numel();
  }
  constructed_ = current_weights();
  seat_parameters();
}

void torch_model::seat_parameters() {
  int64_t offset = 0;
  for (auto& p : params_) {
    p.set_data(flat_.narrow(0, offset, p.numel()).view(p.sizes()));
    offset += p.numel();
  }
}

void torch_model::load_buffers(const float* b) {
  std::copy(b, b + buffer_store_.numel(), buffer_store_.data_ptr<float>());
}

void torch_model::adopt(std::shared_ptr<const std::vector<float>> w) {
  if (w->size() != size())
    throw std::invalid_argument("torch_model::adopt: " + std::to_string(w->size()) + " values for " +
                                std::to_string(size()) + " parameters and buffers");
  adopted_ = std::move(w);
  // Read-only from here on: gradients go to their own buffer, and load()
  // first gives the model storage of its own again. The buffers are copied:
  // the forward pass writes them.
  flat_ = torch::from_blob(const_cast<float*>(adopted_->data()), {parameter_count()});
  seat_parameters();
  load_buffers(adopted_->data() + parameter_count());
}

size_t torch_model::size() const {
  return static_cast<size_t>(flat_.numel() + buffer_store_.numel());
}

size_t torch_model::buffers() const {
  return static_cast<size_t>(buffer_store_.numel());
}

std::vector<float> torch_model::initial_weights(uint64_t seed) {
  // torch's global generator is process-wide: serialize its use.
  static std::mutex rng_mutex;
  std::lock_guard<std::mutex> guard(rng_mutex);
  torch::manual_seed(seed);
  torch::NoGradGuard no_grad;
  double bound = 1.0;
  int64_t offset = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i];
    if (keep_initial_[i]) {  // a normalization layer's scale and shift: 1 and 0, as torch makes them
      p.view({-1}).copy_(torch::from_blob(constructed_.data() + offset, {p.numel()}));
    } else {
      if (p.dim() >= 2)
        bound = 1.0 / std::sqrt(static_cast<double>(p.numel() / p.size(0)));
      p.uniform_(-bound, bound);  // a bias uses the fan-in of the weight before it
    }
    offset += p.numel();
  }
  load_buffers(constructed_.data() + parameter_count());
  return current_weights();
}

void torch_model::load(const float* w) {
  torch::NoGradGuard no_grad;
  if (adopted_) {  // never write into a buffer we only borrowed
    adopted_.reset();
    flat_ = own_;
    seat_parameters();
  }
  flat_.copy_(torch::from_blob(const_cast<float*>(w), {parameter_count()}));
  load_buffers(w + parameter_count());
}

std::vector<float> torch_model::current_weights() const {
  std::vector<float> out(size());
  std::copy(flat_.data_ptr<float>(), flat_.data_ptr<float>() + flat_.numel(), out.begin());
  std::copy(buffer_store_.data_ptr<float>(), buffer_store_.data_ptr<float>() + buffer_store_.numel(),
            out.begin() + flat_.numel());
  return out;
}

void torch_model::local_step(const float* grad, float lr) {
  torch::NoGradGuard no_grad;
  if (adopted_) {  // copy on write: the adopted weights are shared
    own_.copy_(flat_);
    adopted_.reset();
    flat_ = own_;
    seat_parameters();
  }
  flat_.add_(torch::from_blob(const_cast<float*>(grad), {parameter_count()}), -lr);
  load_buffers(grad + parameter_count());
}

float torch_model::gradient(const batch_view& b, float* grad) {
  apply_thread_setting();
  // Each parameter's .grad is a view into `grad`, so autograd accumulates
  // straight into the caller's buffer (measured faster than copying out
  // freshly allocated gradients).
  auto g = torch::from_blob(grad, {parameter_count()});
  g.zero_();
  int64_t offset = 0;
  std::vector<torch::Tensor> targets;
  targets.reserve(params_.size());
  for (auto& p : params_) {
    targets.push_back(g.narrow(0, offset, p.numel()).view(p.sizes()));
    p.mutable_grad() = targets.back();
    offset += p.numel();
  }
  auto x = torch::from_blob(const_cast<float*>(b.x), b.sizes());
  auto y = torch::from_blob(const_cast<int64_t*>(b.y), {b.count}, torch::kLong);
  auto turn = blas_turn();
  module_->train();
  auto loss = torch::nn::functional::cross_entropy(forward_(x), y);
  loss.backward();
  for (size_t i = 0; i < params_.size(); ++i) {
    auto& pg = params_[i].mutable_grad();
    if (pg.data_ptr() != targets[i].data_ptr())  // autograd chose a fresh tensor
      targets[i].copy_(pg);
    pg = torch::Tensor();
  }
  // The buffers as the forward pass left them (BatchNorm's running statistics).
  std::copy(buffer_store_.data_ptr<float>(), buffer_store_.data_ptr<float>() + buffer_store_.numel(),
            grad + parameter_count());
  return loss.item<float>();
}

void torch_model::predict(const batch_view& b, int64_t* labels) {
  apply_thread_setting();
  torch::NoGradGuard no_grad;
  auto x = torch::from_blob(const_cast<float*>(b.x), b.sizes());
  auto turn = blas_turn();
  module_->eval();  // BatchNorm uses its running statistics
  auto predicted = forward_(x).argmax(1).contiguous();
  module_->train();
  std::copy(predicted.data_ptr<int64_t>(), predicted.data_ptr<int64_t>() + b.count, labels);
}

namespace {

struct mlp : torch::nn::Module {
  torch::nn::Linear fc1{register_module("fc1", torch::nn::Linear(784, 256))};
  torch::nn::Linear fc2{register_module("fc2", torch::nn::Linear(256, 10))};
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x.flatten(1)))); }
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

// Two 3x3 convolutions with BatchNorm and a shortcut (He et al. 2016); a
// 1x1 convolution on the shortcut where the shape changes.
struct basic_block : torch::nn::Module {
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, down{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, down_bn{nullptr};

  basic_block(int64_t in, int64_t out, int64_t stride) {
    using torch::nn::Conv2dOptions;
    conv1 = register_module("conv1", torch::nn::Conv2d(Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false)));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(out));
    conv2 = register_module("conv2", torch::nn::Conv2d(Conv2dOptions(out, out, 3).padding(1).bias(false)));
    bn2 = register_module("bn2", torch::nn::BatchNorm2d(out));
    if (stride != 1 || in != out) {
      down = register_module("down", torch::nn::Conv2d(Conv2dOptions(in, out, 1).stride(stride).bias(false)));
      down_bn = register_module("down_bn", torch::nn::BatchNorm2d(out));
    }
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::relu(bn1(conv1(x)));
    h = bn2(conv2(h));
    return torch::relu(h + (down ? down_bn(down(x)) : x));
  }
};

// A small ResNet for 28x28 single-channel images: a 3x3 stem and a pooling
// to 14x14, then three residual blocks of 32, 64 and 128 channels (14x14,
// 7x7, 4x4), global average pooling and a linear layer: 308,074 parameters
// and 1,344 BatchNorm statistics.
struct resnet : torch::nn::Module {
  torch::nn::Conv2d stem{register_module(
    "stem", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 32, 3).padding(1).bias(false)))};
  torch::nn::BatchNorm2d stem_bn{register_module("stem_bn", torch::nn::BatchNorm2d(32))};
  std::shared_ptr<basic_block> block1{register_module("block1", std::make_shared<basic_block>(32, 32, 1))};
  std::shared_ptr<basic_block> block2{register_module("block2", std::make_shared<basic_block>(32, 64, 2))};
  std::shared_ptr<basic_block> block3{register_module("block3", std::make_shared<basic_block>(64, 128, 2))};
  torch::nn::Linear fc{register_module("fc", torch::nn::Linear(128, 10))};
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::max_pool2d(torch::relu(stem_bn(stem(x.view({-1, 1, 28, 28})))), 2);
    h = block3->forward(block2->forward(block1->forward(h)));
    return fc(torch::adaptive_avg_pool2d(h, {1, 1}).flatten(1));
  }
};

}  // namespace

std::unique_ptr<model> make_torch_resnet() {
  return wrap_module(std::make_shared<resnet>());
}

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
