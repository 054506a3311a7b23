// The typed interfaces of a job's actors (public: <syncpoint/interfaces.hpp>),
// with the library's own messages they name defined, and their registration.
// The cluster's own interfaces (head, node) are in runtime/cluster/interfaces.hpp.
#pragma once

#include <syncpoint/interfaces.hpp>

#include "core/messages.hpp"
#include "core/saved_state.hpp"

namespace syncpoint {

/// Registers the handle types of <syncpoint/interfaces.hpp>, so that they may
/// travel in messages.
void register_interfaces(caf::actor_system_config& cfg);

}  // namespace syncpoint
