/// \file
/// What a protocol's checkpoint() is handed: an archive that saves or loads
/// the members listed, in order, with cereal's portable binary format. It
/// knows numbers, strings, bools and the standard containers of them (vector,
/// deque, map, pair). A protocol that overrides checkpoint() can be
/// checkpointed and resumed bit for bit; one that does not is refused by
/// --checkpoint-every before its run starts. Needs cereal's headers
/// (Debian: libcereal-dev) where it is included.
///
/// ```cpp
/// #include <syncpoint/protocol.hpp>
/// #include <syncpoint/protocol_archive.hpp>
///
/// void checkpoint(syncpoint::protocol_archive& ar) override {
///   ar(period_, t0_, last_slot_);             // saving or loading alike
///   if (ar.loading()) rebuild_index();         // anything derived
/// }
/// ```
#pragma once

#include <syncpoint/protocol.hpp>

#include <cereal/archives/portable_binary.hpp>
#include <cereal/types/deque.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>

namespace syncpoint {

/// Saves or loads a protocol's members (protocol::checkpoint).
class protocol_archive {
 public:
  /// An archive that saves into `out` (the library makes it for a checkpoint).
  explicit protocol_archive(cereal::PortableBinaryOutputArchive& out) : out_(&out) {}
  /// An archive that loads from `in` (the library makes it for a resume).
  explicit protocol_archive(cereal::PortableBinaryInputArchive& in) : in_(&in) {}

  /// Whether this archive loads (a resume) rather than saves.
  bool loading() const { return in_ != nullptr; }

  /// Saves (or loads) each of `xs`, in order.
  template <class... Ts>
  void operator()(Ts&... xs) {
    if (out_)
      (*out_)(xs...);
    else
      (*in_)(xs...);
  }

 private:
  cereal::PortableBinaryOutputArchive* out_ = nullptr;
  cereal::PortableBinaryInputArchive* in_ = nullptr;
};

}  // namespace syncpoint
