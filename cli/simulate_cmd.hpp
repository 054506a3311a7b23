// syncpoint simulate --workers N --protocol P --iterations K [timing options]
// A protocol's timeline with N workers on the virtual clock, nothing computed
// (runtime/studies/simulate.hpp): prints the simulated time, how the workers spent it,
// the barriers and link use, and the wall time with the coordinator's cost per
// push. --out DIR writes trace.jsonl and summary.json as train does.
#pragma once

#include <string>
#include <vector>

namespace syncpoint::cli {

int run_simulate(const std::vector<std::string>& args);

}  // namespace syncpoint::cli
