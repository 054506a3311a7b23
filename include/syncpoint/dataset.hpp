/// \file
/// In-memory image classification data: row-major float features, int64 labels.
/// Fashion-MNIST is read from gzip IDX files; a synthetic set serves fast tests.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace syncpoint {

/// A view of `count` examples, contiguous, `dim` floats each, each of the
/// shape shape[0..rank) (rank 0: a vector of `dim`).
struct batch_view {
  const float* x = nullptr;  ///< count * dim floats
  const int64_t* y = nullptr;  ///< count labels
  int64_t count = 0;  ///< examples
  int64_t dim = 0;  ///< floats per example
  const int64_t* shape = nullptr;  ///< one example's shape
  int64_t rank = 0;  ///< entries of shape

  /// {count, shape...}: the batch's tensor sizes.
  std::vector<int64_t> sizes() const {
    std::vector<int64_t> s{count};
    if (rank == 0)
      s.push_back(dim);
    else
      s.insert(s.end(), shape, shape + rank);
    return s;
  }
};

/// A data set in memory: its examples as rows of floats, and their labels.
struct dataset {
  int64_t size = 0;     ///< number of examples
  std::vector<int64_t> shape;  ///< one example's, e.g. {1, 28, 28} or {3, 32, 32} or {20}
  int64_t dim = 0;      ///< floats per example: the product of shape
  int64_t classes = 0;  ///< labels are 0 .. classes - 1
  std::vector<float> x;     ///< size * dim, normalized
  std::vector<int64_t> y;   ///< size

  /// Example i's floats.
  const float* row(int64_t i) const { return x.data() + i * dim; }
  /// Sets shape and dim.
  void set_shape(std::vector<int64_t> s);
  /// A view of examples [start, start + count).
  batch_view view(int64_t start, int64_t count) const {
    return {row(start), y.data() + start, count, dim, shape.data(), static_cast<int64_t>(shape.size())};
  }
  /// Keeps the first `n` examples (no-op when n <= 0 or n >= size).
  void truncate(int64_t n);
};

/// Thrown for a missing, unreadable or malformed data file; the message names the path.
struct data_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A data set's two parts.
struct train_test {
  dataset train;  ///< what the workers learn from
  dataset test;  ///< what the evaluator measures accuracy on
};

/// Reads the four Fashion-MNIST files (gzip or plain IDX) from `dir`.
/// Example: `auto d = load_fashion_mnist("/usr/share/datasets/fashion-mnist");`
train_test load_fashion_mnist(const std::string& dir);

/// Fashion-MNIST's pixel statistics: what load_idx standardizes by unless told otherwise.
inline constexpr float fashion_mnist_mean = 0.2860f;  ///< the pixels' mean
inline constexpr float fashion_mnist_std = 0.3530f;  ///< ... and their standard deviation

/// Reads one IDX pair: images of unsigned bytes in any shape (n x rows x cols
/// gives examples of shape {1, rows, cols}; n x c x h x w gives {c, h, w}) and
/// their labels, 0 .. classes - 1 (classes 0: the largest label + 1).
/// Pixels become (p / 255 - mean) / std_dev. Throws data_error naming the
/// file: a wrong magic number, a truncated file, a label out of range.
dataset load_idx(const std::string& images_path, const std::string& labels_path, int64_t classes = 10,
                 float mean = fashion_mnist_mean, float std_dev = fashion_mnist_std);

/// The MNIST family's four files (train-images-idx3-ubyte[.gz], ...) in `dir`,
/// of any shape and number of classes, standardized by the training set's
/// mean and deviation: `--dataset idx --data DIR`.
train_test load_idx_dir(const std::string& dir);

/// CIFAR-10's binary version in `dir` (data_batch_1.bin .. data_batch_5.bin,
/// test_batch.bin): examples of shape {3, 32, 32}, standardized per channel.
/// Throws data_error naming the file: a missing file, a truncated record, a
/// label outside 0..9.
train_test load_cifar10(const std::string& dir);

/// Reads CIFAR-10 binary files (records of a label byte and 3072 pixel bytes) into one set.
dataset load_cifar10_files(const std::vector<std::string>& paths);

/// Character-level text for a language model (--dataset text): the UTF-8
/// text at `path` (a file, or a folder's regular files by name that hold no
/// NUL byte) as windows of context + 1 characters, each a code point's place
/// in the vocabulary of every code point the text holds, sorted (classes: its
/// size; the label: the window's last character). A window starts at the
/// last character of the one before, so each character after the first is
/// predicted once; the last tenth of the text is the test set. Throws
/// data_error naming the path: missing, empty, not UTF-8, too short.
///
/// ```cpp
/// auto d = syncpoint::load_text("/usr/share/games/fortunes", 64);  // d.train.shape == {65}
/// ```
train_test load_text(const std::string& path, int64_t context);

/// Word-level text (--dataset text:tokens=words,vocab=N): the text at `path`
/// as load_text reads it, in words: runs of letters and digits (any code
/// point past ASCII a letter, an apostrophe inside a word kept, ASCII
/// lowercased), each other visible character a word of its own, white space
/// only between. A word's id is its rank among the training part's
/// (the first nine tenths') `vocabulary` - 1 most frequent words, from 1;
/// every other word is 0. Windows of context + 1 words, the last tenth held
/// out, as load_text's (classes: the words kept, plus 1). Throws data_error
/// as load_text does, and for a vocabulary under 2.
train_test load_words(const std::string& path, int64_t context, int64_t vocabulary);

/// 28x28 "images" of 10 Gaussian classes: learnable in a few hundred steps.
train_test make_synthetic(int64_t train_size, int64_t test_size, uint64_t seed);

/// Examples of one zero feature, all of class 0: what a timing-only run
/// (`syncpoint simulate`) reads, at no cost.
train_test make_blank(int64_t train_size, int64_t test_size);

}  // namespace syncpoint
