// The tracer: collects trace events from every actor of a run.
//   (trace_atom, trace_event)       appends
//   (collect_atom) -> std::vector<trace_event>, ordered by start time, then arrival
#pragma once

#include "runtime/interfaces.hpp"

namespace syncpoint {

tracer_actor spawn_tracer(caf::actor_system& sys);

}  // namespace syncpoint
