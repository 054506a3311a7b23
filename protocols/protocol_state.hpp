// A protocol's state in a checkpoint (protocol::checkpoint). The archive
// saves or loads the members listed, in order; it knows numbers, strings,
// bools and the standard containers of them.
//
//   void checkpoint(protocol_archive& ar) override {
//     ar(period_, t0_, last_slot_);             // saving or loading alike
//     if (ar.loading()) rebuild_index();         // anything derived
//   }
#pragma once

#include <syncpoint/protocol.hpp>

#include <cereal/archives/portable_binary.hpp>
#include <cereal/types/deque.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>

#include <stdexcept>
#include <string>

namespace syncpoint {

class protocol_archive {
 public:
  explicit protocol_archive(cereal::PortableBinaryOutputArchive& out) : out_(&out) {}
  explicit protocol_archive(cereal::PortableBinaryInputArchive& in) : in_(&in) {}

  bool loading() const { return in_ != nullptr; }

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

/// The protocol's state as bytes; throws std::logic_error naming `name` if
/// the protocol does not support checkpoints.
std::string save_protocol_state(protocol& p, const std::string& name);

/// Loads what save_protocol_state wrote into `p` (built from the same
/// options); throws std::invalid_argument if the bytes do not fit.
void load_protocol_state(protocol& p, const std::string& name, const std::string& bytes);

}  // namespace syncpoint
