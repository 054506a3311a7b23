// tinylm: a small decoder-only transformer (GPT's shape: token and position
// embeddings, pre-norm blocks of causal self-attention and an MLP, a final
// norm and a linear head) for the character-level text set (--dataset text).
// An example is context + 1 characters: the model reads the first `context`
// and predicts each next one, so a batch's loss is the mean cross-entropy
// over every position (nats per character). Its size: `--model
// tinylm:layers=L,width=D,heads=H` (default 2, 64, 4); its context is the
// data's (--context). `embed=table` keeps the token embedding in the PS as a
// sparse table (docs/sparse.md): a step pulls and pushes the rows of its
// batch's tokens alone, moved by the row optimizer `opt=` (adam by default;
// the job's --optimizer moves the dense weights).
#include <syncpoint/messages.hpp>
#include <syncpoint/torch_model.hpp>

#include "models/name_options.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace syncpoint {

namespace {

struct lm_size {
  int64_t layers = 2, width = 64, heads = 4;
  bool table = false;  // embed=table: the token embedding is a sparse table of the PS
  row_optimizer rows = row_optimizer::adam;  // opt=: how the PS moves that table's rows
};

// "layers=4,width=128,heads=4": each name once at most, positive whole numbers.
lm_size parse_size(const std::string& spec) {
  lm_size s;
  for (auto& [name, value] : name_options(spec, "tinylm", "layers, width, heads, embed, opt")) {
    if (name == "embed") {
      if (value != "dense" && value != "table")
        throw std::invalid_argument("tinylm: 'embed=" + value + "' is not embed=dense or embed=table");
      s.table = value == "table";
      continue;
    }
    if (name == "opt") {
      if (value != "sgd" && value != "adagrad" && value != "adam")
        throw std::invalid_argument("tinylm: 'opt=" + value + "' is not opt=sgd, opt=adagrad or opt=adam");
      s.rows = value == "sgd" ? row_optimizer::sgd : value == "adagrad" ? row_optimizer::adagrad : row_optimizer::adam;
      continue;
    }
    char* end = nullptr;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || v < 1 || v > 65536)
      throw std::invalid_argument("tinylm: '" + name + "=" + value + "' is not NAME=N (layers, width, heads; N >= 1)");
    if (name == "layers")
      s.layers = v;
    else if (name == "width")
      s.width = v;
    else if (name == "heads")
      s.heads = v;
    else
      throw std::invalid_argument("tinylm: no option '" + name + "' (layers, width, heads, embed, opt)");
  }
  if (s.width % s.heads != 0)
    throw std::invalid_argument("tinylm: width " + std::to_string(s.width) + " is not a multiple of heads " +
                                std::to_string(s.heads));
  return s;
}

// Pre-norm: x + attention(norm(x)), then x + mlp(norm(x)). The attention is
// LibTorch's MultiheadAttention (sequence first) under an additive causal mask.
struct block : torch::nn::Module {
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  torch::nn::MultiheadAttention attention{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};

  block(int64_t width, int64_t heads) {
    ln1 = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width})));
    attention = register_module("attention", torch::nn::MultiheadAttention(width, heads));
    ln2 = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width})));
    fc1 = register_module("fc1", torch::nn::Linear(width, 4 * width));
    fc2 = register_module("fc2", torch::nn::Linear(4 * width, width));
  }

  // x: [batch, context, width]; causal: [context, context], -inf above the diagonal.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& causal) {
    auto h = ln1(x).transpose(0, 1);
    auto y = std::get<0>(attention->forward(h, h, h, {}, /*need_weights=*/false, causal)).transpose(0, 1);
    auto r = x + y;
    return r + fc2(torch::gelu(fc1(ln2(r))));
  }
};

struct tinylm_net : torch::nn::Module {
  torch::nn::Embedding tokens{nullptr};
  ps_embedding table{nullptr};  // embed=table: the tokens' rows from the PS, by token id
  torch::Tensor positions;
  std::vector<std::shared_ptr<block>> blocks;
  torch::nn::LayerNorm ln_f{nullptr};
  torch::nn::Linear head{nullptr};
  int64_t context, vocabulary;

