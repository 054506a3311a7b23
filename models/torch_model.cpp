#include <syncpoint/torch_model.hpp>

#include "core/parallel_chunks.hpp"
#include "models/blas.hpp"
#include "models/torch_compat.hpp"

#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

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

// A host copy of a model's size, on several cores when it is millions of
// floats (the way to and from pinned memory on a GPU worker).
void copy_floats(const float* from, float* to, int64_t n) {
  parallel_chunks(static_cast<size_t>(n), [=](size_t begin, size_t end) { std::copy(from + begin, from + end, to + begin); });
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
  find_embeddings();
}

// A batch copied to the device ahead of its gradient (stage()), on a stream of
// its own so that the copy runs while the worker waits for the PS. Through
// c10's device-generic stream and event API: no CUDA header, and the same
// calls in LibTorch 1.13 and 2.x.
struct torch_model::staging {
  staging(torch::Device on)
    : impl(on.type()), stream(impl.getStreamFromGlobalPool(on)), copied(on.type()), consumed(on.type()) {}
  ~staging() {
    try {
      impl.synchronizeStream(stream);  // no copy may land in memory freed below
    } catch (...) {
    }
  }
  c10::impl::VirtualGuardImpl impl;
  c10::Stream stream;
  c10::Event copied;    ///< recorded on `stream` after the batch's copies
  c10::Event consumed;  ///< recorded on the compute stream after the gradient that read them
  torch::Tensor pinned_x, pinned_y, x, y;  ///< host side (pinned) and device side
  const float* from_x = nullptr;  ///< the batch staged: its memory and size
  const int64_t* from_y = nullptr;
  int64_t count = 0;
  bool waiting = false;  ///< staged, not yet taken by gradient()
};

torch_model::~torch_model() = default;

void torch_model::stage(const batch_view& b) {
  if (on_cpu())
    return;
  auto& s = *staged_;
  s.impl.synchronizeStream(s.stream);  // the last staged copy is done: its host buffers are free
  auto n = b.count * b.dim;
  if (!s.pinned_x.defined() || s.pinned_x.numel() < n) {
    s.pinned_x = torch::empty({n}, torch::TensorOptions().pinned_memory(true));
    s.x = torch::empty({n}, torch::TensorOptions().device(device_));
  }
  if (!s.pinned_y.defined() || s.pinned_y.numel() < b.count) {
    s.pinned_y = torch::empty({b.count}, torch::TensorOptions().dtype(torch::kLong).pinned_memory(true));
    s.y = torch::empty({b.count}, torch::TensorOptions().dtype(torch::kLong).device(device_));
  }
  std::copy(b.x, b.x + n, s.pinned_x.data_ptr<float>());
  std::copy(b.y, b.y + b.count, s.pinned_y.data_ptr<int64_t>());
  {
    c10::StreamGuard on(s.stream);
    s.consumed.block(s.stream);  // the last gradient has read the device buffers (no-op if never recorded)
    s.x.narrow(0, 0, n).copy_(s.pinned_x.narrow(0, 0, n), /*non_blocking=*/true);
    s.y.narrow(0, 0, b.count).copy_(s.pinned_y.narrow(0, 0, b.count), /*non_blocking=*/true);
    s.copied.record(s.stream);
  }
  s.from_x = b.x;
  s.from_y = b.y;
  s.count = b.count;
  s.waiting = true;
}

// The staged batch, if `b` is it: the compute stream then waits for its copy.
bool torch_model::take_staged(const batch_view& b, torch::Tensor& x, torch::Tensor& y) {
  if (on_cpu() || !staged_->waiting)
    return false;
  auto& s = *staged_;
  s.waiting = false;
  if (b.x != s.from_x || b.y != s.from_y || b.count != s.count)
    return false;
  s.copied.block(s.impl.getStream(device_));
  x = s.x.narrow(0, 0, b.count * b.dim).view(b.sizes());
  y = s.y.narrow(0, 0, b.count);
  return true;
}

void torch_model::seat_parameters() {
  int64_t offset = 0;
  for (auto& p : params_) {
    p.set_data(flat_.narrow(0, offset, p.numel()).view(p.sizes()));
    offset += p.numel();
  }
}

void torch_model::load_buffers(const float* b) {
  if (on_cpu())
    std::copy(b, b + buffer_store_.numel(), buffer_store_.data_ptr<float>());
  else
    buffer_store_.copy_(torch::from_blob(const_cast<float*>(b), {buffer_store_.numel()}));
}

