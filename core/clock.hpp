// One clock per run: CAF's actor clock, which is the steady clock under the
// normal scheduler and a manually advanced clock under the virtual one.
// Actors read "now" relative to the run's origin and wait with delayed_send.
#pragma once

#include "core/messages.hpp"

#include <chrono>

namespace syncpoint {

using time_point = caf::actor_clock::time_point;

inline nanos since(const caf::local_actor* self, time_point origin) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           const_cast<caf::local_actor*>(self)->clock().now() - origin)
    .count();
}

inline double to_seconds(nanos t) {
  return static_cast<double>(t) * 1e-9;
}

/// Saturates instead of overflowing (a delay of 1e300 s is "forever", not negative).
inline caf::timespan seconds(double s) {
  constexpr double max_ns = 9.0e18;
  double ns = s * 1e9;
  return caf::timespan{static_cast<int64_t>(ns >= max_ns ? max_ns : (ns <= 0 || ns != ns ? 0 : ns))};
}

}  // namespace syncpoint
