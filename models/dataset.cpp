#include "models/dataset.hpp"

#include <zlib.h>

#include <cmath>
#include <memory>
#include <random>
#include <sys/stat.h>

namespace syncpoint {

void dataset::truncate(int64_t n) {
  if (n <= 0 || n >= size)
    return;
  size = n;
  x.resize(static_cast<size_t>(n * dim));
  y.resize(static_cast<size_t>(n));
}

namespace {

// zlib's gz* functions read gzip and plain files alike, so either form works.
struct gz_file {
  gzFile f;
  std::string path;
  explicit gz_file(const std::string& p) : f(nullptr), path(p) {
    struct stat st;
    if (stat(p.c_str(), &st) != 0)
      throw data_error(p + ": no such file");
    f = gzopen(p.c_str(), "rb");
    if (f == nullptr)
      throw data_error(p + ": cannot open");
  }
  ~gz_file() {
    if (f)
      gzclose(f);
  }
  void read(void* dst, size_t n, const char* what) {
    auto* out = static_cast<unsigned char*>(dst);
    while (n > 0) {
      int chunk = static_cast<int>(std::min<size_t>(n, 1 << 30));
      int got = gzread(f, out, static_cast<unsigned>(chunk));
      if (got <= 0) {
        int code = 0;
        const char* msg = gzerror(f, &code);
        throw data_error(path + ": truncated or corrupt while reading " + what +
                         (code != Z_OK && code != Z_STREAM_END ? std::string(" (") + msg + ")"
                                                                : std::string()));
      }
      out += got;
      n -= static_cast<size_t>(got);
    }
  }
  uint32_t read_u32(const char* what) {
    unsigned char b[4];
    read(b, 4, what);
    return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
  }
};

// Fashion-MNIST training-set statistics, so inputs are roughly zero-mean, unit-variance.
constexpr float pixel_mean = 0.2860f;
constexpr float pixel_std = 0.3530f;

}  // namespace

dataset load_idx(const std::string& images_path, const std::string& labels_path) {
  gz_file img(images_path);
  auto magic = img.read_u32("the header");
  if (magic != 0x00000803)
    throw data_error(images_path + ": not an IDX image file (magic " + std::to_string(magic) +
                     ", expected 2051)");
  auto n = img.read_u32("the header");
  auto rows = img.read_u32("the header");
  auto cols = img.read_u32("the header");
  if (n == 0 || rows == 0 || cols == 0 || rows > 4096 || cols > 4096 || n > 100000000)
    throw data_error(images_path + ": implausible dimensions " + std::to_string(n) + "x" +
                     std::to_string(rows) + "x" + std::to_string(cols));
  gz_file lab(labels_path);
  magic = lab.read_u32("the header");
  if (magic != 0x00000801)
    throw data_error(labels_path + ": not an IDX label file (magic " + std::to_string(magic) +
                     ", expected 2049)");
  auto nl = lab.read_u32("the header");
  if (nl != n)
    throw data_error(labels_path + ": " + std::to_string(nl) + " labels for " +
                     std::to_string(n) + " images in " + images_path);
  dataset d;
  d.size = n;
  d.dim = int64_t{rows} * cols;
  d.classes = 10;
  std::vector<unsigned char> pixels(static_cast<size_t>(d.size * d.dim));
  img.read(pixels.data(), pixels.size(), "the pixels");
  std::vector<unsigned char> labels(n);
  lab.read(labels.data(), labels.size(), "the labels");
  d.x.resize(pixels.size());
  for (size_t i = 0; i < pixels.size(); ++i)
    d.x[i] = (pixels[i] / 255.0f - pixel_mean) / pixel_std;
  d.y.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (labels[i] >= 10)
      throw data_error(labels_path + ": label " + std::to_string(labels[i]) + " at index " +
                       std::to_string(i) + " is outside 0..9");
    d.y[i] = labels[i];
  }
  return d;
}

train_test load_fashion_mnist(const std::string& dir) {
  auto path = [&](const char* base) {
    std::string p = dir + "/" + base;
    struct stat st;
    if (stat((p + ".gz").c_str(), &st) == 0)
      return p + ".gz";
    return stat(p.c_str(), &st) == 0 ? p : p + ".gz";  // name the .gz in the error
  };
  train_test out;
  out.train = load_idx(path("train-images-idx3-ubyte"), path("train-labels-idx1-ubyte"));
  out.test = load_idx(path("t10k-images-idx3-ubyte"), path("t10k-labels-idx1-ubyte"));
  if (out.train.dim != out.test.dim)
    throw data_error(dir + ": train and test images differ in size");
  return out;
}

train_test make_synthetic(int64_t train_size, int64_t test_size, uint64_t seed) {
  constexpr int64_t dim = 784;
  constexpr int64_t classes = 10;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> centers(classes * dim);
  for (auto& c : centers)
    c = 0.15f * normal(rng);
  auto fill = [&](int64_t n) {
    dataset d;
    d.size = n;
    d.dim = dim;
    d.classes = classes;
    d.x.resize(static_cast<size_t>(n * dim));
    d.y.resize(static_cast<size_t>(n));
    std::uniform_int_distribution<int64_t> label(0, classes - 1);
    for (int64_t i = 0; i < n; ++i) {
      auto c = label(rng);
      d.y[i] = c;
      for (int64_t j = 0; j < dim; ++j)
        d.x[i * dim + j] = centers[c * dim + j] + normal(rng);
    }
    return d;
  };
  train_test out;
  out.train = fill(train_size);
  out.test = fill(test_size);
  return out;
}

train_test make_blank(int64_t train_size, int64_t test_size) {
  auto blank = [](int64_t n) {
    dataset d;
    d.size = n;
    d.dim = 1;
    d.classes = 10;
    d.x.assign(static_cast<size_t>(n), 0.0f);
    d.y.assign(static_cast<size_t>(n), 0);
    return d;
  };
  return {blank(train_size), blank(test_size)};
}

}  // namespace syncpoint
