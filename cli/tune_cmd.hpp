// syncpoint tune-switch [train options] [--tolerance T] [--budget K] [--policy-out FILE]
// Finds the smallest share of BSP before ASP whose final accuracy is within T
// of pure BSP's (binary search, K runs after the reference), prints the runs
// as they finish and writes the policy for `train --protocol sync-switch
// --switch-policy FILE`.
#pragma once

#include <string>
#include <vector>

namespace syncpoint::cli {

int run_tune_switch(const std::vector<std::string>& args);

}  // namespace syncpoint::cli
