#include <syncpoint/data_registry.hpp>

#include "models/name_options.hpp"
#include "models/data_paths.hpp"

#include <map>
#include <mutex>
#include <stdexcept>

namespace syncpoint {

train_test make_clicks(const data_request& r);  // clicks_data.cpp

namespace {

std::string or_default(const std::string& dir, const char* fallback) {
  return dir.empty() ? fallback : dir;
}

// "text", "text:tokens=words", "text:tokens=words,vocab=20000" (vocab: words only).
train_test make_text(const data_request& r) {
  bool words = false;
  int64_t vocab = 8192;
  bool vocab_given = false;
  for (auto& [name, value] : name_options(r.options, "--dataset text", "tokens=chars|words, vocab=N")) {
    if (name == "tokens" && (value == "chars" || value == "words")) {
      words = value == "words";
    } else if (name == "vocab") {
      char* end = nullptr;
      long long v = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || v < 2 || v > (1LL << 40))
        throw data_error("--dataset text: 'vocab=" + value + "' is not a whole number of at least 2");
      vocab = v;
      vocab_given = true;
    } else {
      throw data_error("--dataset text: '" + name + "=" + value + "' is not one of tokens=chars|words, vocab=N");
    }
  }
  if (vocab_given && !words)
    throw data_error("--dataset text: vocab= is for tokens=words (characters keep every code point)");
  auto path = or_default(r.dir, default_text_path);
  return words ? load_words(path, r.context, vocab) : load_text(path, r.context);
}


std::map<std::string, dataset_factory>& registry() {
  static std::map<std::string, dataset_factory> sets{
    {"fashion-mnist", [](const data_request& r) { return load_fashion_mnist(or_default(r.dir, default_fashion_mnist_dir)); }},
    {"idx", [](const data_request& r) {
       if (r.dir.empty())
         throw data_error("--dataset idx reads the four MNIST-style files in --data DIR: give --data");
       return load_idx_dir(r.dir);
     }},
    {"cifar10", [](const data_request& r) {
       if (r.dir.empty())
         throw data_error("--dataset cifar10 reads CIFAR-10's binary version in --data DIR (data_batch_1.bin ...): "
                          "give --data");
       return load_cifar10(r.dir);
     }},
    {"text", make_text},
    {"synthetic", [](const data_request& r) { return make_synthetic(r.train_size, r.test_size, r.seed); }},
    {"blank", [](const data_request& r) { return make_blank(r.train_size, r.test_size); }},
    {"clicks", make_clicks},
  };
  return sets;
}

std::mutex registry_mutex;

void check(const dataset& d, const std::string& name, const char* part) {
  auto where = "data set '" + name + "', " + part + ": ";
  int64_t dim = 1;
  for (auto s : d.shape)
    dim *= s;
  if (d.shape.empty() || dim != d.dim)
    throw data_error(where + "dim " + std::to_string(d.dim) + " is not the product of its shape (set it with set_shape)");
  if (d.size < 0 || d.x.size() != static_cast<size_t>(d.size * d.dim) || d.y.size() != static_cast<size_t>(d.size))
    throw data_error(where + std::to_string(d.size) + " examples need " + std::to_string(d.size * d.dim) + " floats and " +
                     std::to_string(d.size) + " labels, not " + std::to_string(d.x.size()) + " and " +
                     std::to_string(d.y.size()));
  if (d.classes < 1)
    throw data_error(where + "no classes");
  for (size_t i = 0; i < d.y.size(); ++i)
    if (d.y[i] < 0 || d.y[i] >= d.classes)
      throw data_error(where + "label " + std::to_string(d.y[i]) + " at index " + std::to_string(i) +
                       " is outside 0.." + std::to_string(d.classes - 1));
}

}  // namespace

bool register_dataset(const std::string& name, dataset_factory factory) {
  std::lock_guard<std::mutex> guard(registry_mutex);
  return registry().emplace(name, std::move(factory)).second;
}

std::vector<std::string> dataset_names() {
  std::lock_guard<std::mutex> guard(registry_mutex);
  std::vector<std::string> out;
  for (auto& kv : registry())
    out.push_back(kv.first);
  return out;
}

train_test make_dataset(const std::string& name, const data_request& given) {
  dataset_factory f;
  auto request = given;
  {
    std::lock_guard<std::mutex> guard(registry_mutex);
    auto i = registry().find(name);
    if (auto colon = name.find(':'); i == registry().end() && colon != std::string::npos) {
      i = registry().find(name.substr(0, colon));  // "clicks:keys=1000": the set "clicks", its options
      request.options = name.substr(colon + 1);
    }
    if (i != registry().end())
      f = i->second;
  }
  if (!f) {
    std::string known;
    for (auto& n : dataset_names())
      known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown dataset '" + name + "' (valid: " + known + ")");
  }
  auto data = f(request);
  check(data.train, name, "training set");
  check(data.test, name, "test set");
  if (data.train.shape != data.test.shape)
    throw data_error("data set '" + name + "': its training and test examples differ in shape");
  if (data.test.classes != data.train.classes)
    throw data_error("data set '" + name + "': its training set has " + std::to_string(data.train.classes) +
                     " classes, its test set " + std::to_string(data.test.classes));
  return data;
}

dataset dataset_from(int64_t count, std::vector<int64_t> shape, int64_t classes,
                     const std::function<int64_t(int64_t, float*)>& fill) {
  dataset d;
  d.size = count;
  d.set_shape(std::move(shape));
  d.classes = classes;
  d.x.resize(static_cast<size_t>(count * d.dim));
  d.y.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    d.y[static_cast<size_t>(i)] = fill(i, d.x.data() + i * d.dim);
  return d;
}

}  // namespace syncpoint
