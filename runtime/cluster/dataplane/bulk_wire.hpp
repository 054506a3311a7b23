// The bulk channel's pieces that its server (bulk.cpp) and its client
// (bulk_connect.cpp) share: the wire's handshake, a connection over a TCP or
// TLS stream, and the io thread's state. Not part of the API.
#pragma once

#include "runtime/cluster/dataplane/bulk.hpp"
#include "runtime/cluster/dataplane/shm_ring.hpp"

#include "core/float_buffers.hpp"
#include "core/interfaces.hpp"
#include "core/secret.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <atomic>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

namespace syncpoint::cluster {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using tls_stream = asio::ssl::stream<tcp::socket>;

namespace bulk_wire {

constexpr char magic[8] = {'s', 'p', 'b', 'u', 'l', 'k', '0', '4'};
constexpr uint32_t max_hello = 1 << 16;
constexpr uint32_t max_token = 1 << 12;
constexpr uint32_t ping_frame = UINT32_MAX;  // a frame of no content: the client is alive (never handed on)
constexpr double min_rate = 1e6;   // bytes/s a frame's body must at least come at, once begun
constexpr uint32_t in_ring = 1u << 31;  // in a frame's control length: its floats are in the shared-memory ring

// Fixed-size fields in the machine's byte order, as float blocks are
// (include/syncpoint/float_block.hpp: nodes share byte order and float format).
template <class T>
void put(std::vector<char>& out, T x) {
  char b[sizeof(T)];
  std::memcpy(b, &x, sizeof(T));
  out.insert(out.end(), b, b + sizeof(T));
}
template <class T>
T get(const char* p) {
  T x;
  std::memcpy(&x, p, sizeof(T));
  return x;
}

inline std::shared_ptr<asio::ssl::context> make_tls_context(const tls_files& tls, bool server) {
  auto ctx = std::make_shared<asio::ssl::context>(server ? asio::ssl::context::tls_server
                                                         : asio::ssl::context::tls_client);
  ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                   asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
  ctx->use_certificate_chain_file(tls.cert);
  ctx->use_private_key_file(tls.key, asio::ssl::context::pem);
  ctx->load_verify_file(tls.ca);
  ctx->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
  return ctx;
}

inline tcp::socket& socket_of(tcp::socket& s) { return s; }
inline tcp::socket& socket_of(tls_stream& s) { return s.next_layer(); }

// The io_context, and whether it still takes work. A link may outlive its
// bulk_io (an actor lets go of it on exit): it must not post to a context
// whose thread has ended, and its socket and timers must go before the
// context they are bound to. So every connection holds the gate, as its
// first member, and the context goes with the last of them.
struct io_gate {
  asio::io_context io;
  std::mutex mutex;
  bool open = true;
};

// What bulk_io ends when it goes: every connection it still runs; and what a
// server counts of its own. Every member runs on the io thread.
struct link_base : bulk_link {
  virtual void end(const std::string& why) = 0;
  virtual bool started() const = 0;  // through its hello
  virtual bool ended() const = 0;
};

// One connection; every member runs on the io thread (send and close post to
// it). A server's side closes it when the client is silent past the idle
// limit, or a frame's body comes slower than min_rate; a client's side pings
// when it has sent nothing for the ping period. Frames queued beyond
// max_queued_bytes stop the reading until the queue is half as long.
template <class Stream>
class connection : public link_base, public std::enable_shared_from_this<connection<Stream>> {
 public:
  connection(Stream stream, uint64_t max_floats, std::shared_ptr<io_gate> gate, bulk_limits limits, bool server)
    : gate_(std::move(gate)), stream_(std::move(stream)), executor_(socket_of(stream_).get_executor()),
      max_floats_(max_floats), limits_(limits), server_(server), deadline_(executor_), write_deadline_(executor_),
      ping_(executor_) {}

  Stream& stream() { return stream_; }

  // Before start (the io thread): the floats go through shared memory, `out`
  // this side's frames, `in` the peer's (either may be null).
  void use_rings(std::unique_ptr<shm_ring> out, std::unique_ptr<shm_ring> in) {
    out_ring_ = std::move(out);
    in_ring_ = std::move(in);
  }
  bool started() const override { return started_; }
  bool ended() const override { return closed_; }

