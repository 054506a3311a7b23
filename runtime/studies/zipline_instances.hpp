// ZipLine's inputs (PROTOCOLS.md, "syncpoint zipline contract"): a matrix of
// the workers' predicted push times, read from a CSV file or drawn at random.
//
//   auto m = syncpoint::read_zipline_csv("pushes.csv");   // throws input_error naming the line
//   auto r = syncpoint::random_zipline_matrix(8, 150, 1);
#pragma once

#include "protocols/elastic_bsp/zipline.hpp"

#include <cstdint>
#include <istream>
#include <stdexcept>
#include <string>

namespace syncpoint {

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

}  // namespace syncpoint
