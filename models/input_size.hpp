// The floats of one example a model is made for: the product of its shape.
//
//   int64_t n = features(in);  // 3x32x32: 3072
#pragma once

#include <syncpoint/model.hpp>

namespace syncpoint {

inline int64_t features(const model_input& in) {
  int64_t n = 1;
  for (auto d : in.shape)
    n *= d;
  return n;
}

}  // namespace syncpoint
