// Every example of a public header's doc comments, compiled and run (see
// test_header_examples.cpp). This file: the extension points (a data set, a
// model, a protocol and its checkpoint, what crosses nodes, LibTorch's
// modules and datasets; a protocol's local work is in
// test_header_examples_local.cpp), and the check that every example's lines are in
// its test, in order, so an example changed in its header and not in its test
// fails.
#include <syncpoint/syncpoint.hpp>
#include <syncpoint/compressor.hpp>
#include <syncpoint/protocol.hpp>
#include <syncpoint/protocol_archive.hpp>
#include <syncpoint/float_block.hpp>
#include <syncpoint/torch_data.hpp>
#include <syncpoint/torch_model.hpp>
#include <syncpoint/torch_loop.hpp>
#include "tests/header_examples.hpp"
#include <syncpoint/worker_client.hpp>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <regex>
#include <sstream>

using syncpoint::testing::small_cfg;

namespace {

// -- <syncpoint/compressor.hpp> --------------------------------------------------------
class halve : public syncpoint::compressor {
 public:
  uint64_t compress(float* v, size_t n, uint64_t) const override {
    for (size_t i = 0; i < n; ++i) v[i] = std::round(v[i] * 2) / 2;  // what the PS receives
    return bytes(n);
  }
  uint64_t bytes(size_t n) const override { return n; }  // a byte a value
};
SYNCPOINT_REGISTER_COMPRESSOR("halve", "values to the nearest 0.5, a byte each", halve);

// -- <syncpoint/protocol.hpp> ----------------------------------------------------------

class my_protocol : public syncpoint::protocol {
 public:
  explicit my_protocol(const syncpoint::protocol_options&) {}
  void on_push(syncpoint::coordinator_api& c, syncpoint::worker_id w) override { c.release(w); }  // ASP
  // (this test's: every protocol registered in this binary is checkpointed by tests/test_resume.cpp;
  // this one has no state of its own)
  void checkpoint(syncpoint::protocol_archive&) override {}
};
SYNCPOINT_REGISTER_PROTOCOL("mine", "releases every worker at once", my_protocol);

// checkpoint()'s example, in a protocol whose state is a round's pushers.
class rounds : public syncpoint::protocol {
 public:
  explicit rounds(const syncpoint::protocol_options&) {}
  void on_push(syncpoint::coordinator_api& c, syncpoint::worker_id w) override {
    pushed_.push_back(w);
    ++round_;
    c.release(w);
  }
  void checkpoint(syncpoint::protocol_archive& ar) override { ar(pushed_, round_); }
  std::vector<syncpoint::worker_id> pushed_;
  uint64_t round_ = 0;
};

// -- <syncpoint/protocol_archive.hpp> ----------------------------------------------------

// Its example, in a protocol with a derived index to rebuild after a load.
class timed : public syncpoint::protocol {
 public:
  void on_push(syncpoint::coordinator_api& c, syncpoint::worker_id w) override { c.release(w); }
  void checkpoint(syncpoint::protocol_archive& ar) override {
    ar(period_, t0_, last_slot_);             // saving or loading alike
    if (ar.loading()) rebuild_index();         // anything derived
  }
  void rebuild_index() { index_ = {{last_slot_, t0_}}; }
  double period_ = 0, t0_ = 0;
  std::string last_slot_;
  std::map<std::string, double> index_;
};

// Saves `from` and loads the bytes into `to`, as a checkpoint and a resume do.
void save_then_load(syncpoint::protocol& from, syncpoint::protocol& to) {
  std::stringstream bytes;
  {
    cereal::PortableBinaryOutputArchive out(bytes);
    syncpoint::protocol_archive ar(out);
    from.checkpoint(ar);
  }
  cereal::PortableBinaryInputArchive in(bytes);
  syncpoint::protocol_archive ar(in);
  to.checkpoint(ar);
}

// -- <syncpoint/float_block.hpp> ---------------------------------------------------------

struct my_msg {
  uint64_t id = 0;
  std::vector<float> values;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, my_msg& x) {
  return f(caf::meta::type_name("my_msg"), x.id, syncpoint::float_block{x.values});
}

// `exact`'s example, in a message of the same fields as an evaluation's.
struct my_eval {
  uint64_t version = 0;
  double accuracy = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, my_eval& x) {
  return f(caf::meta::type_name("eval_result"), x.version, syncpoint::exact(x.accuracy));
}

// Serializes `x` and reads it back into `y`, as a message crossing nodes is.
template <class T>
void cross(caf::actor_system& sys, T& x, T& y) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE(!sink(x));
  caf::binary_deserializer source{sys, buf};
  REQUIRE(!source(y));
  CHECK(source.remaining() == 0);
}