void torch_model::adopt(std::shared_ptr<const std::vector<float>> w) {
  if (w->size() != size())
    throw std::invalid_argument("torch_model::adopt: " + std::to_string(w->size()) + " values for " +
                                std::to_string(size()) + " parameters and buffers");
  if (!on_cpu()) {  // a device cannot read host memory in place: one copy
    load(w->data());
    return;
  }
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
      // Drawn on the host from the CPU generator whatever the device: the
      // same seed gives the same weights on every device.
      auto drawn = on_cpu() ? p : torch::empty(p.sizes());
      drawn.uniform_(-bound, bound);  // a bias uses the fan-in of the weight before it
      if (!on_cpu())
        p.copy_(drawn);
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
  if (!on_cpu()) {  // through pinned memory: a pageable host-to-device copy runs at a fraction of the bus's speed
    copy_floats(w, pinned_w_.data_ptr<float>(), size());
    flat_.copy_(pinned_w_.narrow(0, 0, parameter_count()));
    buffer_store_.copy_(pinned_w_.narrow(0, parameter_count(), buffer_store_.numel()));
    return;
  }
  flat_.copy_(torch::from_blob(const_cast<float*>(w), {parameter_count()}));
  load_buffers(w + parameter_count());
}

std::vector<size_t> torch_model::tensor_sizes() const {
  std::vector<size_t> out;
  for (auto& p : params_)
    out.push_back(static_cast<size_t>(p.numel()));
  return out;
}

std::vector<float> torch_model::current_weights() const {
  std::vector<float> out(size());
  if (!on_cpu()) {
    torch::from_blob(out.data(), {flat_.numel()}).copy_(flat_);
    torch::from_blob(out.data() + flat_.numel(), {buffer_store_.numel()}).copy_(buffer_store_);
    return out;
  }
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
  auto step = torch::from_blob(const_cast<float*>(grad), {parameter_count()});
  flat_.add_(on_cpu() ? step : step.to(device_), -lr);
  load_buffers(grad + parameter_count());
}

float torch_model::gradient(const batch_view& b, float* grad) {
  torch::Tensor x, y;
  bool staged = take_staged(b, x, y);
  if (!staged) {
    x = examples_on_device(b);
    y = torch::from_blob(const_cast<int64_t*>(b.y), {b.count}, torch::kLong);
    if (!on_cpu())
      y = y.to(device_);
  }
  return backpropagate(
    [&] { return criterion_ ? criterion_(forward_(x), y) : torch::nn::functional::cross_entropy(forward_(x), y); },
    grad, staged);
}

float torch_model::gradient(const loss_fn& loss, const torch_batch& b, float* grad) {
  torch_batch here = b;
  if (!on_cpu()) {
    here.data = b.data.to(device_);
    if (b.target.defined())
      here.target = b.target.to(device_);
  }
  return backpropagate([&] { return loss(*this, here); }, grad, false);
}

float torch_model::backpropagate(const std::function<torch::Tensor()>& loss_of, float* grad, bool staged) {
  apply_thread_setting();
  // Each parameter's .grad is a view into one flat gradient, so autograd
  // accumulates straight into it (measured faster than copying out freshly
  // allocated gradients). On the CPU that is the caller's buffer; on a
  // device, device_grad_, copied to the host once at the end.
  auto g = on_cpu() ? torch::from_blob(grad, {parameter_count()}) : device_grad_;
  g.zero_();
  int64_t offset = 0;
  std::vector<torch::Tensor> targets;
  targets.reserve(params_.size());
  for (auto& p : params_) {
    targets.push_back(g.narrow(0, offset, p.numel()).view(p.sizes()));
    p.mutable_grad() = targets.back();
    offset += p.numel();
  }
  clear_row_gradients();
  auto turn = blas_turn();
  module_->train();
  torch::Tensor loss;
  {
    autocast_scope bf16(bf16_);
    loss = loss_of();
    if (loss.numel() != 1)
      throw std::invalid_argument("the loss is a tensor of " + std::to_string(loss.numel()) +
                                  " values, not a scalar");
    loss.backward();
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    auto& pg = params_[i].mutable_grad();
    if (pg.data_ptr() != targets[i].data_ptr())  // autograd chose a fresh tensor
      targets[i].copy_(pg);
    pg = torch::Tensor();
  }
  take_row_gradients();
  if (on_cpu()) {
    // The buffers as the forward pass left them (BatchNorm's running statistics).
    std::copy(buffer_store_.data_ptr<float>(), buffer_store_.data_ptr<float>() + buffer_store_.numel(),
              grad + parameter_count());
    return loss.item<float>();
  }
  if (staged)  // the next stage() waits for this before it overwrites the batch on the device
    staged_->consumed.record(staged_->impl.getStream(device_));
  // Device to pinned host memory (the fast path of a device copy), then to the caller's buffer.
  pinned_grad_.narrow(0, 0, parameter_count()).copy_(device_grad_);
  pinned_grad_.narrow(0, parameter_count(), buffer_store_.numel()).copy_(buffer_store_);
  copy_floats(pinned_grad_.data_ptr<float>(), grad, pinned_grad_.numel());
  return loss.item<float>();
}

