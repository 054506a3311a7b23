// TorchScript models and losses: a module Python saved with
// torch.jit.script(net).save("net.pt") trains as the model "script:net.pt",
// with no Python at run time; a scripted function of (output, target) saved
// the same way replaces cross-entropy (--loss script:loss.pt).
//
// The scripted module's parameters (named_parameters order), then its float
// buffers, are the model's flat vector, as for an nn::Module (torch_model):
// an nn::Module here registers the very tensors the scripted module holds, so
// torch_model's re-seating (set_data) reaches the scripted module's forward.
#include <syncpoint/torch_model.hpp>

#include <torch/script.h>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace syncpoint {

namespace {

constexpr const char* how_to_make = "torch.jit.script(net).save(FILE) in Python makes one";

// A file's bytes, read once per process (every worker and the evaluator load their own module from them).
std::shared_ptr<const std::string> file_bytes(const std::string& path, const std::string& what) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const std::string>> read;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = read.find(path); it != read.end())
    return it->second;
  if (path.empty())
    throw std::invalid_argument(what + " script: names no file (script:FILE.pt)");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::invalid_argument("cannot read the " + what + " script:" + path + " (no such file, or not readable)");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return read[path] = std::make_shared<const std::string>(bytes.str());
}

std::string first_line(const std::string& text) {
  auto end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

torch::jit::Module load_script(const std::string& path, const std::string& what) {
  auto bytes = file_bytes(path, what);
  std::istringstream in(*bytes);
  try {
    return torch::jit::load(in, torch::kCPU);
  } catch (const c10::Error& e) {
    throw std::invalid_argument("the " + what + " script:" + path + " is not a TorchScript module (" + how_to_make +
                                "): " + first_line(e.what_without_backtrace()));
  }
}

std::string shape_of(const torch::Tensor& t) {
  std::string out;
  for (auto d : t.sizes())
    out += (out.empty() ? "" : ", ") + std::to_string(d);
  return "[" + out + "]";
}

// The scripted module as an nn::Module: the same parameter and buffer tensors, registered
// under the scripted names ('.' is not allowed in an nn::Module's names: ':' stands for it).
struct scripted_module : torch::nn::Module {
  torch::jit::Module script;

  explicit scripted_module(torch::jit::Module m) : script(std::move(m)) {
    auto name = [](std::string n) {
      std::replace(n.begin(), n.end(), '.', ':');
      return n;
    };
    for (const auto& p : script.named_parameters(/*recurse=*/true))
      register_parameter(name(p.name), p.value, p.value.requires_grad());
    for (const auto& b : script.named_buffers(/*recurse=*/true))
      register_buffer(name(b.name), b.value);
    torch::nn::Module::train(script.is_training());  // as saved, so that train() below sees every change
  }

  void train(bool on = true) override {
    if (on != is_training())  // every step asks: the scripted module's submodules are set only on a change
      script.train(on);
    torch::nn::Module::train(on);
  }

  torch::Tensor forward(const torch::Tensor& x) {
    auto out = script.forward({x});
    if (!out.isTensor())
      throw std::invalid_argument("a script model's forward returned a " + out.tagKind() + ", not a tensor of logits");
    return out.toTensor();
  }
};

// A script model starts from the weights its file holds, whatever the seed: initialize them in
// Python before saving (torch.manual_seed), as the network's own code does.
class script_model : public torch_model {
 public:
  script_model(std::shared_ptr<scripted_module> m, forward_fn forward)
    : torch_model(std::move(m), std::move(forward)), saved_(current_weights()) {}

  std::vector<float> initial_weights(uint64_t) override {
    load(saved_.data());
    return saved_;
  }

 private:
  std::vector<float> saved_;
};

}  // namespace

std::unique_ptr<model> make_script_model(const model_input& in) {
  auto net = std::make_shared<scripted_module>(load_script(in.options, "model"));
  auto* raw = net.get();
  auto m = std::make_unique<script_model>(net, [raw](const torch::Tensor& x) { return raw->forward(x); });
  // Its output must be [batch, classes] logits for the data's examples: tried on a batch of two zeros.
  std::vector<int64_t> sizes{2};
  sizes.insert(sizes.end(), in.shape.begin(), in.shape.end());
  torch::Tensor out;
  {
    torch::NoGradGuard no_grad;
    net->eval();
    try {
      out = m->forward(torch::zeros(sizes));
    } catch (const c10::Error& e) {
      throw std::invalid_argument("the model script:" + in.options + " cannot take a batch of the data's examples " +
                                  shape_of(torch::zeros(sizes)) + ": " + first_line(e.what_without_backtrace()));
    }
    net->train();
  }
  if (out.dim() != 2 || out.size(0) != 2 || out.size(1) != in.classes)
    throw std::invalid_argument("the model script:" + in.options + " gives " + shape_of(out) + " for a batch " +
                                shape_of(torch::zeros(sizes)) + " of the data's examples; the data has " +
                                std::to_string(in.classes) + " classes, so it must give [2, " +
                                std::to_string(in.classes) + "] (one logit per class)");
  return m;
}

void set_script_loss(model& m, const std::string& spec) {
  const std::string prefix = "script:";
  if (spec.rfind(prefix, 0) != 0)
    throw std::invalid_argument("--loss " + spec + ": expected script:FILE.pt (a scripted function of (output, "
                                "target) returning a scalar; " + how_to_make + ")");
  auto* net = dynamic_cast<torch_model*>(&m);
  if (!net)
    throw std::invalid_argument("--loss " + spec + " needs a LibTorch model (mlp, cnn, resnet, script:...); this "
                                "model is not one");
  auto path = spec.substr(prefix.size());
  auto loss = std::make_shared<torch::jit::Module>(load_script(path, "loss"));
  net->set_criterion([loss, path](const torch::Tensor& output, const torch::Tensor& target) {
    auto value = loss->forward({output, target});
    if (!value.isTensor())
      throw std::invalid_argument("the loss script:" + path + " returned a " + value.tagKind() + ", not a tensor");
    return value.toTensor();
  });
}

}  // namespace syncpoint