// -- <syncpoint/torch_data.hpp> ----------------------------------------------------------

struct rows : torch::data::datasets::Dataset<rows> {
  torch::data::Example<> get(size_t i) override {  // 5 features; the label: the largest one's index
    auto x = torch::sin(torch::arange(5, torch::kFloat32) * static_cast<float>(i + 1));
    return {x, x.argmax()};
  }
  torch::optional<size_t> size() const override { return 1000; }
};

// A model for rows of 5 features and 5 classes.
struct rows_net : torch::nn::Module {
  torch::nn::Linear fc1{register_module("fc1", torch::nn::Linear(5, 32))};
  torch::nn::Linear fc2{register_module("fc2", torch::nn::Linear(32, 5))};
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x))); }
};

// -- <syncpoint/torch_model.hpp> ---------------------------------------------------------

struct net : torch::nn::Module {
  torch::nn::Linear fc;
  net(int64_t features, int64_t classes) : fc(register_module("fc", torch::nn::Linear(features, classes))) {}
  torch::Tensor forward(const torch::Tensor& x) { return fc(x.flatten(1)); }  // x: [B, shape...]
};

}  // namespace

TEST_CASE("header examples: <syncpoint/data_registry.hpp>'s blobs train end to end") {
  syncpoint::register_model("blobs-net", [] {
    struct blobs_net : torch::nn::Module {
      torch::nn::Linear fc{register_module("fc", torch::nn::Linear(20, 3))};
      torch::Tensor forward(const torch::Tensor& x) { return fc(x); }
    };
    return syncpoint::wrap_module(std::make_shared<blobs_net>());
  });
  auto cfg = small_cfg("asp");
  cfg.model = "blobs-net";
  syncpoint::register_dataset("blobs", [](const syncpoint::data_request& r) {
    auto make = [&](int64_t n, uint64_t seed) {
      std::mt19937_64 rng(seed);
      std::normal_distribution<float> noise;
      std::uniform_int_distribution<int64_t> pick(0, 2);  // not i % 3: workers shard by i % workers
      return syncpoint::dataset_from(n, {20}, 3, [&](int64_t, float* x) {
        int64_t label = pick(rng);
        for (int k = 0; k < 20; ++k) x[k] = (k % 3 == label ? 1.5f : 0.0f) + noise(rng);
        return label;
      });
    };
    return syncpoint::train_test{make(r.train_size, r.seed), make(r.test_size, r.seed + 1)};
  });
  cfg.dataset = "blobs";   // or --dataset blobs in a program that registered it
  auto s = syncpoint::train(cfg).summary;
  CHECK(s.final_accuracy > 0.9);
}

TEST_CASE("header examples: <syncpoint/dataset.hpp>'s text set reads Debian's fortunes, character by character") {
  REQUIRE_MESSAGE(std::filesystem::exists("/usr/share/games/fortunes"), "scripts/setup.sh installs Debian's fortunes");
  auto d = syncpoint::load_text("/usr/share/games/fortunes", 64);  // d.train.shape == {65}
  CHECK(d.train.shape == std::vector<int64_t>{65});
  CHECK(d.train.size > 30000);  // about 2.6 MB of text
  CHECK(d.test.size > 3000);
  CHECK(d.train.classes > 60);  // letters, digits, punctuation, and a few more
}

TEST_CASE("header examples: <syncpoint/model.hpp> computes a gradient of the mlp on a batch") {
  auto train_set = syncpoint::dataset_from(64, {1, 28, 28}, 10, [](int64_t i, float* x) {
    std::fill(x, x + 784, static_cast<float>(i % 10) / 10.0f);
    return i % 10;
  });
  auto batch = train_set.view(0, 64);
  auto m = syncpoint::make_model("mlp", syncpoint::input_of(train_set));  // fits train_set's examples
  std::vector<float> w = m->initial_weights(/*seed=*/1);
  std::vector<float> g(m->size());
  m->load(w.data());
  float loss = m->gradient(batch, g.data());  // batch: a batch_view, e.g. train_set.view(0, 64)
  CHECK(loss > 1.0f);  // about ln 10 at fresh weights
  CHECK(std::any_of(g.begin(), g.end(), [](float v) { return v != 0.0f; }));
}

