/// \file
/// A torch::data dataset as a syncpoint data set: every example read once,
/// its data tensor's shape the example shape, its target the label.
///
/// ```cpp
/// struct rows : torch::data::datasets::Dataset<rows> {
///   torch::data::Example<> get(size_t i) override {  // 5 features; the label: the largest one's index
///     auto x = torch::sin(torch::arange(5, torch::kFloat32) * static_cast<float>(i + 1));
///     return {x, x.argmax()};
///   }
///   torch::optional<size_t> size() const override { return 1000; }
/// };
/// rows train_rows, test_rows;
/// syncpoint::register_dataset("rows", [&](const syncpoint::data_request&) {
///   return syncpoint::train_test{syncpoint::dataset_from_torch(train_rows, 5),
///                                syncpoint::dataset_from_torch(test_rows, 5)};
/// });
/// ```
///
/// Only files that define such a dataset include this header (it pulls in LibTorch).
#pragma once

#include <syncpoint/data_registry.hpp>

#include <torch/torch.h>

#include <stdexcept>

namespace syncpoint {

/// Reads every example of `source` (a torch::data dataset of a known size
/// whose get(i) returns torch::data::Example<>). Throws data_error when the
/// examples differ in shape or a target is not one integer.
template <class Source>
dataset dataset_from_torch(Source& source, int64_t classes) {
  auto n = source.size();
  if (!n)
    throw data_error("dataset_from_torch: the torch dataset does not know its size");
  dataset d;
  d.size = static_cast<int64_t>(*n);
  d.classes = classes;
  for (size_t i = 0; i < *n; ++i) {
    auto example = source.get(i);
    auto x = example.data.to(torch::kFloat).contiguous();
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
    if (i == 0) {
      d.set_shape(shape.empty() ? std::vector<int64_t>{1} : shape);
      d.x.reserve(static_cast<size_t>(d.size * d.dim));
    } else if (x.numel() != d.dim || (!shape.empty() && shape != d.shape)) {
      throw data_error("dataset_from_torch: example " + std::to_string(i) + " differs in shape from example 0");
    }
    if (example.target.numel() != 1)
      throw data_error("dataset_from_torch: example " + std::to_string(i) + "'s target is not one label");
    d.x.insert(d.x.end(), x.template data_ptr<float>(), x.template data_ptr<float>() + x.numel());
    d.y.push_back(example.target.template item<int64_t>());
  }
  return d;
}

}  // namespace syncpoint
