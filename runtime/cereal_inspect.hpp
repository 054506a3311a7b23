// One field list for both serializers: a type whose fields CAF's `inspect`
// lists (so that it crosses nodes) is written by cereal (checkpoints) from the
// same list, with CAF's annotations (type names) skipped.
//
//   template <class Archive>
//   void serialize(Archive& ar, saved_worker& x) { cereal_by_inspect(ar, x); }
#pragma once

#include "runtime/float_block.hpp"

#include <caf/meta/annotation.hpp>

#include <type_traits>
#include <utility>

namespace syncpoint {

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

 private:
  template <class T>
  void field(T&& x) {
    using type = std::decay_t<T>;
    if constexpr (std::is_same_v<type, float_block>)
      ar(x.values);
    else if constexpr (!std::is_base_of_v<caf::meta::annotation, type>)
      ar(x);
  }
};

template <class Archive, class T>
void cereal_by_inspect(Archive& ar, T& x) {
  cereal_inspector<Archive> f{ar};
  inspect(f, x);
}

}  // namespace syncpoint