TEST_CASE("header examples: <syncpoint/protocol.hpp>'s protocol trains once registered, with its options and checkpoint") {
  auto cfg = small_cfg("mine");
  auto s = syncpoint::train(cfg).summary;
  CHECK(s.protocol == "mine");
  CHECK(s.final_accuracy > 0.5);

  syncpoint::protocol_options o;
  o.set("staleness", 2);
  auto p = syncpoint::make_protocol("ssp", o);   // inside: o.integer("staleness") == 2
  CHECK(p != nullptr);
  o.set("staleness", -1);
  CHECK_THROWS_AS(syncpoint::make_protocol("ssp", o), std::invalid_argument);

  rounds saved{o}, loaded{o};
  saved.pushed_ = {1, 0, 1};
  saved.round_ = 3;
  save_then_load(saved, loaded);
  CHECK(loaded.pushed_ == saved.pushed_);
  CHECK(loaded.round_ == 3);
}

TEST_CASE("header examples: <syncpoint/protocol_archive.hpp> saves and loads alike, and rebuilds what is derived") {
  timed saved, loaded;
  saved.period_ = 0.25;
  saved.t0_ = 1.5;
  saved.last_slot_ = "w3";
  save_then_load(saved, loaded);
  CHECK(loaded.period_ == 0.25);
  CHECK(loaded.t0_ == 1.5);
  CHECK(loaded.last_slot_ == "w3");
  CHECK(loaded.index_ == std::map<std::string, double>{{"w3", 1.5}});
  CHECK(saved.index_.empty());  // saving derives nothing
}

TEST_CASE("header examples: <syncpoint/float_block.hpp> carries floats as a block, and exact doubles bit for bit") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  my_msg x{7, {0.5f, -1.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min()}}, y;
  cross(sys, x, y);
  CHECK(y.id == 7);
  REQUIRE(y.values.size() == 4);
  CHECK(std::memcmp(y.values.data(), x.values.data(), 4 * sizeof(float)) == 0);
  my_eval e{3, std::numeric_limits<double>::denorm_min()}, f;
  cross(sys, e, f);
  CHECK(f.version == 3);
  CHECK(std::memcmp(&f.accuracy, &e.accuracy, sizeof(double)) == 0);
}

TEST_CASE("header examples: <syncpoint/shared_floats.hpp> copies share one buffer") {
  syncpoint::shared_floats w(std::vector<float>{0.5f, -1.0f});
  auto copy = w;              // shares the buffer, copies nothing
  float first = copy.data()[0];
  CHECK(first == 0.5f);
  CHECK(copy.data() == w.data());
  CHECK(copy == w);
  CHECK(copy != syncpoint::shared_floats(std::vector<float>{0.5f, 1.0f}));
}

TEST_CASE("header examples: <syncpoint/torch_data.hpp>'s rows train as a data set") {
  syncpoint::register_model("rows-net", [] { return syncpoint::wrap_module(std::make_shared<rows_net>()); });
  rows train_rows, test_rows;
  syncpoint::register_dataset("rows", [&](const syncpoint::data_request&) {
    return syncpoint::train_test{syncpoint::dataset_from_torch(train_rows, 5),
                                 syncpoint::dataset_from_torch(test_rows, 5)};
  });
  auto cfg = small_cfg("asp");
  cfg.dataset = "rows";
  cfg.model = "rows-net";
  cfg.epochs = 4;
  auto s = syncpoint::train(cfg).summary;
  CHECK(s.final_accuracy > 0.4);  // 5 classes: chance is 0.2
}

TEST_CASE("header examples: <syncpoint/torch_model.hpp>'s module trains once registered") {
  syncpoint::register_model("my-net", [](const syncpoint::model_input& in) {
    int64_t features = 1;
    for (auto d : in.shape) features *= d;
    return syncpoint::wrap_module(std::make_shared<net>(features, in.classes));
  });
  auto cfg = small_cfg("asp");
  cfg.model = "my-net";
  auto s = syncpoint::train(cfg).summary;
  CHECK(s.final_accuracy > 0.6);
}

// -- the examples are the headers' ---------------------------------------------------------

namespace {

std::string trimmed(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos)
    return {};
  auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> lines_of(const std::filesystem::path& p) {
  std::ifstream in(p);
  REQUIRE_MESSAGE(in, p.string());
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    out.push_back(trimmed(line));
  return out;
}

}  // namespace

