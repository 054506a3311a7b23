// A one-way ring of bytes in POSIX shared memory (issue 47): the floats of a
// bulk connection between two processes of one machine, so that they cross
// with two copies in user space (into the ring, out of it) instead of a trip
// through the kernel's TCP stack; the frame itself still goes on the
// connection, which says where its floats are (bulk_wire.hpp). The writer
// creates the ring and names it to the reader, which opens it and removes
// the name; only the creator's user can open it (mode 0600).
//
//   auto out = shm_ring::create(capacity, error);       // the writer
//   send out->name() on the connection
//   auto in = shm_ring::open(name, capacity, error);    // the reader
//   if (auto at = out->reserve(bytes)) { std::memcpy(*at, data, bytes); send the frame; }
//   in->take(bytes, dest);                              // in the writer's order
//
// A frame occupies one contiguous span: where it would run past the end it
// starts at the next lap instead, by the same rule on both sides. The reader
// publishes how far it has read in the ring's first cache line; a writer
// that finds no room sends that frame inline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace syncpoint::cluster {

class shm_ring {
 public:
  /// A new ring of `capacity` bytes (rounded up to pages) with memory set
  /// aside for it, or null with the reason (no /dev/shm, no room in it).
  static std::unique_ptr<shm_ring> create(size_t capacity, std::string& error);
  /// The writer's ring `name` of `capacity` bytes, whose name it removes; null with the reason.
  static std::unique_ptr<shm_ring> open(const std::string& name, size_t capacity, std::string& error);
  ~shm_ring();
  shm_ring(const shm_ring&) = delete;
  shm_ring& operator=(const shm_ring&) = delete;

  const std::string& name() const { return name_; }
  size_t capacity() const { return capacity_; }
  /// Removes the name (the creator's, once the reader has it, or never will).
  void unlink();

  /// The writer: where the next frame of `bytes` goes, or null when the
  /// reader has not made room for it yet (it then goes inline).
  char* reserve(uint64_t bytes);
  /// The reader: copies the next frame of `bytes` into `out` and makes its
  /// room free. False when it cannot be in the ring (longer than it).
  bool take(uint64_t bytes, void* out);

 private:
  shm_ring(std::string name, char* base, size_t capacity, bool owner);
  uint64_t place(uint64_t at, uint64_t bytes) const;  // where a frame of `bytes` after position `at` starts

  std::string name_;
  char* base_;          // the mapping: a header line, then the data
  size_t capacity_;     // of the data
  bool owner_;          // created it (its name is ours to remove)
  bool linked_;
  uint64_t position_ = 0;  // the writer's written, or the reader's read, counting every lap
};

/// The ring a connection sending frames of up to `max_floats` floats uses:
/// two frames' room for frames up to 4 MB (a push and the next), one above;
/// 0 (none: every frame inline) for frames over 64 MB.
size_t ring_capacity(uint64_t max_floats);

/// This machine's boot id ("" if unknown): two processes with the same one
/// share a kernel, and can share memory if they share /dev/shm.
const std::string& machine_boot_id();

}  // namespace syncpoint::cluster
