// `syncpoint report RUN_DIR... [--out FILE]`: the comparison page of runs
// already on disk. A folder with summary.json is one run; a folder without
// stands for its runs: those its runs.json lists (compare writes it, in the
// order compare ran them), else its sub-folders that have a summary.json.
#pragma once

#include <string>
#include <vector>

namespace syncpoint::cli {

int run_report(const std::vector<std::string>& args);

/// The run folders `dir` stands for (see above); throws config_error.
std::vector<std::string> runs_in(const std::string& dir);

}  // namespace syncpoint::cli
