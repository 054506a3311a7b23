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

#include <cstddef>
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

/// The same, written as it comes: open, append any number of times, commit.
/// A failure sticks (later appends do nothing) and commit reports it; a
/// file dropped before commit leaves `file` as it was.
class durable_file {
 public:
  durable_file(std::string file, std::string tmp);
  ~durable_file();  // not committed: the temporary file goes
  durable_file(const durable_file&) = delete;
  durable_file& operator=(const durable_file&) = delete;
  void append(const char* data, size_t size);
  void append(const std::string& bytes) { append(bytes.data(), bytes.size()); }
  durable_write commit();

 private:
  void fail(int err);
  std::string file_, tmp_;
  int fd_ = -1;
  durable_write state_;
};

}  // namespace syncpoint
