// What the tests of the `syncpoint` command share: running it, and the
// flags of a job small enough to start and end in a second.
#pragma once

#include "tests/helpers.hpp"

#include <string>

namespace syncpoint::testing {

// `syncpoint ARGS`: its exit status, and stdout and stderr.
inline command_result run_cli(const std::string& args) {
  return run_shell(std::string(SYNCPOINT_CLI) + " " + args);
}

inline const std::string fast_job = " --model softmax --dataset synthetic --train-limit 2000 --test-limit 300"
                                    " --iter-cost 5 --progress=false";

}  // namespace syncpoint::testing
