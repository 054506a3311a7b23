// Float arrays that cross nodes as one block of bytes. CAF 0.17 serializes a
// std::vector<float> element by element (84 MB/s between two processes here);
// as a block it is one memcpy on each side. Nodes must share the byte order
// and float format (every x86-64 and AArch64 machine does).
//
//   template <class Inspector>
//   typename Inspector::result_type inspect(Inspector& f, my_msg& x) {
//     return f(caf::meta::type_name("my_msg"), x.id, float_block{x.values});
//   }
#pragma once

#include <caf/deserializer.hpp>
#include <caf/serializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace syncpoint {

/// A reference to a vector that an inspector reads or fills as raw bytes.
struct float_block {
  std::vector<float>& values;
};

/// The largest float array accepted from the network (1 Gi floats, 4 GiB): a
/// corrupt or hostile length field must not make a node allocate without bound.
inline constexpr uint64_t max_block_floats = uint64_t{1} << 30;

/// Serializers and deserializers (CAF's data processors): one raw block.
template <class Inspector>
inline constexpr bool is_data_processor = std::is_base_of<caf::serializer, Inspector>::value
                                          || std::is_base_of<caf::deserializer, Inspector>::value;

template <class Inspector>
typename std::enable_if<is_data_processor<Inspector>, caf::error>::type
inspect(Inspector& f, float_block& x) {
  auto n = static_cast<uint64_t>(x.values.size());
  if (auto err = f(n))
    return err;
  if (Inspector::writes_state) {
    if (n > max_block_floats)
      return caf::make_error(caf::sec::invalid_argument,
                             "float block of " + std::to_string(n) + " values exceeds the limit");
    x.values.resize(static_cast<size_t>(n));
  }
  if (n == 0)
    return caf::none;
  return f.apply_raw(static_cast<size_t>(n) * sizeof(float), x.values.data());
}

/// Other inspectors (to_string, logging): the length only, not megabytes of text.
template <class Inspector>
typename std::enable_if<!is_data_processor<Inspector>, typename Inspector::result_type>::type
inspect(Inspector& f, float_block& x) {
  auto n = static_cast<uint64_t>(x.values.size());
  return f(caf::meta::type_name("float_block"), n);
}

}  // namespace syncpoint
