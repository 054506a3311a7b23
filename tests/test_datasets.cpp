// Data of any shape: IDX files of any shape, CIFAR-10's binary format on
// files the test writes, a user's own data set by name, and the refusals of
// bad files and of a model that cannot take the data.
#include <torch/torch.h>  // first: doctest's CHECK replaces LibTorch's (glog's)

#include <syncpoint/data_registry.hpp>
#include <syncpoint/torch_data.hpp>
#include <syncpoint/torch_model.hpp>
#include <syncpoint/train.hpp>
#include "tests/helpers.hpp"
#include "tests/small_job.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>

using namespace syncpoint;
namespace fs = std::filesystem;
using syncpoint::testing::be32;

namespace {

struct folder : testing::temp_folder {
  explicit folder(const std::string& name) : temp_folder("syncpoint_datasets_" + name) {}
};

void write(const fs::path& path, const std::vector<unsigned char>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

// `n` CIFAR-10 records: label i % 10, pixel j of record i = (i + j) % 256.
std::vector<unsigned char> cifar_records(int n, int first = 0) {
  std::vector<unsigned char> out;
  for (int i = first; i < first + n; ++i) {
    out.push_back(static_cast<unsigned char>(i % 10));
    for (int j = 0; j < 3072; ++j)
      out.push_back(static_cast<unsigned char>((i + j) % 256));
  }
  return out;
}

void write_cifar(const fs::path& dir, int per_batch) {
  fs::create_directories(dir);
  for (int k = 1; k <= 5; ++k)
    write(dir / ("data_batch_" + std::to_string(k) + ".bin"), cifar_records(per_batch, (k - 1) * per_batch));
  write(dir / "test_batch.bin", cifar_records(per_batch, 1000));
}

// Tabular data of the user's: 20 features, 3 classes, each class a shifted Gaussian.
train_test blobs(const data_request& r) {
  auto make = [](int64_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> noise;
    std::uniform_int_distribution<int64_t> pick(0, 2);  // not i % 3: workers shard by i % workers
    return dataset_from(n, {20}, 3, [&](int64_t, float* x) {
      int64_t label = pick(rng);
      for (int k = 0; k < 20; ++k)
        x[k] = (k % 3 == label ? 1.0f : 0.0f) + noise(rng);
      return label;
    });
  };
  return {make(r.train_size, r.seed), make(r.test_size, r.seed + 1)};
}

struct tabular_net : torch::nn::Module {
  torch::nn::Linear fc1{register_module("fc1", torch::nn::Linear(20, 32))};
  torch::nn::Linear fc2{register_module("fc2", torch::nn::Linear(32, 3))};
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x))); }  // x: [batch, 20]
};

}  // namespace

TEST_CASE("datasets: CIFAR-10's binary format, read from files the test writes") {
  folder dir("cifar");
  write_cifar(dir.path, 4);
  auto d = load_cifar10(dir.path.string());
  CHECK(d.train.size == 20);
  CHECK(d.test.size == 4);
  CHECK(d.train.shape == std::vector<int64_t>{3, 32, 32});
  CHECK(d.train.dim == 3072);
  CHECK(d.train.classes == 10);
  CHECK(d.train.y[13] == 3);  // record 1 of data_batch_4 is record 13
  CHECK(d.test.y[0] == 0);    // record 1000
  // Channel-major pixels, standardized per channel: record 13's pixel 2048 (blue, first) is (13 + 2048) % 256.
  CHECK(d.train.row(13)[2048] == doctest::Approx(((13 + 2048) % 256 / 255.0 - 0.4465) / 0.2616).epsilon(1e-5));
  CHECK(d.train.row(0)[0] == doctest::Approx((0 - 0.4914) / 0.2470).epsilon(1e-5));
  // And through the registry, with --data.
  data_request r;
  r.dir = dir.path.string();
  CHECK(make_dataset("cifar10", r).train.size == 20);
}

TEST_CASE("datasets: bad CIFAR-10 files are refused naming the file and the fault") {
  folder dir("cifar_bad");
  write_cifar(dir.path, 2);
  auto batch = (dir.path / "data_batch_3.bin").string();
  auto records = cifar_records(2);
  records.resize(3073 + 1000);  // the second record cut short
  write(batch, records);
  CHECK_THROWS_WITH_AS(load_cifar10(dir.path.string()),
                       (batch + ": truncated record: 4073 bytes is not a whole number of 3073-byte records (record 1 "
                                "has 1000 bytes)").c_str(),
                       data_error);
  records = cifar_records(2);
  records[3073] = 12;  // the second record's label
  write(batch, records);
  CHECK_THROWS_WITH_AS(load_cifar10(dir.path.string()), (batch + ": label 12 at record 1 is outside 0..9").c_str(),
                       data_error);
  fs::remove(dir.path / "test_batch.bin");
  write(batch, cifar_records(2));
  CHECK_THROWS_WITH_AS(load_cifar10(dir.path.string()),
                       ((dir.path / "test_batch.bin").string() + ": no such file").c_str(), data_error);
  // A job names the file too, and exits with a config error.
  auto cfg = testing::small_job("bsp");
  cfg.dataset = "cifar10";
  cfg.data_dir = dir.path.string();
  CHECK_THROWS_WITH_AS(train(cfg), ((dir.path / "test_batch.bin").string() + ": no such file").c_str(), config_error);
}

