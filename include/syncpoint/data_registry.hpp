/// \file
/// Data sets by name, as models are: the built-in ones and a user's own.
///
/// ```cpp
/// syncpoint::register_dataset("blobs", [](const syncpoint::data_request& r) {
///   auto make = [&](int64_t n, uint64_t seed) {
///     std::mt19937_64 rng(seed);
///     std::normal_distribution<float> noise;
///     std::uniform_int_distribution<int64_t> pick(0, 2);  // not i % 3: workers shard by i % workers
///     return syncpoint::dataset_from(n, {20}, 3, [&](int64_t, float* x) {
///       int64_t label = pick(rng);
///       for (int k = 0; k < 20; ++k) x[k] = (k % 3 == label ? 1.5f : 0.0f) + noise(rng);
///       return label;
///     });
///   };
///   return syncpoint::train_test{make(r.train_size, r.seed), make(r.test_size, r.seed + 1)};
/// });
/// cfg.dataset = "blobs";   // or --dataset blobs in a program that registered it
/// ```
///
/// From a torch::data dataset: <syncpoint/torch_data.hpp>.
#pragma once

#include <syncpoint/dataset.hpp>

#include <functional>
#include <string>
#include <vector>

namespace syncpoint {

/// What a job asks of a data set: where its files are (--data; empty: the
/// set's own default), and, for a generated set, how many examples.
struct data_request {
  std::string dir;  ///< where the files are ("": the set's default)
  int64_t train_size = 6000;  ///< --train-limit, else 6000
  int64_t test_size = 1000;   ///< --test-limit, else 1000
  uint64_t seed = 1;  ///< the job's seed, for a generated set
  int64_t context = 64;  ///< a text set's window: this many characters, and the next (--context)
  std::string options;   ///< what follows ':' in the set's name ("clicks:keys=100000": "keys=100000")
};

/// Makes a data set's two parts for a job's request.
using dataset_factory = std::function<train_test(const data_request&)>;

/// Adds a data set under `name`. Returns false if the name is taken.
/// Every process of a cluster that loads it must register it too.
bool register_dataset(const std::string& name, dataset_factory factory);

/// The set registered as `name`, checked: the same example shape in train and
/// test, labels in 0 .. classes - 1, x of size * dim floats. Throws
/// std::invalid_argument for an unknown name (listing the known ones) and
/// data_error naming what is wrong. A name may carry options after a colon,
/// handed to the set as request.options. Built in: "fashion-mnist", "idx" (any
/// IDX pair in --data), "cifar10" (its binary version in --data),
/// "synthetic", "blank", "clicks" (a generated click log with a known best
/// AUC: docs/sparse.md).
train_test make_dataset(const std::string& name, const data_request& request);

/// The best AUC any model can reach on the "clicks" set of `request` (its
/// options, seed and test size): that of the true click probabilities the
/// generator drew the test set's labels from (docs/sparse.md).
double clicks_best_auc(const data_request& request);

/// Every registered data set's name, sorted.
std::vector<std::string> dataset_names();

/// `count` examples of `shape` and `classes` classes; fill(i, x) writes example
/// i's floats into x and returns its label.
dataset dataset_from(int64_t count, std::vector<int64_t> shape, int64_t classes,
                     const std::function<int64_t(int64_t, float*)>& fill);

}  // namespace syncpoint
