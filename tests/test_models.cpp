// Models over a flat parameter vector, and the data they read.
#include "models/blas.hpp"
#include <syncpoint/model.hpp>

#include "tests/helpers.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <string>
#include <zlib.h>
#include "models/reference_cost.hpp"
#include "models/data_paths.hpp"

using namespace syncpoint;
using syncpoint::testing::be32;

namespace {

// Central differences on the coordinates with the largest gradient.
void check_gradient(const std::string& name) {
  auto m = make_model(name);
  auto data = make_synthetic(32, 1, 3);
  batch_view b{data.train.x.data(), data.train.y.data(), 32, 784};
  auto w = m->initial_weights(5);
  REQUIRE(w.size() == m->size());
  std::vector<float> g(m->size(), 123.0f);  // gradient() must overwrite, not add
  m->load(w.data());
  float loss = m->gradient(b, g.data());
  CHECK(loss > 0);
  std::vector<float> again(m->size());
  m->gradient(b, again.data());
  CHECK(again == g);  // repeatable, and no accumulation across calls
  std::vector<size_t> order(g.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::partial_sort(order.begin(), order.begin() + 8, order.end(),
                    [&](size_t a, size_t c) { return std::abs(g[a]) > std::abs(g[c]); });
  std::vector<float> scratch(m->size());
  for (int k = 0; k < 8; ++k) {
    auto i = order[k];
    const float eps = 1e-2f;
    auto wp = w, wm = w;
    wp[i] += eps;
    wm[i] -= eps;
    m->load(wp.data());
    double lp = m->gradient(b, scratch.data());
    m->load(wm.data());
    double lm = m->gradient(b, scratch.data());
    double numeric = (lp - lm) / (2 * eps);
    CHECK_MESSAGE(numeric == doctest::Approx(g[i]).epsilon(0.05), name << " coordinate " << i);
  }
}

void write_gz(const std::string& path, const std::vector<unsigned char>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

}  // namespace

TEST_CASE("models: gradients match finite differences") {
  set_torch_threads(1);
  check_gradient("softmax");
  check_gradient("mlp");
  check_gradient("cnn");
}

// Two workers of one process compute at once. LibTorch hands its matrix
// products to the system BLAS, and OpenBLAS's serial build corrupts
// concurrent calls (models/blas.hpp): this is the check that whatever BLAS
// the machine has, two threads get exactly the bits one thread gets.
TEST_CASE("models: two threads computing at once get the bits one thread gets") {
  set_torch_threads(1);
  constexpr int64_t batch = 64, batches = 8;
  auto data = make_synthetic(batch * batches, 500, 7);
  auto view = [&](int64_t k) { return batch_view{data.train.row(k * batch), data.train.y.data() + k * batch, batch, 784}; };
  auto reference = make_model("mlp");
  auto w = reference->initial_weights(3);
  reference->load(w.data());
  std::vector<std::vector<float>> grads(batches, std::vector<float>(reference->size()));
  std::vector<float> losses(batches);
  for (int64_t k = 0; k < batches; ++k)
    losses[static_cast<size_t>(k)] = reference->gradient(view(k), grads[static_cast<size_t>(k)].data());
  std::vector<int64_t> labels(static_cast<size_t>(data.test.size));
  reference->predict({data.test.row(0), data.test.y.data(), data.test.size, 784}, labels.data());

  // Both threads start each step together: concurrent calls collide most as they begin.
  std::atomic<int> arrived{0};
  auto together = [&](int step) {
    arrived.fetch_add(1);
    while (arrived.load() < 2 * (step + 1)) {
    }
  };
  auto run = [&](int rounds, int& wrong) {
    auto m = make_model("mlp");
    m->load(w.data());
    std::vector<float> g(m->size());
    std::vector<int64_t> predicted(labels.size());
    int step = 0;
    for (int r = 0; r < rounds; ++r) {
      for (int64_t k = 0; k < batches; ++k) {
        together(step++);
        float loss = m->gradient(view(k), g.data());
        wrong += loss != losses[static_cast<size_t>(k)] || g != grads[static_cast<size_t>(k)];
      }
      together(step++);
      m->predict({data.test.row(0), data.test.y.data(), data.test.size, 784}, predicted.data());
      wrong += predicted != labels;
    }
  };
  int wrong_a = 0, wrong_b = 0;
  std::thread a([&] { run(60, wrong_a); });
  std::thread b([&] { run(60, wrong_b); });
  a.join();
  b.join();
  INFO("BLAS: " << blas().name << " at " << blas().path);
  CHECK(wrong_a == 0);
  CHECK(wrong_b == 0);
}

TEST_CASE("models: registry, sizes and initial weights") {
  CHECK(make_model("mlp")->size() == 784 * 256 + 256 + 256 * 10 + 10);
  CHECK(make_model("softmax")->size() == 7850);
  CHECK(make_model("resnet")->size() == 308074 + 1344);  // docs/buffers.md
  CHECK(make_model("resnet")->buffers() == 1344);
  auto m = make_model("mlp");
  CHECK(m->initial_weights(1) == m->initial_weights(1));
  CHECK(m->initial_weights(1) != m->initial_weights(2));
  // The built-in names, in order; a model another test registered in the same
  // process (tiny-net, test-bn-net, when the suite runs in one process) takes its place among them.
  try {
    make_model("vgg");
    FAIL("no error");
  } catch (const std::exception& e) {
    const std::string what = e.what();
    CHECK(what.rfind("unknown model 'vgg' (known: ", 0) == 0);
    std::size_t at = 0;
    for (const char* name : {"cnn, ", "ctr, ", "mlp, ", "resnet, ", "resnet18, ", "script, ", "softmax"}) {
      at = what.find(name, at);
      CHECK_MESSAGE(at != std::string::npos, name << " is not named (in order) in: " << what);
      if (at == std::string::npos) break;
    }
    CHECK(what.find("timing-only") != std::string::npos);
  }
}

TEST_CASE("models: a few hundred steps of SGD learn the synthetic set") {
  auto m = make_model("softmax");
  auto data = make_synthetic(4000, 1000, 1);
  auto w = m->initial_weights(1);
  double before = accuracy(*m, w.data(), data.test);
  std::vector<float> g(m->size());
  for (int step = 0; step < 300; ++step) {
    auto start = (step * 32) % 4000;
    batch_view b{data.train.row(start), data.train.y.data() + start, 32, 784};
    m->load(w.data());
    m->gradient(b, g.data());
    for (size_t i = 0; i < w.size(); ++i)
      w[i] -= 0.1f * g[i];
  }
  double after = accuracy(*m, w.data(), data.test);
  CHECK(before < 0.3);
  CHECK(after > 0.85);
}

TEST_CASE("data: missing, corrupt and malformed files get errors naming the path") {
  auto dir = std::filesystem::temp_directory_path() / "syncpoint_data_test";
  std::filesystem::create_directories(dir);
  auto img = (dir / "img.gz").string();
  auto lab = (dir / "lab.gz").string();
  CHECK_THROWS_WITH_AS(load_idx((dir / "none.gz").string(), lab),
                       ((dir / "none.gz").string() + ": no such file").c_str(), data_error);
  write_gz(img, be32({0x1234, 1, 28, 28}));
  CHECK_THROWS_WITH_AS(load_idx(img, lab), (img + ": not an IDX image file (magic 4660, expected 2051, or 2050 to 2053: unsigned bytes in 2 to 5 dimensions)").c_str(),
                       data_error);
  auto header = be32({0x803, 2, 28, 28});
  header.resize(header.size() + 100);  // far fewer than 2*784 pixels
  write_gz(img, header);
  write_gz(lab, [] { auto l = be32({0x801, 2}); l.push_back(1); l.push_back(2); return l; }());
  CHECK_THROWS_WITH_AS(load_idx(img, lab), (img + ": truncated while reading the pixels (1468 bytes short)").c_str(),
                       data_error);
  {
    std::ofstream garbage(img, std::ios::binary);
    garbage << "\x1f\x8b this is not really gzip";
  }
  CHECK_THROWS_WITH_AS(load_idx(img, lab), (img + ": truncated or corrupt gzip data").c_str(), data_error);
  auto full = be32({0x803, 2, 28, 28});
  full.resize(full.size() + 2 * 784, 7);
  {  // a whole gzip file cut short
    write_gz(img, full);
    auto bytes = std::filesystem::file_size(img);
    std::filesystem::resize_file(img, bytes - 10);
  }
  CHECK_THROWS_WITH_AS(load_idx(img, lab), (img + ": truncated or corrupt gzip data").c_str(), data_error);
  {  // a trailer claiming 4 GiB is not believed (deflate expands 1032 to 1 at most)
    write_gz(img, full);
    std::fstream f(img, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(-4, std::ios::end);
    f.write("\xff\xff\xff\xff", 4);
  }
  CHECK_THROWS_WITH_AS(load_idx(img, lab), (img + ": truncated or corrupt gzip data").c_str(), data_error);
  write_gz(img, full);
  write_gz(lab, [] { auto l = be32({0x801, 3}); l.push_back(1); l.push_back(2); l.push_back(3); return l; }());
  CHECK_THROWS_WITH_AS(load_idx(img, lab), (lab + ": 3 labels for 2 images in " + img).c_str(), data_error);
  write_gz(lab, [] { auto l = be32({0x801, 2}); l.push_back(1); l.push_back(12); return l; }());
  CHECK_THROWS_WITH_AS(load_idx(img, lab), (lab + ": label 12 at index 1 is outside 0..9").c_str(), data_error);
  write_gz(lab, [] { auto l = be32({0x801, 2}); l.push_back(1); l.push_back(9); return l; }());
  auto d = load_idx(img, lab);
  CHECK(d.size == 2);
  CHECK(d.dim == 784);
  CHECK(d.y == std::vector<int64_t>{1, 9});
  CHECK(d.x[0] == (7 / 255.0f - fashion_mnist_mean) / fashion_mnist_std);
  // The same bytes as a plain file, and as two gzip members one after the other (what `cat a.gz b.gz` makes).
  auto plain = (dir / "img").string();
  std::ofstream(plain, std::ios::binary).write(reinterpret_cast<const char*>(full.data()), static_cast<std::streamsize>(full.size()));
  CHECK(load_idx(plain, lab).x == d.x);
  auto half = full.size() / 2;
  write_gz((dir / "a.gz").string(), {full.begin(), full.begin() + static_cast<std::ptrdiff_t>(half)});
  write_gz((dir / "b.gz").string(), {full.begin() + static_cast<std::ptrdiff_t>(half), full.end()});
  {
    std::ofstream both(img, std::ios::binary);
    both << std::ifstream(dir / "a.gz", std::ios::binary).rdbuf() << std::ifstream(dir / "b.gz", std::ios::binary).rdbuf();
  }
  CHECK(load_idx(img, lab).x == d.x);
  std::filesystem::remove_all(dir);
}

TEST_CASE("data: Fashion-MNIST from the Debian package") {
  if (!std::filesystem::exists(std::string(default_fashion_mnist_dir) + "/train-images-idx3-ubyte.gz")) {
    FAIL("dataset-fashion-mnist is not installed (scripts/setup.sh installs it)");
  }
  auto d = load_fashion_mnist(default_fashion_mnist_dir);
  CHECK(d.train.size == 60000);
  CHECK(d.test.size == 10000);
  CHECK(d.train.dim == 784);
  std::vector<int> counts(10, 0);
  for (auto y : d.test.y)
    ++counts[static_cast<size_t>(y)];
  for (auto c : counts)
    CHECK(c == 1000);
}

TEST_CASE("models: the reference gradient cost: a table for built-in models, by parameters otherwise, linear in batch") {
  std::string source;
  CHECK(reference_gradient_ms("mlp", 64, &source) == doctest::Approx(0.70));
  CHECK(source == "model table");
  CHECK(reference_gradient_ms("mlp", 128) == doctest::Approx(1.40));
  CHECK(reference_gradient_ms("cnn", 32) == doctest::Approx(1.90));
  register_model("test-half-softmax", [] { return make_softmax_model(392, 10); });  // 3930 parameters
  CHECK(reference_gradient_ms("test-half-softmax", 64, &source) == doctest::Approx(0.70 * 3930 / 203530));
  CHECK(source == "parameter formula");
}
