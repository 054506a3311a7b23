// The bulk channel's transport (runtime/cluster/bulk.hpp) on Boost.Asio: one
// io_context thread per process; a connection is a template over its stream
// (a TCP socket, or OpenSSL over one), so the plain path has no TLS layer.
#include "runtime/cluster/bulk.hpp"

#include "core/float_buffers.hpp"
#include "runtime/cluster/interfaces.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <optional>
#include <cstring>
#include <deque>
#include <future>
#include <thread>

namespace syncpoint::cluster {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using tls_stream = asio::ssl::stream<tcp::socket>;

namespace {

constexpr char magic[8] = {'s', 'p', 'b', 'u', 'l', 'k', '0', '1'};
constexpr uint32_t max_hello = 1 << 16;
constexpr uint32_t max_token = 1 << 12;
constexpr auto handshake_deadline = std::chrono::seconds(5);

// Fixed-size fields in the machine's byte order, as float blocks are
// (core/float_block.hpp: nodes share byte order and float format).
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

std::shared_ptr<asio::ssl::context> make_tls_context(const tls_files& tls, bool server) {
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

tcp::socket& socket_of(tcp::socket& s) { return s; }
tcp::socket& socket_of(tls_stream& s) { return s.next_layer(); }

// Whether the io_context still takes work: a link may outlive its bulk_io
// (an actor closes it on exit), and must not post to a destroyed context.
struct io_gate {
  std::mutex mutex;
  bool open = true;
};

// What bulk_io ends when it goes: every connection it still runs.
struct link_base : bulk_link {
  virtual void end(const std::string& why) = 0;  // on the io thread
};

// One connection; every member runs on the io thread (send and close post to it).
template <class Stream>
class connection : public link_base, public std::enable_shared_from_this<connection<Stream>> {
 public:
  connection(Stream stream, uint64_t max_floats, std::shared_ptr<io_gate> gate)
    : stream_(std::move(stream)), executor_(socket_of(stream_).get_executor()), max_floats_(max_floats),
      gate_(std::move(gate)) {}

  Stream& stream() { return stream_; }

  void start(bulk_handler handler) {
    handler_ = std::move(handler);
    if (handler_.max_floats != 0)
      max_floats_ = std::min(max_floats_, handler_.max_floats);
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
    asio::post(executor_, [self = this->shared_from_this(), f = std::move(f)]() mutable {
      if (self->closed_)
        return;
      self->queue_.push_back(std::move(f));
      if (!self->writing_)
        self->write_next();
    });
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
    boost::system::error_code ignored;
    socket_of(stream_).shutdown(tcp::socket::shutdown_both, ignored);
    socket_of(stream_).close(ignored);
    queue_.clear();
    if (handler_.on_closed)
      handler_.on_closed(why);
  }

 private:
  struct frame {
    std::vector<char> head, control;
    const float* values = nullptr;
    uint64_t count = 0;
    std::shared_ptr<const void> keep;
  };

  void write_next() {
    if (queue_.empty() || closed_) {
      writing_ = false;
      return;
    }
    writing_ = true;
    auto& f = queue_.front();
    std::array<asio::const_buffer, 3> bufs{asio::buffer(f.head), asio::buffer(f.control),
                                           asio::buffer(f.values, f.count * sizeof(float))};
    asio::async_write(stream_, bufs, [self = this->shared_from_this()](boost::system::error_code ec, size_t) {
      if (ec) {
        self->end("write failed: " + ec.message());
        return;
      }
      if (!self->queue_.empty())
        self->queue_.pop_front();
      self->write_next();
    });
  }

  void read_head() {
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
    in_.control.resize(control);
    in_.values = float_buffers::take(static_cast<size_t>(floats));  // the socket overwrites it
    std::array<asio::mutable_buffer, 2> bufs{asio::buffer(in_.control),
                                             asio::buffer(in_.values.data(), in_.values.size() * sizeof(float))};
    asio::async_read(stream_, bufs, [self = this->shared_from_this()](boost::system::error_code ec, size_t) {
      if (ec) {
        self->end("read failed: " + ec.message());
        return;
      }
      if (self->closed_)
        return;
      if (self->handler_.on_frame)
        self->handler_.on_frame(std::move(self->in_));
      self->in_ = {};
      self->read_head();
    });
  }

  Stream stream_;
  asio::any_io_executor executor_;  // the io thread's, read by other threads (the socket is the io thread's)
  uint64_t max_floats_;
  std::shared_ptr<io_gate> gate_;
  bulk_handler handler_;
  std::array<char, 16> head_{};
  bulk_frame in_;
  std::deque<frame> queue_;
  bool writing_ = false;
  bool closed_ = false;
};

std::vector<char> greeting(const std::string& secret, const std::vector<char>& hello) {
  std::vector<char> out(magic, magic + sizeof magic);
  put(out, static_cast<uint32_t>(secret.size()));
  out.insert(out.end(), secret.begin(), secret.end());
  put(out, static_cast<uint32_t>(hello.size()));
  out.insert(out.end(), hello.begin(), hello.end());
  return out;
}

std::vector<char> answer(const std::string& refusal) {
  std::vector<char> out;
  out.push_back(refusal.empty() ? 1 : 0);
  put(out, static_cast<uint32_t>(refusal.size()));
  out.insert(out.end(), refusal.begin(), refusal.end());
  return out;
}

}  // namespace

struct bulk_io::impl {
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  std::thread thread;
  std::promise<void> ran;
  std::shared_ptr<io_gate> gate = std::make_shared<io_gate>();
  std::mutex mutex;
  std::vector<std::weak_ptr<link_base>> links;