  void start(bulk_handler handler) {
    started_ = true;
    handler_ = std::move(handler);
    if (handler_.max_floats != 0)
      max_floats_ = std::min(max_floats_, handler_.max_floats);
    if (!server_)
      keep_pinging();
    read_head();
  }

  void send(uint32_t kind, std::vector<char> control, const float* values, uint64_t count,
            std::shared_ptr<const void> keep_alive) override {
    frame f;
    f.head.reserve(16);
    put(f.head, kind);
    put(f.head, static_cast<uint32_t>(control.size()));
    put(f.head, count);
    f.control = std::move(control);
    f.values = values;
    f.count = count;
    f.keep = std::move(keep_alive);
    std::lock_guard<std::mutex> guard(gate_->mutex);
    if (!gate_->open)
      return;
    asio::post(executor_, [self = this->shared_from_this(), f = std::move(f)]() mutable { self->enqueue(std::move(f)); });
  }

  void close() override {
    std::lock_guard<std::mutex> guard(gate_->mutex);
    if (gate_->open)
      asio::post(executor_, [self = this->shared_from_this()] { self->end(""); });
  }

  // Ends the connection once; the handler hears why.
  void end(const std::string& why) override {
    if (closed_)
      return;
    closed_ = true;
    deadline_.cancel();
    write_deadline_.cancel();
    ping_.cancel();
    boost::system::error_code ignored;
    socket_of(stream_).shutdown(tcp::socket::shutdown_both, ignored);
    socket_of(stream_).close(ignored);
    queue_.clear();
    queued_bytes_ = 0;
    if (out_ring_)
      out_ring_->unlink();  // (a peer that never opened it)
    if (handler_.on_closed)
      handler_.on_closed(why);
  }

 private:
  struct frame {
    std::vector<char> head, control;
    const float* values = nullptr;
    uint64_t count = 0;
    std::shared_ptr<const void> keep;
    size_t bytes() const { return head.size() + control.size() + count * sizeof(float); }
  };

  void enqueue(frame f) {
    if (closed_)
      return;
    sent_since_ping_ = true;
    queued_bytes_ += f.bytes();
    queue_.push_back(std::move(f));
    if (!writing_)
      write_next();
  }

  // A client with nothing to say for a ping period says it is alive.
  void keep_pinging() {
    ping_.expires_after(limits_.ping);
    ping_.async_wait([self = this->shared_from_this()](boost::system::error_code ec) {
      if (ec || self->closed_)
        return;
      if (!self->sent_since_ping_) {
        frame f;
        put(f.head, ping_frame);
        put(f.head, uint32_t{0});
        put(f.head, uint64_t{0});
        self->enqueue(std::move(f));
      }
      self->sent_since_ping_ = false;
      self->keep_pinging();
    });
  }

  // A server's side: the client must get on within `d`, or the connection ends saying `why`.
  void expect_within(std::chrono::steady_clock::duration d, std::string why) {
    if (!server_)
      return;
    deadline_.expires_after(d);
    deadline_.async_wait([self = this->shared_from_this(), why = std::move(why)](boost::system::error_code ec) {
      if (!ec)
        self->end(why);
    });
  }

  void write_next() {
    if (queue_.empty() || closed_) {
      writing_ = false;
      return;
    }
    writing_ = true;
    auto& f = queue_.front();
    if (server_) {  // a client that does not take its answers is let go
      write_deadline_.expires_after(limits_.idle + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                     std::chrono::duration<double>(f.bytes() / min_rate)));
      write_deadline_.async_wait([self = this->shared_from_this()](boost::system::error_code ec) {
        if (!ec)
          self->end("the peer did not take a frame in time");
      });
    }
    to_ring(f);
    std::array<asio::const_buffer, 3> bufs{asio::buffer(f.head), asio::buffer(f.control),
                                           asio::buffer(f.values, f.count * sizeof(float))};
    asio::async_write(stream_, bufs, [self = this->shared_from_this()](boost::system::error_code ec, size_t) {
      self->write_deadline_.cancel();
      if (ec) {
        self->end("write failed: " + ec.message());
        return;
      }
      if (!self->queue_.empty()) {
        self->queued_bytes_ -= std::min(self->queued_bytes_, self->queue_.front().bytes());
        self->queue_.pop_front();
      }
      if (self->paused_ && self->queued_bytes_ <= self->limits_.max_queued_bytes / 2) {
        self->paused_ = false;  // the peer reads its answers again: read what it asks
        self->read_head();
      }
      self->write_next();
    });
  }

