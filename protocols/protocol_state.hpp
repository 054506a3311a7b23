// A protocol's state in a checkpoint, as bytes (the archive a protocol's
// checkpoint() is handed is public: <syncpoint/protocol_archive.hpp>).
//
//   auto bytes = save_protocol_state(*proto, "ssp");   // saved_coordinator::protocol_state
//   load_protocol_state(*proto, "ssp", bytes);
#pragma once

#include <syncpoint/protocol_archive.hpp>

#include <stdexcept>
#include <string>

namespace syncpoint {

/// The protocol's state as bytes; throws std::logic_error naming `name` if
/// the protocol does not support checkpoints.
std::string save_protocol_state(protocol& p, const std::string& name);

/// Loads what save_protocol_state wrote into `p` (built from the same
/// options); throws std::invalid_argument if the bytes do not fit.
void load_protocol_state(protocol& p, const std::string& name, const std::string& bytes);

}  // namespace syncpoint
