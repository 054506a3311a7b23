#include "protocols/protocol_state.hpp"

#include <sstream>

namespace syncpoint {

namespace {
struct no_checkpoint : std::logic_error {
  no_checkpoint() : std::logic_error("no checkpoint support") {}
};
}  // namespace

void protocol::checkpoint(protocol_archive&) {
  throw no_checkpoint{};
}

std::string save_protocol_state(protocol& p, const std::string& name) {
  std::ostringstream bytes;
  try {
    cereal::PortableBinaryOutputArchive out(bytes);
    protocol_archive ar(out);
    p.checkpoint(ar);
  } catch (const no_checkpoint&) {
    throw std::logic_error("protocol '" + name +
                           "' does not support checkpoints (it does not override protocol::checkpoint)");
  }
  return bytes.str();
}

void load_protocol_state(protocol& p, const std::string& name, const std::string& bytes) {
  std::istringstream in(bytes);
  try {
    cereal::PortableBinaryInputArchive archive(in);
    protocol_archive ar(archive);
    p.checkpoint(ar);
  } catch (const no_checkpoint&) {
    throw std::logic_error("protocol '" + name + "' does not support checkpoints");
  } catch (const cereal::Exception& e) {
    throw std::invalid_argument("the state of protocol '" + name + "' in the checkpoint does not fit it: " +
                                e.what());
  }
  if (in.peek() != std::char_traits<char>::eof())
    throw std::invalid_argument("the state of protocol '" + name +
                                "' in the checkpoint is longer than the protocol reads");
}

}  // namespace syncpoint
