/// \file
/// Float arrays that cross nodes as one block of bytes. CAF 0.17 serializes a
/// std::vector<float> element by element (84 MB/s between two processes here);
/// as a block it is one memcpy on each side. Nodes must share the byte order
/// and float format (every x86-64 and AArch64 machine does).
///
/// ```cpp
/// template <class Inspector>
/// typename Inspector::result_type inspect(Inspector& f, my_msg& x) {
///   return f(caf::meta::type_name("my_msg"), x.id, syncpoint::float_block{x.values});
/// }
/// ```
#pragma once

#include <caf/binary_deserializer.hpp>
#include <caf/deserializer.hpp>
#include <caf/serializer.hpp>
#include <caf/error.hpp>
#include <caf/sec.hpp>
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace syncpoint {

/// A reference to a vector that an inspector reads or fills as raw bytes.
struct float_block {
  std::vector<float>& values;  ///< read or filled whole
};

/// The largest float array accepted from the network (1 Gi floats, 4 GiB): a
/// corrupt or hostile length field must not make a node allocate without bound.
inline constexpr uint64_t max_block_floats = uint64_t{1} << 30;

/// How the blocks cross, not for programs: the library's own.
namespace detail {

// Serializers and deserializers (CAF's data processors): one raw block.
template <class Inspector>
inline constexpr bool is_data_processor = std::is_base_of<caf::serializer, Inspector>::value
                                          || std::is_base_of<caf::deserializer, Inspector>::value;

// A block's length, written, or read and checked before anything is
// allocated: at most max_block_floats values, and no more than the message's
// bytes left hold (a few bytes must not make a node zero gigabytes; fuzz/
// found it). Read, `values` is resized to it.
template <class Inspector, class Vector>
caf::error block_length(Inspector& f, Vector& values, const char* what, size_t bytes_each) {
  auto n = static_cast<uint64_t>(values.size());
  if (auto err = f(n))
    return err;
  if (!Inspector::writes_state)
    return caf::none;
  if (n > max_block_floats)
    return caf::make_error(caf::sec::invalid_argument,
                           std::string(what) + " of " + std::to_string(n) + " values exceeds the limit");
  if (auto* source = dynamic_cast<caf::binary_deserializer*>(&f);
      source != nullptr && n * bytes_each > source->remaining())
    return caf::make_error(caf::sec::invalid_argument, std::string(what) + " of " + std::to_string(n) +
                                                         " values in a message of " +
                                                         std::to_string(source->remaining()) + " bytes");
  values.resize(static_cast<size_t>(n));
  return caf::none;
}

}  // namespace detail

template <class Inspector>
typename std::enable_if<detail::is_data_processor<Inspector>, caf::error>::type
inspect(Inspector& f, float_block& x) {
  if (auto err = detail::block_length(f, x.values, "float block", sizeof(float)))
    return err;
  if (x.values.empty())
    return caf::none;
  return f.apply_raw(x.values.size() * sizeof(float), x.values.data());
}

/// Other inspectors (to_string, logging): the length only, not megabytes of text.
template <class Inspector>
typename std::enable_if<!detail::is_data_processor<Inspector>, typename Inspector::result_type>::type
inspect(Inspector& f, float_block& x) {
  auto n = static_cast<uint64_t>(x.values.size());
  return f(caf::meta::type_name("float_block"), n);
}

/// A std::vector<bool> that crosses nodes as one byte per flag, its length
/// checked as a float block's (CAF 0.17's own vector<bool> trusts the length:
/// a few bytes could make a node allocate gigabytes; fuzz/ found it).
struct flag_block {
  std::vector<bool>& values;  ///< read or filled whole
};

template <class Inspector>
typename std::enable_if<detail::is_data_processor<Inspector>, caf::error>::type
inspect(Inspector& f, flag_block& x) {
  if (auto err = detail::block_length(f, x.values, "flag block", 1))
    return err;
  for (size_t i = 0; i < x.values.size(); ++i) {
    uint8_t b = x.values[i] ? 1 : 0;
    if (auto err = f(b))
      return err;
    if (Inspector::writes_state) {
      if (b > 1)
        return caf::make_error(caf::sec::invalid_argument, "a flag of " + std::to_string(b) + ", not 0 or 1");
      x.values[i] = b == 1;
    }
  }
  return caf::none;
}

template <class Inspector>
typename std::enable_if<!detail::is_data_processor<Inspector>, typename Inspector::result_type>::type
inspect(Inspector& f, flag_block& x) {
  return f(x.values);
}

/// A float or double that crosses nodes as its bit pattern. CAF 0.17 packs
/// floating-point values itself (caf/detail/ieee_754.hpp), and its loop never
/// ends on an infinity: a node that sent one would hang (fuzz/ found it); the
/// bits are also exact where its packing is not (subnormals). Every float in
/// a message that crosses nodes goes through `exact` (or float_block).
///
/// ```cpp
/// return f(caf::meta::type_name("eval_result"), x.version, syncpoint::exact(x.accuracy));
/// ```
template <class T>
struct exact_float {
  static_assert(std::is_floating_point<T>::value && (sizeof(T) == 4 || sizeof(T) == 8));
  T& value;  ///< read or written as its bits
};

/// `x` as an exact_float, for an inspect() field list.
template <class T>
exact_float<T> exact(T& x) {
  return {x};
}

template <class Inspector, class T>
typename std::enable_if<detail::is_data_processor<Inspector>, caf::error>::type
inspect(Inspector& f, exact_float<T>& x) {
  using bits_type = typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type;
  bits_type bits = 0;
  if (Inspector::reads_state)
    std::memcpy(&bits, &x.value, sizeof bits);
  if (auto err = f(bits))
    return err;
  if (Inspector::writes_state)
    std::memcpy(&x.value, &bits, sizeof bits);
  return caf::none;
}

template <class Inspector, class T>
typename std::enable_if<!detail::is_data_processor<Inspector>, typename Inspector::result_type>::type
inspect(Inspector& f, exact_float<T>& x) {
  return f(x.value);
}

/// A list of doubles that crosses nodes value by value as `exact` does (CAF
/// 0.17's own std::vector<double> packs each value, and hangs on an infinity),
/// its length checked as a float block's.
struct exact_list {
  std::vector<double>& values;  ///< read or filled whole
};

template <class Inspector>
typename std::enable_if<detail::is_data_processor<Inspector>, caf::error>::type
inspect(Inspector& f, exact_list& x) {
  if (auto err = detail::block_length(f, x.values, "list of numbers", sizeof(double)))
    return err;
  for (auto& v : x.values) {
    auto e = exact(v);
    if (auto err = inspect(f, e))
      return err;
  }
  return caf::none;
}

template <class Inspector>
typename std::enable_if<!detail::is_data_processor<Inspector>, typename Inspector::result_type>::type
inspect(Inspector& f, exact_list& x) {
  return f(x.values);
}

}  // namespace syncpoint