  // A frame's floats go into the ring when it has room: the frame then
  // carries only its head and control part, and its floats' owner lets go.
  void to_ring(frame& f) {
    if (!out_ring_ || f.count == 0 || f.head.size() != 16)
      return;
    auto bytes = f.count * sizeof(float);
    char* at = out_ring_->reserve(bytes);
    if (!at)
      return;
    std::memcpy(at, f.values, bytes);
    std::atomic_thread_fence(std::memory_order_release);
    queued_bytes_ -= std::min(queued_bytes_, static_cast<size_t>(bytes));
    uint32_t control = get<uint32_t>(f.head.data() + 4) | in_ring;
    std::memcpy(f.head.data() + 4, &control, sizeof control);
    f.count = 0;
    f.values = nullptr;
    f.keep.reset();
  }

  void read_head() {
    if (closed_)
      return;
    if (queued_bytes_ > limits_.max_queued_bytes) {
      paused_ = true;  // the peer does not read what it asked for: it is not read either
      deadline_.cancel();  // (the writes have their own deadline)
      return;
    }
    char idle_s[32];
    std::snprintf(idle_s, sizeof idle_s, "%g", std::chrono::duration<double>(limits_.idle).count());
    expect_within(limits_.idle, std::string("no frame or ping in ") + idle_s + " s");
    asio::async_read(stream_, asio::buffer(head_), [self = this->shared_from_this()](boost::system::error_code ec, size_t) {
      if (ec) {
        self->end(ec == asio::error::eof ? "the peer closed the connection" : "read failed: " + ec.message());
        return;
      }
      self->read_body();
    });
  }

  void read_body() {
    in_.kind = get<uint32_t>(head_.data());
    auto control = get<uint32_t>(head_.data() + 4);
    auto floats = get<uint64_t>(head_.data() + 8);
    bool ringed = (control & in_ring) != 0;
    control &= ~in_ring;
    if (out_ring_ && server_)
      out_ring_->unlink();  // the client opened it before its first frame
    if (control > max_bulk_control) {
      end("a frame's control part of " + std::to_string(control) + " bytes exceeds " +
          std::to_string(max_bulk_control));
      return;
    }
    if (floats > max_floats_) {
      end("a frame of " + std::to_string(floats) + " floats exceeds this connection's " +
          std::to_string(max_floats_));
      return;
    }
    if (in_.kind == ping_frame) {
      if (control != 0 || floats != 0 || ringed)
        return end("a ping with a content");
      return read_head();
    }
    if (ringed && (!in_ring_ || floats == 0 || floats * sizeof(float) > in_ring_->capacity()))
      return end(in_ring_ ? "a frame longer than the shared-memory ring"
                          : "a frame in shared memory, which this connection did not agree to");
    auto bytes = static_cast<double>(control) + static_cast<double>(floats) * sizeof(float);
    expect_within(limits_.idle + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(bytes / min_rate)),
                  "a frame of " + std::to_string(static_cast<uint64_t>(bytes)) + " bytes stalled");
    in_.control.resize(control);
    in_.values = float_buffers::take(static_cast<size_t>(floats));  // the socket or the ring overwrites it
    std::array<asio::mutable_buffer, 2> bufs{asio::buffer(in_.control),
                                             asio::buffer(in_.values.data(), ringed ? 0 : in_.values.size() * sizeof(float))};
    asio::async_read(stream_, bufs, [self = this->shared_from_this(), ringed](boost::system::error_code ec, size_t) {
      if (ec) {
        self->end("read failed: " + ec.message());
        return;
      }
      if (self->closed_)
        return;
      if (ringed) {
        std::atomic_thread_fence(std::memory_order_acquire);
        self->in_ring_->take(self->in_.values.size() * sizeof(float), self->in_.values.data());
      }
      if (self->handler_.on_frame)
        self->handler_.on_frame(std::move(self->in_));
      self->in_ = {};
      self->read_head();
    });
  }

