// Floats handed to Python without a copy: a NumPy array owning a vector (torch.from_numpy then
// makes the tensor, sharing the memory).
#pragma once

#include <pybind11/numpy.h>

#include <vector>

namespace syncpoint::python {

/// A 1-D float32 array that takes `v` over.
inline pybind11::array_t<float> owned_array(std::vector<float> v) {
  auto* owner = new std::vector<float>(std::move(v));
  pybind11::capsule keep(owner, [](void* p) { delete static_cast<std::vector<float>*>(p); });
  return pybind11::array_t<float>({static_cast<pybind11::ssize_t>(owner->size())},
                                  {static_cast<pybind11::ssize_t>(sizeof(float))}, owner->data(), keep);
}

}  // namespace syncpoint::python
