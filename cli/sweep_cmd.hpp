// `syncpoint sweep`: a grid of virtual-clock runs over train options, run
// by a pool of local processes into a sweep folder (runtime/sweep.hpp), with
// a table of every cell at the end (DIR/sweep.md). Exit status: 0 when every
// cell finished, 1 when some failed (the others are kept), 2 for bad input.
#pragma once

#include <string>
#include <vector>

namespace syncpoint::cli {

int run_sweep(const std::vector<std::string>& args);

}  // namespace syncpoint::cli
