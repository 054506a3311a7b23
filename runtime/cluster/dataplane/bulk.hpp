// The bulk channel (issue 24): gradient and weight bytes between a worker's
// process and a PS shard's process on a TCP connection of their own, beside
// CAF's, as ps-lite and BytePS keep data apart from control. CAF's path
// copies a message twice in user space on each side (serialized into the
// middleman's buffer, deserialized out of it) on one multiplexer thread; here
// the floats go from the sender's vector to the socket and from the socket
// into the receiver's vector, on a thread of their own (docs/architecture.md,
// "The data plane").
//
// A frame is a small typed message, serialized by CAF's binary serializer,
// and its float array out of line:
//
//   u32 kind | u32 control bytes | u64 floats | control | floats
//
// A connection starts with the magic "spbulk04", the cluster's token and a
// hello the server's owner judges (which job, shard and worker, with the
// worker's key) before anything is made for it; it is refused with a reason
// in words. With TLS it runs over the cluster's certificates, and each side
// verifies the other's. A hostile peer cannot hold the server (bulk_limits):
// connections are capped (the oldest not yet through its hello makes room
// for a new one), the hello is due within seconds, a silent connection is
// closed (a client pings when it has nothing to send), and a peer that does
// not read its answers stops being read (the send queue is bounded).
//
//   bulk_io io;                                     // one per process
//   bulk_server server(io, {secret, tls}, accept);  // accept(hello) -> handler or refusal
//   auto link = bulk_connect(io, {secret, tls}, "127.0.0.1", server.port(), hello, on_frame);
//   (*link)->send(kind, control_bytes, values, keep_alive);
#pragma once

#include "runtime/cluster/net/tls_files.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace syncpoint::cluster {

/// One received frame: its kind, its control bytes and its floats.
struct bulk_frame {
  uint32_t kind = 0;
  std::vector<char> control;
  std::vector<float> values;
};

/// The largest control part accepted (the typed message without its floats;
/// a sparse model's keys and rows are in it: a batch's rows, 64 MiB at most).
inline constexpr uint32_t max_bulk_control = 64u << 20;

/// One open connection, frames in order both ways. Thread-safe. Kind
/// 0xffffffff is the channel's own (a client's ping): not to be sent.
class bulk_link {
 public:
  virtual ~bulk_link() = default;
  /// Queues a frame; `values` must stay valid until it is written, which
  /// `keep_alive` (held until then) ensures: the floats are not copied.
  virtual void send(uint32_t kind, std::vector<char> control, const float* values, uint64_t count,
                    std::shared_ptr<const void> keep_alive) = 0;
  /// Closes the connection; the receiver's on_closed follows.
  virtual void close() = 0;
};

/// Called on the channel's thread: a frame arrived, or the connection ended
/// (with a reason, "" when closed on purpose).
struct bulk_handler {
  std::function<void(bulk_frame&&)> on_frame;
  std::function<void(const std::string& why)> on_closed;
  uint64_t max_floats = 0;  // a server's handler: the longest frame this connection takes (0: the server's limit)
};

/// The thread (Boost.Asio's io_context) every bulk connection of a process runs on.
class bulk_io {
 public:
  bulk_io();
  ~bulk_io();  // closes every connection and joins the thread
  bulk_io(const bulk_io&) = delete;
  bulk_io& operator=(const bulk_io&) = delete;
  struct impl;
  impl& get() { return *impl_; }

 private:
  std::unique_ptr<impl> impl_;
};

struct bulk_security {
  std::string secret;  // the cluster's token ("" when it has none)
  tls_files tls;       // enabled(): TLS with peer verification
};

/// What bounds a bulk connection (docs/cluster.md, "The bulk channel's limits").
struct bulk_limits {
  size_t max_connections = 4096;  ///< a server's connections at once (or half the process's file limit)
  size_t max_greeting = 1024;     ///< ... of them not yet through their hello; the oldest makes room for a new one
  std::chrono::milliseconds greeting{5'000};  ///< magic, token and hello due within this of the connect
  std::chrono::milliseconds idle{60'000};     ///< a server closes a connection that sent nothing for this long
  std::chrono::milliseconds ping{15'000};     ///< a client sends a ping when it sent nothing for this long
  size_t max_queued_bytes = 64 << 20;         ///< frames waiting to be written; above it the peer is not read
  /// Not a bound: whether a plain (not TLS) connection between two processes
  /// of one machine moves its floats through shared memory (shm_ring.hpp)
  /// where both can. SYNCPOINT_BULK_SHM=0 turns it off (data_plane.cpp).
  bool shared_memory = true;
};

/// What the server's owner answers to a hello: a handler for the new
/// connection (which it may keep, with the link, to send on), or why not.
using bulk_accept = std::function<std::variant<bulk_handler, std::string>(const std::vector<char>& hello,
                                                                          std::shared_ptr<bulk_link> link)>;

/// Listens on `host` (a free port) until destroyed. A connection with the
/// wrong token, a malformed hello or frame, or a frame longer than
/// `max_floats` is closed, and `log` says why; one over the limits is closed
/// (`log` hears of the first of a burst).
class bulk_server {
 public:
  bulk_server(bulk_io& io, bulk_security security, bulk_accept accept, uint64_t max_floats,
              std::function<void(const std::string&)> log = {}, const std::string& host = "127.0.0.1",
              bulk_limits limits = {});
  ~bulk_server();
  uint16_t port() const;

 private:
  struct impl;
  std::shared_ptr<impl> impl_;
};

/// Connects, says the token and `hello`, and waits (up to `timeout_ms`) for
/// the server's answer. The error says why it failed, in words.
struct bulk_connect_result {
  std::shared_ptr<bulk_link> link;
  std::string error;
  bool shared_memory = false;  // the floats go through shared memory both ways (bulk_limits)
};
bulk_connect_result bulk_connect(bulk_io& io, const bulk_security& security, const std::string& host,
                                 uint16_t port, const std::vector<char>& hello, bulk_handler handler,
                                 uint64_t max_floats, int timeout_ms = 5000, bulk_limits limits = {});

}  // namespace syncpoint::cluster
