// The checkpoint file (issue 12): everything a run needs to go on, in one
// file that a crash mid-write cannot destroy. The state a run puts in it is
// gathered by the runners; this header is only the file: its layout, the
// atomic write, and the checks on reading.
//
//   checkpoint c;  c.head = {..., "mlp", 203530, "bsp"};  c.state = ...;
//   auto file = write_checkpoint("ckpt", c);     // ckpt/checkpoint-000000045056.bin
//   auto back = read_checkpoint(newest_checkpoint("ckpt"), c.head);
//
// Layout: the magic "syncpoint-checkpoint", the format version, then a
// cereal portable-binary header (model, parameter count, protocol), the
// payload's length and CRC-32, and the payload (cereal portable binary). In
// the payload, equal weight vectors (the PS's, the workers' copies, weights
// on the link) are stored once: a BSP run's workers all hold the PS's model.
// After the payload, a sparse model's rows in chunks (saved_rows), each its
// length, CRC-32 and cereal bytes, as the shards hand them over; a length of
// 0 ends the file. So no table is ever held whole in memory to be written or read.
#pragma once

#include "core/saved_state.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace syncpoint {

inline constexpr uint32_t checkpoint_format = 10;  // 2: a sharded PS's state in one model; 3: a worker's partial pull;
                                                  // 4: the optimizer's second moment, steps, and the schedule's samples;
                                                  // 5: slices staged on shards, partly reported pushes, refusals;
                                                  // 6: a worker's compression residual, a push's wire bytes;
                                                  // 7: local work (a worker's inner optimizer, steps and anchor;
                                                  //    the coordinator's work per worker), a fragment's ranges;
                                                  // 8: replicated shards (each copy's link and timers, the copies
                                                  //    lost and serving, who had reported a partial push)
                                                  // 9: sparse tables (chunks of rows after the payload, each
                                                  //    shard's tables, a worker's rows, a pull's keys)
                                                  // 10: a row block's values as one float block

/// What a checkpoint must agree with before it is read further.
struct checkpoint_header {
  uint32_t format = checkpoint_format;
  std::string model;
  uint64_t parameters = 0;  // the model's shape, as its parameter count
  std::string protocol;
};

struct checkpoint {
  checkpoint_header head;
  checkpoint_state state;
};

/// Writes DIR/checkpoint-<samples, 12 digits>.bin through DIR/.checkpoint.tmp:
/// written, flushed to disk (fsync), then renamed, so an older checkpoint is
/// never replaced by a partial file. Takes `c` by value: runners move their
/// state in (a copy of a large model costs as much as writing it). Returns the file's path. Throws
/// config_error naming the file when it cannot (the older ones stay intact).
std::string write_checkpoint(const std::string& dir, checkpoint c);

/// A checkpoint written as it comes: the state at once, then each chunk of
/// a sparse model's rows as it is added, then commit. Until commit nothing
/// replaces DIR's files; a stream dropped uncommitted leaves them as they were.
///
///   checkpoint_stream out("ckpt", c);
///   out.add(chunk);                 // as many as there are
///   auto file = out.commit();       // ckpt/checkpoint-000000045056.bin
class checkpoint_stream {
 public:
  checkpoint_stream(const std::string& dir, checkpoint c);
  ~checkpoint_stream();
  void add(const saved_rows& chunk);
  /// The file's path; throws config_error as write_checkpoint does.
  std::string commit();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// Calls `take` with each chunk of rows of the checkpoint `file`, whose
/// chunks begin at `at` (checkpoint_state::rows_at). Throws config_error
/// naming the file for a truncated or corrupt chunk.
void read_row_chunks(const std::string& file, uint64_t at, const std::function<void(const saved_rows&)>& take);

/// One chunk of rows of the checkpoint `file`, the one at `at`, and where the
/// next begins; nothing at the end mark. Throws as read_row_chunks does.
std::optional<std::pair<saved_rows, uint64_t>> read_row_chunk(const std::string& file, uint64_t at);

/// Deletes all but the newest `keep` checkpoints in DIR (keep 0: none deleted).
void prune_checkpoints(const std::string& dir, size_t keep);

/// Reads `file`'s state; its rows stay in the file (state.rows_file,
/// rows_at: read_row_chunks), each chunk checked. Throws config_error naming
/// the file and what is wrong: not a checkpoint, another format version,
/// another model, model shape or protocol than `expect`, truncated, or
/// corrupt (CRC mismatch).
checkpoint read_checkpoint(const std::string& file, const checkpoint_header& expect);

/// The same check on a checkpoint's bytes, through its payload (the rows
/// after it are not read); `file` names it in the errors.
checkpoint parse_checkpoint(const std::string& bytes, const std::string& file, const checkpoint_header& expect);

/// The bytes before the payload: magic, format, header, the payload's length
/// and CRC-32. A checkpoint file is these followed by the payload.
std::string checkpoint_file_header(const checkpoint_header& head, const std::string& payload);

/// What a run says when it has written one: "[bsp] checkpoint at t=1.22s: FILE".
std::string checkpoint_line(const std::string& protocol, int64_t time_ns, const std::string& file);

/// The newest checkpoint in DIR (most samples), or "" when there is none.
std::string newest_checkpoint(const std::string& dir);

}  // namespace syncpoint
