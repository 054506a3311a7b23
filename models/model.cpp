#include <syncpoint/model.hpp>

#include <map>
#include <mutex>
#include <stdexcept>

namespace syncpoint {

// Defined in torch_models.cpp, the only place that includes LibTorch here.
std::unique_ptr<model> make_torch_mlp();
std::unique_ptr<model> make_torch_cnn();
std::unique_ptr<model> make_torch_resnet();

namespace {

std::map<std::string, model_factory>& registry() {
  static std::map<std::string, model_factory> models{
    {"softmax", [] { return make_softmax_model(); }},
    {"mlp", [] { return make_torch_mlp(); }},
    {"cnn", [] { return make_torch_cnn(); }},
    {"resnet", [] { return make_torch_resnet(); }},
    {"timing-only", [] { return make_timing_model(); }},
  };
  return models;
}

std::mutex registry_mutex;

}  // namespace

std::vector<float> model::current_weights() const {
  throw std::logic_error("this model cannot report its weights (model::current_weights), so runs of it "
                         "cannot be checkpointed");
}

std::unique_ptr<model> make_model(const std::string& name) {
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
  return f();
}

bool register_model(const std::string& name, model_factory factory) {
  std::lock_guard<std::mutex> guard(registry_mutex);
  return registry().emplace(name, std::move(factory)).second;
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

double reference_gradient_ms(const std::string& model, int batch, std::string* source) {
  // ms per batch of 64 on the reference core (docs/architecture.md, "Virtual time").
  static const std::map<std::string, double> table{
    {"mlp", 0.70}, {"cnn", 3.80}, {"softmax", 0.075}, {"resnet", 76.0}};
  constexpr double mlp_params = 203530;
  double per64 = 0;
  if (auto i = table.find(model); i != table.end()) {
    per64 = i->second;
    if (source)
      *source = "model table";
  } else {
    per64 = table.at("mlp") * static_cast<double>(make_model(model)->size()) / mlp_params;
    if (source)
      *source = "parameter formula";
  }
  return per64 * batch / 64.0;
}

}  // namespace syncpoint
