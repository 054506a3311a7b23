// In-memory image classification data: row-major float features, int64 labels.
// Fashion-MNIST is read from gzip IDX files; a synthetic set serves fast tests.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace syncpoint {

struct dataset {
  int64_t size = 0;     // number of examples
  int64_t dim = 0;      // features per example (784 for 28x28 images)
  int64_t classes = 0;
  std::vector<float> x;     // size * dim, normalized
  std::vector<int64_t> y;   // size

  const float* row(int64_t i) const { return x.data() + i * dim; }
  /// Keeps the first `n` examples (no-op when n <= 0 or n >= size).
  void truncate(int64_t n);
};

/// Thrown for a missing, unreadable or malformed data file; the message names the path.
struct data_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Directory holding train-images-idx3-ubyte.gz and friends (Debian's dataset-fashion-mnist).
inline const char* default_fashion_mnist_dir = "/usr/share/datasets/fashion-mnist";

struct train_test {
  dataset train;
  dataset test;
};

/// Reads the four Fashion-MNIST files (gzip or plain IDX) from `dir`.
/// Example: `auto d = load_fashion_mnist("/usr/share/datasets/fashion-mnist");`
train_test load_fashion_mnist(const std::string& dir);

/// Reads one IDX pair (images, labels); exposed for tests of malformed input.
dataset load_idx(const std::string& images_path, const std::string& labels_path);

/// 28x28 "images" of 10 Gaussian classes: learnable in a few hundred steps.
train_test make_synthetic(int64_t train_size, int64_t test_size, uint64_t seed);

/// Examples of one zero feature, all of class 0: what a timing-only run
/// (`syncpoint simulate`) reads, at no cost.
train_test make_blank(int64_t train_size, int64_t test_size);

}  // namespace syncpoint
