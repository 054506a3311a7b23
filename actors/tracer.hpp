// The tracer: collects trace events from every actor of a run.
//   (trace_atom, trace_event)       appends
//   (collect_atom) -> std::vector<trace_event>, ordered by start time, then arrival
//   (collect_atom, from) -> (next, the events since the from-th, in arrival order): a live view
//   (save_atom) -> std::vector<trace_event>, a copy in arrival order (a checkpoint)
// A resumed run's tracer starts with the events of the checkpoint. It holds
// room for `expected` events from the start (a guess; more still fit).
#pragma once

#include "core/interfaces.hpp"

namespace syncpoint {

tracer_actor spawn_tracer(caf::actor_system& sys, std::vector<trace_event> so_far = {}, size_t expected = 0);

}  // namespace syncpoint
