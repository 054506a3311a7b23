// `syncpoint zipline`: the ZipLine algorithm alone, on a CSV file or a random
// instance, with the contract of PROTOCOLS.md ("syncpoint zipline contract").
#pragma once

#include "protocols/elastic_bsp/zipline.hpp"

#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

namespace syncpoint::cli {

/// A malformed input file; the message is one line naming the file and line.
struct input_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Reads one row per line, comma-separated, all rows of one length, each ascending.
zipline_matrix read_zipline_csv(const std::string& path);
/// The same from a stream; `path` names it in the errors.
zipline_matrix parse_zipline_csv(std::istream& in, const std::string& path);

/// Rows as ElasticBSP predicts them: start b_i in [0, 1), interval in [0.5, 2).
zipline_matrix random_zipline_matrix(size_t n, size_t R, uint64_t seed);

/// Runs the subcommand; returns the exit status (2 on bad input).
int run_zipline(const std::vector<std::string>& args);

}  // namespace syncpoint::cli