  std::shared_ptr<io_gate> gate_;  // first: what follows is bound to its context
  Stream stream_;
  asio::any_io_executor executor_;  // the io thread's, read by other threads (the socket is the io thread's)
  uint64_t max_floats_;
  bulk_limits limits_;
  bool server_;
  asio::steady_timer deadline_;  // a server's: when the client's silence or a stalled frame ends it
  asio::steady_timer write_deadline_;  // ... and when a frame the client does not take does
  asio::steady_timer ping_;      // a client's: when it says it is alive
  bulk_handler handler_;
  std::array<char, 16> head_{};
  bulk_frame in_;
  std::deque<frame> queue_;
  size_t queued_bytes_ = 0;
  std::unique_ptr<shm_ring> out_ring_, in_ring_;  // co-located peers: the floats of each way
  bool writing_ = false;
  bool paused_ = false;          // not reading: the peer leaves too much unread
  bool sent_since_ping_ = false;
  bool started_ = false;
  bool closed_ = false;
};

// A side's offer of shared memory: its machine's boot id, the ring it
// writes its frames' floats to, and the ring's size ("": none).
constexpr uint32_t max_offer = 256;

inline std::string ring_offer(const shm_ring* ring) {
  return ring ? machine_boot_id() + " " + ring->name() + " " + std::to_string(ring->capacity()) : std::string();
}

// The peer's ring from its offer, if it is on this machine and this side may
// open it (else null, and the floats of its frames come inline).
inline std::unique_ptr<shm_ring> open_offer(const std::string& offer) {
  char boot[64] = {}, name[128] = {};
  unsigned long long capacity = 0;
  if (offer.empty() || std::sscanf(offer.c_str(), "%63s %127s %llu", boot, name, &capacity) != 3 ||
      machine_boot_id().empty() || boot != machine_boot_id())
    return nullptr;
  std::string error;
  return shm_ring::open(name, static_cast<size_t>(capacity), error);
}

inline std::vector<char> greeting(const std::string& secret, const std::vector<char>& hello, const std::string& offer) {
  std::vector<char> out(magic, magic + sizeof magic);
  put(out, static_cast<uint32_t>(secret.size()));
  out.insert(out.end(), secret.begin(), secret.end());
  put(out, static_cast<uint32_t>(hello.size()));
  out.insert(out.end(), hello.begin(), hello.end());
  put(out, static_cast<uint32_t>(offer.size()));
  out.insert(out.end(), offer.begin(), offer.end());
  return out;
}

inline std::vector<char> answer(const std::string& refusal, const std::string& offer) {
  std::vector<char> out;
  out.push_back(refusal.empty() ? 1 : 0);
  put(out, static_cast<uint32_t>(refusal.size()));
  out.insert(out.end(), refusal.begin(), refusal.end());
  put(out, static_cast<uint32_t>(offer.size()));
  out.insert(out.end(), offer.begin(), offer.end());
  return out;
}

}  // namespace bulk_wire

using namespace bulk_wire;

struct bulk_io::impl {
  std::shared_ptr<io_gate> gate = std::make_shared<io_gate>();
  asio::io_context& io = gate->io;
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  std::thread thread;
  std::promise<void> ran;
  std::mutex mutex;
  std::vector<std::weak_ptr<link_base>> links;

  void keep(std::shared_ptr<link_base> link) {
    std::lock_guard<std::mutex> guard(mutex);
    links.erase(std::remove_if(links.begin(), links.end(), [](auto& w) { return w.expired(); }), links.end());
    links.push_back(std::move(link));
  }
};

}  // namespace syncpoint::cluster