namespace {

struct half_squares : syncpoint::worker_loop {  // the gradient of sum (w_i - 1)^2 / 2
  syncpoint::step_result step(syncpoint::model& m, const syncpoint::step_input&, float* grad) override {
    auto w = m.current_weights();
    float loss = 0;
    for (size_t i = 0; i < w.size(); ++i) { grad[i] = w[i] - 1; loss += grad[i] * grad[i] / 2; }
    return {loss, 1};
  }
};

}  // namespace

TEST_CASE("header examples: <syncpoint/worker_loop.hpp>'s loop of its own trains weights of their own") {
  auto cfg = small_cfg("bsp");
  syncpoint::register_loop("half-squares", [](const syncpoint::loop_context&) {
    return std::make_unique<half_squares>();
  });
  cfg.loop = "half-squares";  // with a model of weights only: cfg.model = a weights_only() model's name
  syncpoint::register_model("half-squares-weights", [] { return syncpoint::weights_only(3); });
  cfg.model = "half-squares-weights";
  cfg.momentum = 0;
  auto r = syncpoint::train(cfg);
  REQUIRE(r.failures.empty());
  for (float v : r.final_model.values.vec())
    CHECK(v == doctest::Approx(1.0f).epsilon(1e-3));
}

TEST_CASE("header examples: <syncpoint/worker_client.hpp>'s blocking loop fits a line") {
  auto cfg = small_cfg("ssp");
  // Fits y = w0 + w1 x by least squares, each worker on data of its own.
  syncpoint::register_model("line", [] { return syncpoint::weights_only(2); });
  syncpoint::register_client_loop("fit-line", [](syncpoint::worker_client& ps) {
    std::mt19937_64 rng(ps.context().seed * 1000 + ps.context().worker);
    std::normal_distribution<float> x_of, noise(0, 0.1f);
    std::vector<float> g(2);
    for (;;) {
      std::vector<float> w = ps.pull().values;      // the weights of one version
      g = {0, 0};
      for (int i = 0; i < 32; ++i) {                // the mean squared error's gradient
        float x = x_of(rng), y = 3 * x + 1 + noise(rng), e = w[0] + w[1] * x - y;
        g[0] += e / 32, g[1] += e * x / 32;
      }
      if (ps.push(g, 32).stop)                       // answered when the protocol lets it go on
        return;
    }
  });
  cfg.model = "line";
  cfg.loop = "fit-line";                            // or: syncpoint train --model line --loop fit-line
  cfg.dataset = "blank";
  cfg.momentum = 0;
  cfg.epochs = 10;
  auto r = syncpoint::train(cfg);
  REQUIRE(r.failures.empty());
  CHECK(r.final_model.values.vec()[0] == doctest::Approx(1.0f).epsilon(0.02));
  CHECK(r.final_model.values.vec()[1] == doctest::Approx(3.0f).epsilon(0.02));
}

TEST_CASE("header examples: <syncpoint/torch_loop.hpp>'s reconstruction loss trains an autoencoder") {
  struct tiny_autoencoder : torch::nn::Module {
    torch::nn::Linear enc{nullptr}, dec{nullptr};
    explicit tiny_autoencoder(int64_t features)
      : enc(register_module("enc", torch::nn::Linear(features, 8))),
        dec(register_module("dec", torch::nn::Linear(8, features))) {}
    torch::Tensor forward(const torch::Tensor& x) { return dec(torch::relu(enc(x.flatten(1)))); }
  };
  syncpoint::register_model("header-autoencoder", [](const syncpoint::model_input& in) {
    int64_t features = 1;
    for (auto d : in.shape) features *= d;
    return syncpoint::wrap_module(std::make_shared<tiny_autoencoder>(features));
  });
  syncpoint::register_dataset("header-two-factors", [](const syncpoint::data_request& r) {
    auto make = [](int64_t n, uint64_t seed) {  // 20 features driven by 2 hidden factors: an 8-wide code holds them
      std::mt19937_64 rng(seed);
      std::normal_distribution<float> normal;
      return syncpoint::dataset_from(n, {20}, 2, [&](int64_t, float* x) {
        float a = normal(rng), b = normal(rng);
        for (int k = 0; k < 20; ++k) x[k] = a * std::sin(float(k)) + b * std::cos(float(k)) + 0.05f * normal(rng);
        return int64_t{0};
      });
    };
    return syncpoint::train_test{make(r.train_size, r.seed), make(r.test_size, r.seed + 1)};
  });
  auto cfg = small_cfg("bsp");
  cfg.dataset = "header-two-factors";
  cfg.model = "header-autoencoder";
  // An autoencoder's loss: the mean squared error of its reconstruction.
  syncpoint::torch_loop_spec autoencoder;
  autoencoder.loss = [](syncpoint::torch_model& m, const syncpoint::torch_batch& b) {
    return torch::mse_loss(m.forward(b.data), b.data.flatten(1));
  };
  syncpoint::register_torch_loop("reconstruct", autoencoder);  // batches: the job's data set (dataset_batches)
  cfg.loop = "reconstruct";                                     // with a model whose forward() reconstructs
  cfg.epochs = 3;
  auto r = syncpoint::train(cfg);
  REQUIRE(r.failures.empty());
  std::vector<double> losses;
  for (auto& e : r.trace)
    if (e.kind == "compute")
      losses.push_back(e.value);
  REQUIRE(losses.size() > 20);
  CHECK(losses.back() < 0.5 * losses.front());
}