// A batch's examples as a tensor on the model's device: on the CPU the
// caller's memory itself; on a device, staged through pinned host memory,
// from which the copy runs at the bus's speed.
torch::Tensor torch_model::examples_on_device(const batch_view& b) {
  auto x = torch::from_blob(const_cast<float*>(b.x), b.sizes());
  if (on_cpu())
    return x;
  auto n = x.numel();
  if (!pinned_x_.defined() || pinned_x_.numel() < n)
    pinned_x_ = torch::empty({n}, torch::TensorOptions().pinned_memory(true));
  auto staged = pinned_x_.narrow(0, 0, n).view(b.sizes());
  staged.copy_(x);
  return staged.to(device_, /*non_blocking=*/true);
}

void torch_model::predict(const batch_view& b, int64_t* labels) {
  apply_thread_setting();
  torch::NoGradGuard no_grad;
  auto x = examples_on_device(b);
  auto turn = blas_turn();
  module_->eval();  // BatchNorm uses its running statistics
  torch::Tensor predicted;
  {
    autocast_scope bf16(bf16_);
    predicted = forward_(x).argmax(1).to(torch::kCPU).contiguous();
  }
  module_->train();
  std::copy(predicted.data_ptr<int64_t>(), predicted.data_ptr<int64_t>() + b.count, labels);
}

void torch_model::place(const std::string& device, const std::string& precision) {
  if (precision != "fp32" && precision != "bf16")
    throw std::invalid_argument("precision '" + precision + "' is not one of fp32, bf16");
  torch::Device to = torch::kCPU;
  if (device != "cpu") {
    if (device != "cuda" && device.rfind("cuda:", 0) != 0)
      throw std::invalid_argument("device '" + device + "' is not one of cpu, cuda, cuda:N");
    if (!built_with_cuda())
      throw std::invalid_argument("this LibTorch was built without CUDA (device " + device + ")");
    try {
      to = torch::Device(device);
    } catch (const std::exception&) {
      throw std::invalid_argument("device '" + device + "' is not one of cpu, cuda, cuda:N");
    }
    auto visible = cuda_device_count();
    if (to.index() >= visible)
      throw std::invalid_argument("device " + device + ": " + std::to_string(visible) + " CUDA device" +
                                  (visible == 1 ? "" : "s") + " visible");
  }
  if (precision == "bf16" && to.is_cpu())
    throw std::invalid_argument("--precision bf16 needs a CUDA device (autocast runs on CUDA); on the CPU use fp32");
  bf16_ = precision == "bf16";
  if (to == device_)
    return;
  if (adopted_)
    load(adopted_->data());  // storage of our own before it moves
  torch::NoGradGuard no_grad;
  module_->to(to);  // integer buffers too (BatchNorm's batch count)
  device_ = to;
  flat_ = flat_.to(to);
  own_ = flat_;
  seat_parameters();
  buffer_store_ = buffer_store_.to(to);
  int64_t offset = 0;
  for (auto& b : buffers_) {
    b.set_data(buffer_store_.narrow(0, offset, b.numel()).view(b.sizes()));
    offset += b.numel();
  }
  staged_.reset();
  if (to.is_cpu()) {
    device_grad_ = pinned_grad_ = pinned_w_ = pinned_x_ = torch::Tensor();
    return;
  }
  staged_ = std::make_unique<staging>(to);
  device_grad_ = torch::empty({parameter_count()}, torch::TensorOptions().device(to));
  pinned_grad_ = torch::empty({static_cast<int64_t>(size())}, torch::TensorOptions().pinned_memory(true));
  pinned_w_ = torch::empty({static_cast<int64_t>(size())}, torch::TensorOptions().pinned_memory(true));
}

bool torch_has_cuda() {
  return built_with_cuda();
}

int cuda_device_count() {
  return built_with_cuda() ? static_cast<int>(torch::cuda::device_count()) : 0;
}

bool torch_uses_mkl() {
  return at::hasMKL();
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