  tinylm_net(const lm_size& s, int64_t context_, int64_t vocabulary_) : context(context_), vocabulary(vocabulary_) {
    if (s.table) {
      table_spec t;
      t.name = "tokens";
      t.width = static_cast<uint32_t>(s.width);
      t.init = row_init::uniform;  // as the dense embedding starts (torch_model::initial_weights)
      t.init_scale = 1.0 / std::sqrt(static_cast<double>(s.width));
      t.optimizer = s.rows;
      t.expected_keys = static_cast<uint64_t>(vocabulary);
      table = register_module("tokens", ps_embedding(t));
    } else {
      tokens = register_module("tokens", torch::nn::Embedding(vocabulary, s.width));
    }
    positions = register_parameter("positions", torch::zeros({context, s.width}));
    for (int64_t l = 0; l < s.layers; ++l)
      blocks.push_back(register_module("block" + std::to_string(l), std::make_shared<block>(s.width, s.heads)));
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({s.width})));
    head = register_module("head", torch::nn::Linear(s.width, vocabulary));
  }

  // The logits of every position of windows x [batch, context + 1] (token ids as floats): [batch, context, vocabulary].
  torch::Tensor logits(const torch::Tensor& x) {
    auto in = x.narrow(1, 0, context).to(torch::kLong);
    auto causal = torch::full({context, context}, -std::numeric_limits<float>::infinity(),
                              torch::TensorOptions().device(x.device()))
                    .triu(1);
    auto h = (table ? table(in) : tokens(in)) + positions;
    for (auto& b : blocks)
      h = b->forward(h, causal);
    return head(ln_f(h));
  }

  // The next character after each window's first `context`: [batch, vocabulary].
  torch::Tensor forward(const torch::Tensor& x) { return logits(x).select(1, context - 1); }

  // The mean cross-entropy of every position's next character (nats per character).
  torch::Tensor loss(const torch::Tensor& x) {
    auto targets = x.narrow(1, 1, context).to(torch::kLong).reshape({-1});
    return torch::nn::functional::cross_entropy(logits(x).reshape({-1, vocabulary}), targets);
  }
};

// The text set's windows as a float tensor on `device`.
torch::Tensor windows_of(const batch_view& b, torch::Device device) {
  auto x = torch::from_blob(const_cast<float*>(b.x), {b.count, b.dim});
  return device.is_cpu() ? x : x.to(device);
}

class language_model : public torch_model {
 public:
  explicit language_model(std::shared_ptr<tinylm_net> net)
    : torch_model(net, [net](const torch::Tensor& x) { return net->forward(x); }), net_(std::move(net)) {}

  // Every position's loss, not only the last one's.
  float gradient(const batch_view& b, float* grad) override {
    torch_batch batch{torch::from_blob(const_cast<float*>(b.x), {b.count, b.dim}), {}};
    return torch_model::gradient([this](torch_model&, const torch_batch& x) { return net_->loss(x.data); }, batch,
                                 grad);
  }

  // The held-out loss in nats per character, and its perplexity.
  std::vector<metric> evaluate(const dataset& test) override {
    torch::NoGradGuard no_grad;
    net_->eval();
    double sum = 0;
    int64_t windows = 0;
    for (int64_t at = 0; at < test.size; at += 64) {
      auto b = test.view(at, std::min<int64_t>(64, test.size - at));
      sum += net_->loss(windows_of(b, device())).item<double>() * static_cast<double>(b.count);
      windows += b.count;
    }
    net_->train();
    double loss = windows > 0 ? sum / static_cast<double>(windows) : 0;
    return {{"loss", loss}, {"perplexity", std::exp(loss)}};
  }

 private:
  std::shared_ptr<tinylm_net> net_;
};

}  // namespace

std::unique_ptr<model> make_tinylm(const model_input& in) {
  if (in.shape.size() != 1 || in.shape[0] < 2)
    throw std::invalid_argument("tinylm: takes windows of characters (a text data set: --dataset text), not examples of "
                                "shape " + shape_text(in.shape));
  auto size = parse_size(in.options);
  return std::make_unique<language_model>(std::make_shared<tinylm_net>(size, in.shape[0] - 1, in.classes));
}

}  // namespace syncpoint