TEST_CASE("datasets: IDX files of any shape, standardized by the training set") {
  folder dir("idx");
  fs::create_directories(dir.path);
  // 6 examples of 2 x 3 x 4 (channels x rows x cols), labels 0..2; 3 test examples.
  auto images = [](uint32_t n) {
    auto b = be32({0x804, n, 2, 3, 4});
    for (uint32_t i = 0; i < n * 24; ++i)
      b.push_back(static_cast<unsigned char>(i % 251));
    return b;
  };
  auto labels = [](uint32_t n) {
    auto b = be32({0x801, n});
    for (uint32_t i = 0; i < n; ++i)
      b.push_back(static_cast<unsigned char>(i % 3));
    return b;
  };
  write(dir.path / "train-images-idx3-ubyte", images(6));
  write(dir.path / "train-labels-idx1-ubyte", labels(6));
  write(dir.path / "t10k-images-idx3-ubyte", images(3));
  write(dir.path / "t10k-labels-idx1-ubyte", labels(3));
  auto d = load_idx_dir(dir.path.string());
  CHECK(d.train.shape == std::vector<int64_t>{2, 3, 4});
  CHECK(d.train.classes == 3);
  double sum = 0;
  for (float v : d.train.x)
    sum += v;
  CHECK(sum / static_cast<double>(d.train.x.size()) == doctest::Approx(0).epsilon(1e-5));
  // n x rows x cols: one channel.
  auto flat = be32({0x803, 2, 5, 7});
  flat.resize(flat.size() + 70, 9);
  write(dir.path / "train-images-idx3-ubyte", flat);
  write(dir.path / "train-labels-idx1-ubyte", labels(2));
  auto one = load_idx((dir.path / "train-images-idx3-ubyte").string(), (dir.path / "train-labels-idx1-ubyte").string());
  CHECK(one.shape == std::vector<int64_t>{1, 5, 7});
  // A wrong magic number is named.
  write(dir.path / "train-images-idx3-ubyte", be32({0x0d03, 2, 5, 7}));
  CHECK_THROWS_WITH_AS(load_idx_dir(dir.path.string()),
                       ((dir.path / "train-images-idx3-ubyte").string() +
                        ": not an IDX image file (magic 3331, expected 2051, or 2050 to 2053: unsigned bytes in 2 to 5 "
                        "dimensions)").c_str(),
                       data_error);
}

TEST_CASE("datasets: a user's data set of another shape, registered by name, trains end to end") {
  static bool once = register_dataset("test-blobs", blobs) &&
                     register_model("test-tabular", [] { return wrap_module(std::make_shared<tabular_net>()); });
  REQUIRE(once);
  CHECK_FALSE(register_dataset("test-blobs", blobs));
  for (auto protocol : {"bsp", "asp"}) {
    CAPTURE(protocol);
    auto cfg = testing::small_job(protocol);
    cfg.dataset = "test-blobs";
    cfg.model = "test-tabular";
    cfg.train_limit = 3000;
    cfg.test_limit = 600;
    cfg.workers = 3;
    auto s = train(cfg).summary;
    CHECK(s.final_accuracy > 0.9);
    CHECK(s.samples >= 6000);
  }
  // The built-in models that take vectors size themselves to 20 features and 3 classes.
  for (auto model : {"mlp", "softmax"}) {
    CAPTURE(model);
    auto cfg = testing::small_job("bsp");
    cfg.dataset = "test-blobs";
    cfg.model = model;
    cfg.train_limit = 3000;
    cfg.test_limit = 600;
    CHECK(train(cfg).summary.final_accuracy > 0.9);
  }
  // A model that cannot take these examples is refused before the run, naming both.
  auto cfg = testing::small_job("bsp");
  cfg.dataset = "test-blobs";
  cfg.model = "cnn";
  CHECK_THROWS_WITH_AS(train(cfg),
                       "model 'cnn' cannot train on data set 'test-blobs' (examples of shape 20, 3 classes): "
                       "cnn: takes images (examples of shape CxHxW or HxW), not examples of shape 20",
                       config_error);
}

TEST_CASE("datasets: a data set whose labels or sizes disagree is refused by the registry, naming it") {
  static bool once = register_dataset("test-bad-labels", [](const data_request&) {
    auto d = dataset_from(10, {4}, 2, [](int64_t i, float* x) {
      x[0] = 0;
      return i == 7 ? int64_t{5} : i % 2;
    });
    return train_test{d, d};
  });
  REQUIRE(once);
  CHECK_THROWS_WITH_AS(make_dataset("test-bad-labels", {}),
                       "data set 'test-bad-labels', training set: label 5 at index 7 is outside 0..1", data_error);
  CHECK_THROWS_WITH_AS(make_dataset("nope", {}), doctest::Contains("unknown dataset 'nope' (valid: blank, cifar10, "),
                       std::invalid_argument);
}

namespace {

// A torch::data dataset: example i is a 2x3 tensor of i, labelled i % 2.
struct counting : torch::data::datasets::Dataset<counting> {
  torch::data::Example<> get(size_t i) override {
    return {torch::full({2, 3}, static_cast<float>(i)), torch::tensor(static_cast<int64_t>(i % 2))};
  }
  torch::optional<size_t> size() const override { return 5; }
};

}  // namespace

TEST_CASE("datasets: a torch::data dataset becomes a data set of its examples' shape") {
  counting source;
  auto d = dataset_from_torch(source, 2);
  CHECK(d.size == 5);
  CHECK(d.shape == std::vector<int64_t>{2, 3});
  CHECK(d.dim == 6);
  CHECK(d.row(4)[5] == 4.0f);
  CHECK(d.y == std::vector<int64_t>{0, 1, 0, 1, 0});
}
