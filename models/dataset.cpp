#include <syncpoint/dataset.hpp>

#include <libdeflate.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <random>
#include <sys/stat.h>

namespace syncpoint {

void dataset::set_shape(std::vector<int64_t> s) {
  shape = std::move(s);
  dim = 1;
  for (auto d : shape)
    dim *= d;
}

void dataset::truncate(int64_t n) {
  if (n <= 0 || n >= size)
    return;
  size = n;
  x.resize(static_cast<size_t>(n * dim));
  y.resize(static_cast<size_t>(n));
}

namespace {

// A file's bytes, as they are on disk.
std::vector<unsigned char> read_raw(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    throw data_error(path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw data_error(path + ": cannot open");
  std::vector<unsigned char> raw(static_cast<size_t>(st.st_size));
  in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
  auto got = in.gcount();
  if (got != static_cast<std::streamsize>(raw.size()) || in.peek() != std::ifstream::traits_type::eof())
    throw data_error(path + ": changed while it was read (" + std::to_string(st.st_size) + " bytes, then " +
                     std::to_string(got) + (got == st.st_size ? " and more)" : ")"));
  return raw;
}

// A file's whole content, gunzipped if it is gzip (every member of it), else as it is on disk.
// libdeflate rather than zlib's gzread: it inflates a whole buffer 2.6x as fast, and a node started
// again mid-job loads its data set on cores its running workers keep busy (docs/architecture.md).
std::vector<unsigned char> read_file(const std::string& path) {
  auto raw = read_raw(path);
  if (raw.size() < 2 || raw[0] != 0x1f || raw[1] != 0x8b)
    return raw;
  if (raw.size() < 18)
    throw data_error(path + ": truncated gzip data (" + std::to_string(raw.size()) + " bytes)");
  // The last member's trailer states its size (mod 2^32): the buffer's first guess. Deflate cannot
  // expand more than 1032 to 1, so a trailer or a stream claiming more is corrupt, not a reason to
  // allocate gigabytes.
  auto* tail = raw.data() + raw.size() - 4;
  size_t guess = size_t{tail[0]} | size_t{tail[1]} << 8 | size_t{tail[2]} << 16 | size_t{tail[3]} << 24;
  const size_t most = raw.size() * 1032 + 4096;
  std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> inflater(
      libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
  if (!inflater)
    throw std::bad_alloc();
  std::vector<unsigned char> out(std::clamp<size_t>(guess, 1, most));
  size_t in_at = 0, out_at = 0;
  while (in_at < raw.size()) {
    size_t used = 0, made = 0;
    auto r = libdeflate_gzip_decompress_ex(inflater.get(), raw.data() + in_at, raw.size() - in_at, out.data() + out_at,
                                           out.size() - out_at, &used, &made);
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE && out.size() < most) {
      out.resize(std::min(out.size() * 2 + 4096, most));  // this member again, with room
      continue;
    }
    if (r != LIBDEFLATE_SUCCESS)
      throw data_error(path + ": truncated or corrupt gzip data" +
                       (in_at > 0 ? " after byte " + std::to_string(in_at) : std::string()));
    in_at += used;
    out_at += made;
  }
  out.resize(out_at);
  return out;
}

// Reads a file's content from its start; a read past its end names the file and what was read.
struct byte_reader {
  std::string path;
  std::vector<unsigned char> bytes;
  size_t at = 0;
  explicit byte_reader(const std::string& p) : path(p), bytes(read_file(p)) {}
  const unsigned char* take(size_t n, const char* what) {
    if (bytes.size() - at < n)
      throw data_error(path + ": truncated while reading " + what + " (" + std::to_string(n - (bytes.size() - at)) +
                       " bytes short)");
    at += n;
    return bytes.data() + at - n;
  }
  uint32_t read_u32(const char* what) {
    auto* b = take(4, what);
    return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
  }
};

}  // namespace

dataset load_idx(const std::string& images_path, const std::string& labels_path, int64_t classes, float mean,
                 float std_dev) {
  byte_reader img(images_path);
  auto magic = img.read_u32("the header");
  auto dims = magic & 0xff;
  if ((magic & 0xffffff00) != 0x00000800 || dims < 2 || dims > 5)
    throw data_error(images_path + ": not an IDX image file (magic " + std::to_string(magic) +
                     ", expected 2051, or 2050 to 2053: unsigned bytes in 2 to 5 dimensions)");
  auto n = img.read_u32("the header");
  std::vector<int64_t> shape;
  for (uint32_t k = 1; k < dims; ++k)
    shape.push_back(img.read_u32("the header"));
  int64_t per_example = 1;
  for (auto d : shape)
    per_example *= d;
  if (n == 0 || n > 100000000 || per_example == 0 || per_example > (int64_t{1} << 24)) {
    std::string text = std::to_string(n);
    for (auto d : shape)
      text += "x" + std::to_string(d);
    throw data_error(images_path + ": implausible dimensions " + text);
  }
  if (shape.size() == 2)  // rows x cols: one channel
    shape.insert(shape.begin(), 1);
  byte_reader lab(labels_path);
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
  d.set_shape(shape);
  auto count = static_cast<size_t>(d.size * d.dim);
  const unsigned char* pixels = img.take(count, "the pixels");
  const unsigned char* labels = lab.take(n, "the labels");
  float value[256];  // each byte's float: the same expression as per pixel, 256 times only
  for (int b = 0; b < 256; ++b)
    value[b] = (static_cast<unsigned char>(b) / 255.0f - mean) / std_dev;
  d.x.resize(count);
  for (size_t i = 0; i < count; ++i)
    d.x[i] = value[pixels[i]];
  d.classes = classes > 0 ? classes : 1 + *std::max_element(labels, labels + n);
  d.y.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (labels[i] >= d.classes)
      throw data_error(labels_path + ": label " + std::to_string(labels[i]) + " at index " + std::to_string(i) +
                       " is outside 0.." + std::to_string(d.classes - 1));
    d.y[i] = labels[i];
  }
  return d;
}

namespace {

// dir/base.gz if it exists, else dir/base if that does, else dir/base.gz (for the error).
std::string idx_path(const std::string& dir, const char* base) {
  std::string p = dir + "/" + base;
  struct stat st;
  if (stat((p + ".gz").c_str(), &st) == 0)
    return p + ".gz";
  return stat(p.c_str(), &st) == 0 ? p : p + ".gz";
}

}  // namespace

train_test load_idx_dir(const std::string& dir) {
  train_test out;
  // Pixels / 255 first; then standardized by the training set's mean and deviation.
  out.train = load_idx(idx_path(dir, "train-images-idx3-ubyte"), idx_path(dir, "train-labels-idx1-ubyte"), 0, 0, 1);
  out.test = load_idx(idx_path(dir, "t10k-images-idx3-ubyte"), idx_path(dir, "t10k-labels-idx1-ubyte"),
                      out.train.classes, 0, 1);
  if (out.train.shape != out.test.shape)
    throw data_error(dir + ": train and test images differ in shape");
  double sum = 0, squares = 0;
  for (float v : out.train.x) {
    sum += v;
    squares += static_cast<double>(v) * v;
  }
  auto count = static_cast<double>(out.train.x.size());
  auto mean = static_cast<float>(sum / count);
  auto dev = static_cast<float>(std::sqrt(std::max(1e-12, squares / count - (sum / count) * (sum / count))));
  for (auto* d : {&out.train, &out.test})
    for (auto& v : d->x)
      v = (v - mean) / dev;
  return out;
}

train_test load_fashion_mnist(const std::string& dir) {
  train_test out;
  out.train = load_idx(idx_path(dir, "train-images-idx3-ubyte"), idx_path(dir, "train-labels-idx1-ubyte"));
  out.test = load_idx(idx_path(dir, "t10k-images-idx3-ubyte"), idx_path(dir, "t10k-labels-idx1-ubyte"));
  if (out.train.dim != out.test.dim)
    throw data_error(dir + ": train and test images differ in size");
  return out;
}

dataset load_cifar10_files(const std::vector<std::string>& paths) {
  constexpr int64_t pixels = 3 * 32 * 32, record = 1 + pixels;
  // CIFAR-10's per-channel statistics (its training set).
  constexpr float mean[3] = {0.4914f, 0.4822f, 0.4465f};
  constexpr float dev[3] = {0.2470f, 0.2435f, 0.2616f};
  dataset d;
  d.set_shape({3, 32, 32});
  d.classes = 10;
  for (auto& path : paths) {
    auto buf = read_raw(path);  // (names a missing file, and one that changed while it was read)
    auto bytes = static_cast<int64_t>(buf.size());
    if (bytes == 0 || bytes % record != 0)
      throw data_error(path + ": truncated record: " + std::to_string(bytes) + " bytes is not a whole number of " +
                       std::to_string(record) + "-byte records (record " + std::to_string(bytes / record) +
                       " has " + std::to_string(bytes % record) + " bytes)");
    auto n = bytes / record;
    d.x.reserve(static_cast<size_t>((d.size + n) * pixels));
    for (int64_t r = 0; r < n; ++r) {
      const unsigned char* rec = buf.data() + r * record;
      if (rec[0] >= 10)
        throw data_error(path + ": label " + std::to_string(rec[0]) + " at record " + std::to_string(r) +
                         " is outside 0..9");
      d.y.push_back(rec[0]);
      for (int64_t i = 0; i < pixels; ++i) {
        auto c = static_cast<size_t>(i / 1024);
        d.x.push_back((rec[1 + i] / 255.0f - mean[c]) / dev[c]);
      }
    }
    d.size += n;
  }
  return d;
}

train_test load_cifar10(const std::string& dir) {
  std::vector<std::string> train;
  for (int k = 1; k <= 5; ++k)
    train.push_back(dir + "/data_batch_" + std::to_string(k) + ".bin");
  return {load_cifar10_files(train), load_cifar10_files({dir + "/test_batch.bin"})};
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
    d.set_shape({1, 28, 28});
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
    d.set_shape({1});
    d.classes = 10;
    d.x.assign(static_cast<size_t>(n), 0.0f);
    d.y.assign(static_cast<size_t>(n), 0);
    return d;
  };
  return {blank(train_size), blank(test_size)};
}

}  // namespace syncpoint
