// `syncpoint sweep`: a grid of virtual-clock runs over train options, run
// by a pool of local processes into a sweep folder (runtime/studies/sweep.hpp), or
// with --head on a cluster's free slots (cli/sweep_cluster.cpp), with a
// table of every cell at the end (DIR/sweep.md). Exit status: 0 when every
// cell finished, 1 when some failed (the others are kept) or the head was
// lost, 2 for bad input or a refusing head, 128+N when interrupted by signal N.
#pragma once

#include "cli/sweep_spec.hpp"

#include <string>
#include <vector>

namespace syncpoint::cli {

int run_sweep(const std::vector<std::string>& args);

/// The end of a sweep: DIR/sweep.md and DIR/index.html written, the table
/// printed; 1 when a cell of `outcomes` failed (named on stderr), else 0.
int finish_sweep(const sweep_request& req, const std::vector<sweep_cell>& cells,
                 const std::vector<cell_outcome>& outcomes);

/// Runs the cells not finished in req.out on the cluster at req.head.
int run_cluster_sweep(const sweep_request& req, const std::vector<sweep_cell>& cells);

}  // namespace syncpoint::cli