TEST_CASE("header examples: <syncpoint/compressor.hpp>'s own compressor trains once registered, and error feedback as shown") {
  auto cfg = small_cfg("bsp");
  // then: cfg.compress = "halve";  (or --compress halve)
  cfg.compress = "halve";
  auto r = syncpoint::train(cfg);
  CHECK(r.summary.compress == "halve");
  CHECK(r.summary.final_accuracy > 0.6);
  uint64_t pushes = 0;
  for (auto& e : r.trace)
    pushes += e.kind == "push";
  CHECK(r.summary.pushed_bytes == pushes * r.final_model.values.size());  // a byte a value (softmax: no buffers)
  std::vector<float> g{1, -3, 2, 0.5f}, e(4, 0.0f);
  compress_with_feedback(*syncpoint::make_compressor("topk:0.5"), g.data(), e.data(), 4, 0);
  // g == {0, -3, 2, 0}, e == {1, 0, 0, 0.5}
  CHECK(g == std::vector<float>{0, -3, 2, 0});
  CHECK(e == std::vector<float>{1, 0, 0, 0.5f});
}

TEST_CASE("header examples: every ```cpp example of a public header is in its test, line by line, in order") {
  auto root = std::filesystem::path(SYNCPOINT_SOURCE_DIR);
  auto here = lines_of(root / "tests/test_header_examples_parts.cpp");
  auto local = lines_of(root / "tests/test_header_examples_local.cpp");  // (each example is whole in one of these)
  here.insert(here.end(), local.begin(), local.end());
  auto tables = lines_of(root / "tests/test_header_examples_tables.cpp");
  here.insert(here.end(), tables.begin(), tables.end());
  auto jobs = lines_of(root / "tests/test_header_examples.cpp");
  auto cluster_test = lines_of(root / "tests/test_cluster_observers.cpp");
  // Where each header's examples run: jobs and their observers, a cluster, the rest here.
  auto test_of = [&](const std::string& header) -> const std::vector<std::string>& {
    for (auto* h : {"syncpoint.hpp", "train.hpp", "job.hpp", "interfaces.hpp", "messages.hpp"})
      if (header == h)
        return jobs;
    return header == "cluster.hpp" ? cluster_test : here;
  };
  int examples = 0;
  for (auto& entry : std::filesystem::directory_iterator(root / "include/syncpoint")) {
    auto header = entry.path().filename().string();
    auto& test = test_of(header);
    auto lines = lines_of(entry.path());
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i] != "/// ```cpp" && lines[i] != "///   ```cpp")
        continue;  // ```text blocks are prose
      std::vector<std::string> code;
      size_t j = i + 1;
      for (; j < lines.size() && lines[j].find("```") == std::string::npos; ++j) {
        auto line = trimmed(std::regex_replace(lines[j], std::regex("^///"), ""));
        if (!line.empty())
          code.push_back(line);
      }
      ++examples;
      size_t at = 0;  // each line after the previous one's place in the test
      for (auto& line : code) {
        auto found = std::find(test.begin() + static_cast<std::ptrdiff_t>(at), test.end(), line);
        CHECK_MESSAGE(found != test.end(), header << ":" << i + 1 << ": not in its test (in this order): " << line);
        if (found != test.end())
          at = static_cast<size_t>(found - test.begin()) + 1;
      }
      i = j;
    }
  }
  CHECK(examples >= 17);
}
