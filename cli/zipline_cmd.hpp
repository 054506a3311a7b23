// `syncpoint zipline`: the ZipLine algorithm alone, on a CSV file or a random
// instance, with the contract of PROTOCOLS.md ("syncpoint zipline contract").
#pragma once

#include "runtime/studies/zipline_instances.hpp"

#include <string>
#include <vector>

namespace syncpoint::cli {

/// Runs the subcommand; returns the exit status (2 on bad input).
int run_zipline(const std::vector<std::string>& args);

}  // namespace syncpoint::cli
