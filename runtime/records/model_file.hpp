// A model's weights in a file: cereal's portable binary archive (byte order
// fixed, so a file written on one machine reads on any other).
//
//   save_model_file("final.model", result.final_model);
//   weights w = load_model_file("final.model");
#pragma once

#include "core/messages.hpp"

#include <string>

namespace syncpoint {

/// Writes `w` to `path` (through a temporary file, then a rename). Throws
/// std::runtime_error naming the path when it cannot.
void save_model_file(const std::string& path, const weights& w);

/// Reads a file save_model_file wrote. Throws std::runtime_error naming the
/// path if it is missing, truncated or not a model file.
weights load_model_file(const std::string& path);

}  // namespace syncpoint