  void keep(std::shared_ptr<link_base> link) {
    std::lock_guard<std::mutex> guard(mutex);
    links.erase(std::remove_if(links.begin(), links.end(), [](auto& w) { return w.expired(); }), links.end());
    links.push_back(std::move(link));
  }
};

bulk_io::bulk_io() : impl_(std::make_unique<impl>()) {
  impl_->thread = std::thread([i = impl_.get()] {
    i->io.run();
    i->ran.set_value();
  });
}

bulk_io::~bulk_io() {
  // Every connection ends, so that its owner hears it (actors waiting on it
  // quit); then the thread runs out of work. A handshake's timer or a peer
  // that does not let go is cut short after a second.
  asio::post(impl_->io, [i = impl_.get()] {
    std::vector<std::weak_ptr<link_base>> links;
    {
      std::lock_guard<std::mutex> guard(i->mutex);
      links.swap(i->links);
    }
    for (auto& w : links)
      if (auto l = w.lock())
        l->end("this process is shutting down");
  });
  impl_->work.reset();
  if (impl_->ran.get_future().wait_for(std::chrono::seconds(1)) != std::future_status::ready)
    impl_->io.stop();
  impl_->thread.join();
  std::lock_guard<std::mutex> guard(impl_->gate->mutex);
  impl_->gate->open = false;  // what is posted later is never run, and goes with the context
}

// -- the server ----------------------------------------------------------------

struct bulk_server::impl : std::enable_shared_from_this<bulk_server::impl> {
  impl(bulk_io::impl& owner, bulk_security sec, bulk_accept acc, uint64_t max, std::function<void(const std::string&)> lg)
    : owner(owner), io(owner.io), acceptor(owner.io), security(std::move(sec)), accept(std::move(acc)), max_floats(max), log(std::move(lg)) {}

  bulk_io::impl& owner;
  asio::io_context& io;
  tcp::acceptor acceptor;
  bulk_security security;
  std::shared_ptr<asio::ssl::context> tls;
  bulk_accept accept;
  uint64_t max_floats;
  std::function<void(const std::string&)> log;

  void say(const std::string& line) {
    if (log)
      log(line);
  }

  void next() {
    acceptor.async_accept([self = shared_from_this()](boost::system::error_code ec, tcp::socket s) {
      if (ec == asio::error::operation_aborted)
        return;  // the server is gone
      if (!ec) {
        s.set_option(tcp::no_delay(true));
        if (self->tls) {
          auto c = std::make_shared<connection<tls_stream>>(tls_stream(std::move(s), *self->tls), self->max_floats,
                                                             self->owner.gate);
          self->owner.keep(c);
          self->handshake(c);
        } else {
          auto c = std::make_shared<connection<tcp::socket>>(std::move(s), self->max_floats, self->owner.gate);
          self->owner.keep(c);
          self->handshake(c);
        }
      }
      self->next();
    });
  }

