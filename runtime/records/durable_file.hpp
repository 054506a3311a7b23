// A file replaced whole or not at all: written to a temporary file in the
// same folder, flushed to disk (fsync), renamed over the old one, and the
// rename itself made durable (the folder flushed). A crash at any point
// leaves the old file or the new one, never a torn one. (No library of the
// stack does this: std::filesystem has no fsync, Boost's has no durable
// rename; docs/architecture.md, "Written by hand".)
//
//   auto err = write_durably("ckpt/head.journal", "ckpt/.head.journal.tmp", {&header, &payload});
//   if (!err.ok()) throw config_error("cannot write ...: " + err.why);
#pragma once

#include <string>
#include <vector>

namespace syncpoint {

struct durable_write {
  bool opened = true;  // false: the temporary file could not even be created
  std::string why;     // empty: written; else strerror's words
  bool ok() const { return why.empty(); }
};

/// Writes the concatenation of `parts` to `file` through `tmp`. On failure the
/// temporary file is removed and `file` is as it was.
durable_write write_durably(const std::string& file, const std::string& tmp, const std::vector<const std::string*>& parts);

}  // namespace syncpoint
