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
// payload's length and CRC-32, and the payload (cereal portable binary).
#pragma once

#include "runtime/messages.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace syncpoint {

inline constexpr uint32_t checkpoint_format = 1;

/// What a checkpoint must agree with before it is read further.
struct checkpoint_header {
  uint32_t format = checkpoint_format;
  std::string model;
  uint64_t parameters = 0;  // the model's shape, as its parameter count
  std::string protocol;
};

/// One worker's place in the run.
struct worker_checkpoint {
  uint64_t clock = 0;          // gradients pushed
  uint64_t data_position = 0;  // examples drawn from its shard so far
  std::string rng_state;       // its sampler's engine, as text (std::mt19937_64 <<)
  uint32_t batch = 0;
};

/// The run's state at a checkpoint.
struct checkpoint_state {
  int64_t time_ns = 0;        // on the run's clock
  uint64_t samples = 0;
  uint64_t version = 0;
  std::vector<float> weights;
  std::vector<float> velocity;
  double mean_staleness = -1;
  std::vector<worker_checkpoint> workers;
  std::string protocol_state;  // the protocol's own, opaque here
  std::vector<trace_event> trace;
};

struct checkpoint {
  checkpoint_header head;
  checkpoint_state state;
};

/// Writes DIR/checkpoint-<samples, 12 digits>.bin through DIR/.checkpoint.tmp:
/// written, flushed to disk (fsync), then renamed, so an older checkpoint is
/// never replaced by a partial file. Returns the file's path. Throws
/// config_error naming the file when it cannot (the older ones stay intact).
std::string write_checkpoint(const std::string& dir, const checkpoint& c);

/// Reads `file`. Throws config_error naming the file and what is wrong: not a
/// checkpoint, another format version, another model, model shape or protocol
/// than `expect`, truncated, or corrupt (CRC mismatch).
checkpoint read_checkpoint(const std::string& file, const checkpoint_header& expect);

/// The newest checkpoint in DIR (most samples), or "" when there is none.
std::string newest_checkpoint(const std::string& dir);

}  // namespace syncpoint
