#include <syncpoint/model.hpp>
#include <syncpoint/messages.hpp>

#include "models/input_size.hpp"

#include <map>
#include <mutex>
#include <stdexcept>
#include "models/reference_cost.hpp"

namespace syncpoint {

// Defined in torch_nets.cpp (the files that include LibTorch are torch_*.cpp).
std::unique_ptr<model> make_torch_mlp(const model_input& in);
std::unique_ptr<model> make_torch_cnn(const model_input& in);
std::unique_ptr<model> make_torch_resnet(const model_input& in);
std::unique_ptr<model> make_torch_resnet18(const model_input& in);
std::unique_ptr<model> make_tinylm(const model_input& in);  // torch_tinylm.cpp
std::unique_ptr<model> make_script_model(const model_input& in);  // torch_script.cpp
std::unique_ptr<model> make_ctr(const model_input& in);           // ctr.cpp
void set_script_loss(model& m, const std::string& spec);         // torch_script.cpp

namespace {

std::map<std::string, model_factory>& registry() {
  static std::map<std::string, model_factory> models{
    {"softmax", [](const model_input& in) { return make_softmax_model(features(in), in.classes); }},
    {"mlp", make_torch_mlp},
    {"cnn", make_torch_cnn},
    {"resnet", make_torch_resnet},
    {"resnet18", make_torch_resnet18},
    {"tinylm", make_tinylm},
    {"script", make_script_model},
    {"timing-only", [](const model_input&) { return make_timing_model(); }},
    {"ctr", make_ctr},
  };
  return models;
}

std::mutex registry_mutex;

}  // namespace

std::vector<float> model::current_weights() const {
  throw std::logic_error("this model cannot report its weights (model::current_weights), so runs of it "
                         "cannot be checkpointed");
}

std::vector<std::vector<uint64_t>> model::keys(const batch_view&) {
  return {};
}

void model::load_rows(std::vector<row_block>) {
  throw std::logic_error("this model has no sparse tables (model::tables()), so it takes no rows");
}

const std::vector<row_block>& model::row_gradients() const {
  throw std::logic_error("this model has no sparse tables (model::tables()), so it has no row gradients");
}

void model::place(const std::string& device, const std::string& precision) {
  if (device != "cpu" || precision != "fp32")
    throw std::invalid_argument("this model computes on the CPU in fp32 only (asked for " + device + " in " +
                                precision + ")");
}

model_input input_of(const dataset& data) {
  model_input in;
  in.shape = data.shape;
  in.classes = data.classes;
  return in;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out;
  for (auto d : shape)
    out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

std::vector<metric> model::evaluate(const dataset& test) {
  return {{"accuracy", accuracy(*this, nullptr, test)}};
}

std::unique_ptr<model> make_model(const std::string& name_and_options, const model_input& in_given) {
  auto colon = name_and_options.find(':');
  auto name = name_and_options.substr(0, colon);
  auto in = in_given;
  if (colon != std::string::npos)
    in.options = name_and_options.substr(colon + 1);
  model_factory f;
  {
    std::lock_guard<std::mutex> guard(registry_mutex);
    auto i = registry().find(name);
    if (i != registry().end())
      f = i->second;
  }
  if (!f) {
    std::string known;
    for (auto& n : model_names())
      known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown model '" + name + "' (known: " + known + ")");
  }
  auto m = f(in);
  if (!in.loss.empty())
    set_script_loss(*m, in.loss);
  if (in.device != "cpu" || in.precision != "fp32")
    m->place(in.device, in.precision);
  return m;
}

bool register_model(const std::string& name, model_factory factory) {
  std::lock_guard<std::mutex> guard(registry_mutex);
  return registry().emplace(name, std::move(factory)).second;
}

bool register_model(const std::string& name, std::function<std::unique_ptr<model>()> factory) {
  return register_model(name, [f = std::move(factory)](const model_input&) { return f(); });
}

std::vector<std::string> model_names() {
  std::lock_guard<std::mutex> guard(registry_mutex);
  std::vector<std::string> out;
  for (auto& kv : registry())
    out.push_back(kv.first);
  return out;
}

double accuracy(model& m, const float* w, const dataset& data, int64_t limit) {
  int64_t n = limit > 0 && limit < data.size ? limit : data.size;
  if (n == 0)
    return 0.0;
  if (w != nullptr)
    m.load(w);
  constexpr int64_t chunk = 1000;
  std::vector<int64_t> predicted(chunk);
  int64_t correct = 0;
  for (int64_t start = 0; start < n; start += chunk) {
    int64_t count = std::min(chunk, n - start);
    batch_view b = data.view(start, count);
    m.predict(b, predicted.data());
    for (int64_t i = 0; i < count; ++i)
      correct += predicted[i] == data.y[start + i];
  }
  return static_cast<double>(correct) / static_cast<double>(n);
}

double reference_gradient_ms(const std::string& model, int batch, std::string* source, const model_input& in) {
  // ms per batch of 64 on the reference core (docs/architecture.md, "Virtual time").
  static const std::map<std::string, double> table{
    {"mlp", 0.70}, {"cnn", 3.80}, {"softmax", 0.075}, {"resnet", 76.0}};
  constexpr double mlp_params = 203530;
  // tinylm does a token's work per parameter for each of its context's
  // characters, plus attention: measured at its default size (118,769
  // parameters with fortunes' 113 characters) and context 64, and scaled by
  // parameters and context from there.
  constexpr double tinylm_ms = 67.0, tinylm_params = 118769, tinylm_context = 64;
  double per64 = 0;
  auto i = table.find(model);
  if (model.substr(0, model.find(':')) == "tinylm" && in.shape.size() == 1) {
    model_input on_cpu = in;
    on_cpu.device = "cpu";
    on_cpu.precision = "fp32";
    auto params = static_cast<double>(make_model(model, on_cpu)->size());
    per64 = tinylm_ms * params / tinylm_params * static_cast<double>(in.shape[0] - 1) / tinylm_context;
    if (source)
      *source = "model table";
  } else if (i != table.end() && in.shape == model_input{}.shape && in.classes == model_input{}.classes) {
    per64 = i->second;
    if (source)
      *source = "model table";
  } else {
    model_input on_cpu = in;
    on_cpu.device = "cpu";
    on_cpu.precision = "fp32";
    per64 = table.at("mlp") * static_cast<double>(make_model(model, on_cpu)->size()) / mlp_params;
    if (source)
      *source = "parameter formula";
  }
  return per64 * batch / 64.0;
}

}  // namespace syncpoint