  template <class Stream>
  void handshake(std::shared_ptr<connection<Stream>> c) {
    auto deadline = std::make_shared<asio::steady_timer>(acceptor.get_executor(), handshake_deadline);
    deadline->async_wait([c](boost::system::error_code ec) {
      if (!ec)
        c->end("no handshake within 5 s");
    });
    auto greet = [self = shared_from_this(), c, deadline] { self->read_greeting(c, deadline); };
    if constexpr (std::is_same_v<Stream, tls_stream>) {
      c->stream().async_handshake(asio::ssl::stream_base::server, [self = shared_from_this(), c, greet](boost::system::error_code ec) {
        if (ec) {
          self->say("bulk channel: refused a connection: TLS handshake failed: " + ec.message());
          c->end("TLS handshake failed");
          return;
        }
        greet();
      });
    } else {
      greet();
    }
  }

  template <class Stream>
  void read_greeting(std::shared_ptr<connection<Stream>> c, std::shared_ptr<asio::steady_timer> deadline) {
    auto buf = std::make_shared<std::vector<char>>(sizeof magic + 4);
    asio::async_read(c->stream(), asio::buffer(*buf), [self = shared_from_this(), c, buf, deadline](boost::system::error_code ec, size_t) {
      if (ec)
        return c->end("no greeting");
      if (std::memcmp(buf->data(), magic, sizeof magic) != 0) {
        self->say("bulk channel: refused a connection that is not a syncpoint bulk channel");
        return c->end("not a bulk channel");
      }
      auto token_len = get<uint32_t>(buf->data() + sizeof magic);
      if (token_len > max_token)
        return c->end("token too long");
      buf->assign(token_len + 4, 0);
      asio::async_read(c->stream(), asio::buffer(*buf), [self, c, buf, deadline](boost::system::error_code ec, size_t) {
        if (ec)
          return c->end("no token");
        std::string token(buf->data(), buf->size() - 4);
        auto hello_len = get<uint32_t>(buf->data() + buf->size() - 4);
        if (hello_len > max_hello)
          return c->end("hello too long");
        auto hello = std::make_shared<std::vector<char>>(hello_len);
        asio::async_read(c->stream(), asio::buffer(*hello), [self, c, hello, token, deadline](boost::system::error_code ec, size_t) {
          if (ec)
            return c->end("no hello");
          deadline->cancel();
          std::string refusal;
          std::optional<bulk_handler> handler;
          if (!same_secret(token, self->security.secret)) {
            refusal = "wrong token";
          } else {
            auto verdict = self->accept(*hello, c);
            if (auto* why = std::get_if<std::string>(&verdict))
              refusal = *why;
            else
              handler = std::move(std::get<bulk_handler>(verdict));
          }
          if (!refusal.empty())
            self->say("bulk channel: refused a connection: " + refusal);
          auto reply = std::make_shared<std::vector<char>>(answer(refusal));
          asio::async_write(c->stream(), asio::buffer(*reply), [c, reply, handler, refusal](boost::system::error_code ec, size_t) mutable {
            if (ec || !refusal.empty())
              return c->end(refusal.empty() ? "the answer could not be sent" : refusal);
            c->start(std::move(*handler));
          });
        });
      });
    });
  }
};

bulk_server::bulk_server(bulk_io& io, bulk_security security, bulk_accept accept, uint64_t max_floats,
                         std::function<void(const std::string&)> log, const std::string& host)
  : impl_(std::make_shared<impl>(io.get(), std::move(security), std::move(accept), max_floats, std::move(log))) {
  if (impl_->security.tls.enabled())
    impl_->tls = make_tls_context(impl_->security.tls, true);
  tcp::endpoint at(asio::ip::make_address(host), 0);
  impl_->acceptor.open(at.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(at);
  impl_->acceptor.listen();
  asio::post(impl_->acceptor.get_executor(), [i = impl_] { i->next(); });
}

bulk_server::~bulk_server() {
  if (impl_->io.stopped()) {
    boost::system::error_code ignored;
    impl_->acceptor.close(ignored);
    return;
  }
  std::promise<void> done;
  asio::post(impl_->acceptor.get_executor(), [i = impl_, &done] {
    boost::system::error_code ignored;
    i->acceptor.close(ignored);
    done.set_value();
  });
  done.get_future().wait();
}

uint16_t bulk_server::port() const {
  return impl_->acceptor.local_endpoint().port();
}

// -- the client ----------------------------------------------------------------

namespace {

// A connect in progress. The caller may give up waiting (its deadline) while
// the io thread finishes it: whichever claims it first decides.
struct pending_connect {
  std::promise<bulk_connect_result> promise;
  std::atomic<int> state{0};  // 0: open, 1: answered, 2: abandoned
  void set_value(bulk_connect_result r) {
    int open = 0;
    if (state.compare_exchange_strong(open, 1)) {
      promise.set_value(std::move(r));
    } else if (r.link) {
      r.link->close();  // nobody waits for it any more
    }
  }
};

template <class Stream>
void greet_server(std::shared_ptr<connection<Stream>> c, const bulk_security& security, const std::vector<char>& hello,
                  bulk_handler handler, std::shared_ptr<pending_connect> result) {
  auto out = std::make_shared<std::vector<char>>(greeting(security.secret, hello));
  asio::async_write(c->stream(), asio::buffer(*out), [c, out, handler = std::move(handler), result](boost::system::error_code ec, size_t) mutable {
    if (ec)
      return result->set_value({nullptr, "the greeting could not be sent: " + ec.message()});
    auto head = std::make_shared<std::array<char, 5>>();
    asio::async_read(c->stream(), asio::buffer(*head), [c, head, handler = std::move(handler), result](boost::system::error_code ec, size_t) mutable {
      if (ec)
        return result->set_value({nullptr, "the server did not answer: " + ec.message()});
      auto len = std::min<uint32_t>(get<uint32_t>(head->data() + 1), max_hello);
      auto why = std::make_shared<std::string>(len, '\0');
      asio::async_read(c->stream(), asio::buffer(*why), [c, head, why, handler = std::move(handler), result](boost::system::error_code ec, size_t) mutable {
        if (ec || (*head)[0] != 1) {
          c->end("refused");
          return result->set_value({nullptr, ec ? "the server's answer broke off" : "refused: " + *why});
        }
        c->start(std::move(handler));
        result->set_value({c, ""});  // closes it again if the caller gave up
      });
    });
  });
}

}  // namespace

bulk_connect_result bulk_connect(bulk_io& io, const bulk_security& security, const std::string& host,
                                 uint16_t port, const std::vector<char>& hello, bulk_handler handler,
                                 uint64_t max_floats, int timeout_ms) {
  auto& ctx = io.get().io;
  std::shared_ptr<asio::ssl::context> tls;
  try {
    if (security.tls.enabled())
      tls = make_tls_context(security.tls, false);
  } catch (const std::exception& e) {
    return {nullptr, std::string("TLS set-up failed: ") + e.what()};
  }
  boost::system::error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (ec) {
    tcp::resolver resolver(ctx);
    auto found = resolver.resolve(host, std::to_string(port), ec);
    if (ec || found.empty())
      return {nullptr, "cannot resolve '" + host + "': " + ec.message()};
    address = found.begin()->endpoint().address();
  }
  auto result = std::make_shared<pending_connect>();
  auto future = result->promise.get_future();
  auto sec = std::make_shared<bulk_security>(security);
  auto hi = std::make_shared<std::vector<char>>(hello);
  auto* owner = &io.get();
  auto on_connected = [=, handler = std::move(handler)](tcp::socket s) mutable {
    s.set_option(tcp::no_delay(true));
    if (!tls) {
      auto c = std::make_shared<connection<tcp::socket>>(std::move(s), max_floats, owner->gate);
      owner->keep(c);
      greet_server(c, *sec, *hi, std::move(handler), result);
      return;
    }
    auto c = std::make_shared<connection<tls_stream>>(tls_stream(std::move(s), *tls), max_floats, owner->gate);
    owner->keep(c);
    c->stream().async_handshake(asio::ssl::stream_base::client, [=, handler = std::move(handler)](boost::system::error_code ec) mutable {
      if (ec) {
        c->end("TLS handshake failed");
        return result->set_value({nullptr, "TLS handshake failed: " + ec.message()});
      }
      greet_server(c, *sec, *hi, std::move(handler), result);
    });
  };
  auto socket = std::make_shared<tcp::socket>(ctx);
  socket->async_connect(tcp::endpoint(address, port), [=, on_connected = std::move(on_connected)](boost::system::error_code ec) mutable {
    if (ec)
      return result->set_value({nullptr, "cannot connect to " + host + ":" + std::to_string(port) + ": " + ec.message()});
    on_connected(std::move(*socket));
  });
  int open = 0;
  if (future.wait_for(std::chrono::milliseconds(timeout_ms)) != std::future_status::ready &&
      result->state.compare_exchange_strong(open, 2)) {
    asio::post(ctx, [socket] {
      boost::system::error_code ignored;
      socket->close(ignored);
    });
    return {nullptr, "no answer from " + host + ":" + std::to_string(port) + " within " +
                       std::to_string(timeout_ms) + " ms"};
  }
  return future.get();
}

}  // namespace syncpoint::cluster
