// syncpoint launch [OPTIONS] -- TRAIN-OPTIONS (docs/launch.md): what every
// process of a job started by a launcher (srun, mpirun, torchrun-style
// variables, a Kubernetes Indexed Job) runs. Rank 0 is the head and the
// submitter, the other ranks are nodes (runtime/cluster/client/launch.hpp reads who
// is which). Exit status: the job's (cli/cluster_cmds.hpp), 2 for bad input or
// a launcher's variables that are missing or bad, named.
#pragma once

#include <string>
#include <vector>

namespace syncpoint::cli {

int run_launch(const std::vector<std::string>& args);

}  // namespace syncpoint::cli
