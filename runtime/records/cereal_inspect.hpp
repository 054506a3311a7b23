// One field list for both serializers: a type whose fields CAF's `inspect`
// lists (so that it crosses nodes) is written by cereal (checkpoints) from the
// same list, with CAF's annotations (type names) skipped.
//
//   template <class Archive>
//   void serialize(Archive& ar, saved_worker& x) { cereal_by_inspect(ar, x); }
//
// While an `input_bound` is in scope, every string and vector read checks its
// length field against the bytes left before it allocates: cereal's own loads
// trust the length, so a corrupt file could ask for gigabytes (fuzz/ found
// it). The bound is per thread because cereal hands nested loads its own
// archive type, with no room for it (its UserDataAdapter is experimental).
#pragma once

#include <syncpoint/float_block.hpp>

#include <caf/meta/annotation.hpp>
#include <cereal/cereal.hpp>
#include <cereal/details/helpers.hpp>

#include <stdexcept>
#include <streambuf>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace syncpoint {

/// Reads on this thread check lengths against `source`'s bytes left while it lives.
class input_bound {
 public:
  explicit input_bound(std::streambuf& source) : source_(source), outer_(current()) { current() = this; }
  ~input_bound() { current() = outer_; }
  input_bound(const input_bound&) = delete;
  input_bound& operator=(const input_bound&) = delete;

  size_t remaining() const { return static_cast<size_t>(std::max<std::streamsize>(0, source_.in_avail())); }
  /// The innermost bound of this thread, or nullptr.
  static input_bound*& current() {
    static thread_local input_bound* bound = nullptr;
    return bound;
  }

 private:
  std::streambuf& source_;
  input_bound* outer_;
};

namespace detail {
template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T>
struct is_pair : std::false_type {};
template <class A, class B>
struct is_pair<std::pair<A, B>> : std::true_type {};
}  // namespace detail

template <class Archive>
struct cereal_inspector {
  using result_type = void;
  static constexpr bool reads_state = true;
  static constexpr bool writes_state = true;
  Archive& ar;

  template <class... Ts>
  void operator()(Ts&&... xs) {
    (field(std::forward<Ts>(xs)), ...);
  }

  template <class T>
  void field(T&& x) {
    using type = std::decay_t<T>;
    if constexpr (std::is_same_v<type, float_block> || std::is_same_v<type, flag_block> ||
                  std::is_same_v<type, exact_list>)
      field(x.values);
    else if constexpr (std::is_same_v<type, exact_float<float>> || std::is_same_v<type, exact_float<double>>)
      ar(x.value);
    else if constexpr (std::is_base_of_v<caf::meta::annotation, type>)
      return;
    else if constexpr (Archive::is_loading::value && std::is_same_v<type, bool>) {
      uint8_t byte = 0;  // cereal would load any byte into a bool, which is undefined beyond 0 and 1
      ar(byte);
      if (byte > 1)
        throw cereal::Exception("a flag of " + std::to_string(byte) + ", not 0 or 1");
      x = byte == 1;
    } else if constexpr (Archive::is_loading::value && std::is_same_v<type, std::string>) {
      if (input_bound::current())
        load_string(x);
      else
        ar(x);
    } else if constexpr (Archive::is_loading::value && detail::is_vector<type>::value) {
      if (input_bound::current())
        load_vector(x);
      else
        ar(x);
    } else if constexpr (Archive::is_loading::value && detail::is_pair<type>::value) {
      field(x.first);
      field(x.second);
    } else
      ar(x);
  }

 private:
  // The same bytes as cereal's loads (a size tag, then the contents), with the length checked first.
  size_t length(size_t min_bytes_each) {
    cereal::size_type n = 0;
    ar(cereal::make_size_tag(n));
    auto left = input_bound::current()->remaining();
    if (n > left / min_bytes_each)
      throw cereal::Exception("a length of " + std::to_string(n) + " with only " + std::to_string(left) +
                              " bytes left");
    return static_cast<size_t>(n);
  }
  void load_string(std::string& s) {
    s.resize(length(1));
    ar(cereal::binary_data(s.data(), s.size()));
  }
  template <class T, class A>
  void load_vector(std::vector<T, A>& v) {
    if constexpr (std::is_same_v<T, bool>) {
      v.resize(length(1));
      for (size_t i = 0; i < v.size(); ++i) {
        bool b = false;
        field(b);
        v[i] = b;
      }
    } else if constexpr (std::is_arithmetic_v<T>) {
      v.resize(length(sizeof(T)));
      ar(cereal::binary_data(v.data(), v.size() * sizeof(T)));
    } else {
      v.resize(length(1));
      for (auto& x : v)
        field(x);
    }
  }
};

template <class Archive, class T>
void cereal_by_inspect(Archive& ar, T& x) {
  cereal_inspector<Archive> f{ar};
  inspect(f, x);
}

/// Plain fields (not a type with `inspect`), written and read as cereal_by_inspect does.
template <class Archive, class... Ts>
void cereal_fields(Archive& ar, Ts&... xs) {
  cereal_inspector<Archive> f{ar};
  f(xs...);
}

}  // namespace syncpoint
