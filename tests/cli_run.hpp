// What the tests of the `syncpoint` command share: running it, and the
// flags of a job small enough to start and end in a second.
#pragma once

#include "tests/helpers.hpp"

#include <doctest/doctest.h>

#include <string>

namespace syncpoint::testing {

// `syncpoint ARGS`: its exit status, and stdout and stderr.
inline command_result run_cli(const std::string& args) {
  return run_shell(std::string(SYNCPOINT_CLI) + " " + args);
}

// `syncpoint ARGS` exits 2 with WORDS in what it says.
inline void check_refused(const std::string& args, const std::string& words) {
  auto r = run_cli(args);
  std::string what = args + "\n" + r.output;
  CHECK_MESSAGE(r.status == 2, what);
  CHECK_MESSAGE(r.output.find(words) != std::string::npos, what);
}

inline const std::string fast_job = " --model softmax --dataset synthetic --train-limit 2000 --test-limit 300"
                                    " --iter-cost 5 --progress=false";

}  // namespace syncpoint::testing
