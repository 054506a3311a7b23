#include "runtime/cluster/dashboard/http_server.hpp"

#include "runtime/cluster/dashboard/dashboard_site.hpp"
#include "runtime/cluster/net/file_limit.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <array>
#include <cstring>
#include <list>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>

namespace syncpoint::cluster {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// What the server may do to a session it did not start: close it to make room.
struct session_base {
  virtual ~session_base() = default;
  virtual void evict() = 0;
  virtual const boost::asio::ip::address& client() const = 0;
};

}  // namespace

struct http_server::impl {
  std::shared_ptr<dashboard_site> site;
  http_options opts;
  size_t cap = 0;  // max_connections, or less for the file limit
  std::shared_ptr<asio::ssl::context> tls;
  // The io thread's only (declared before `io`: sessions that end with it count down):
  size_t open = 0;                                   // connections now
  std::map<asio::ip::address, size_t> per_client;    // ... by client address
  std::list<std::weak_ptr<session_base>> unheard;    // ... that have sent no whole request yet, oldest first
  size_t refusing = 0;                               // refused ones still being told so (each holds a file)
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer retry{io};  // an accept that failed (no file descriptor left) is tried again after a pause
  std::thread thread;

  void log(const std::string& line) const {
    if (opts.log)
      opts.log(line);
  }
  void accept();
  // Closes the oldest connection that has asked nothing (from `from` only, when given); false: none.
  bool evict_oldest_unheard(const asio::ip::address* from = nullptr);
};

namespace {

// Ends a connection whose request may not have been read whole: no more to
// send, then what the client still sends is read and dropped for up to a
// second, so that closing does not reset the connection (a reset may
// discard the answer before the client reads it).
class drain : public std::enable_shared_from_this<drain> {
 public:
  drain(tcp::socket& socket, std::shared_ptr<void> owner)
      : socket_(socket), owner_(std::move(owner)), timer_(socket.get_executor()) {}
  void start() {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    timer_.expires_after(std::chrono::seconds(1));
    timer_.async_wait([self = shared_from_this()](beast::error_code) { self->close(); });
    read();
  }

 private:
  void read() {
    socket_.async_read_some(asio::buffer(buf_), [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec)  // the client closed too, or the timer closed the socket
        return self->close();
      self->read();
    });
  }
  void close() {
    timer_.cancel();
    beast::error_code ignored;
    socket_.close(ignored);
  }
  tcp::socket& socket_;
  std::shared_ptr<void> owner_;  // keeps the socket's owner alive
  asio::steady_timer timer_;
  std::array<char, 4096> buf_;
};

void drain_and_close(tcp::socket& socket, std::shared_ptr<void> owner) {
  std::make_shared<drain>(socket, std::move(owner))->start();
}

const char* canned_503 =
  "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 45\r\nConnection: close\r\n\r\n"
  "too many connections to the dashboard: later\n";
const char* canned_503_client =
  "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 56\r\nConnection: close\r\n\r\n"
  "too many connections to the dashboard from your address\n";

// Headers every answer carries: nothing is sniffed, framed or sent elsewhere.
template <class Message>
void harden(Message& m, bool page) {
  m.set("X-Content-Type-Options", "nosniff");
  m.set("Referrer-Policy", "no-referrer");
  if (page)
    m.set("Content-Security-Policy",
          "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
          "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
}

// One connection: read a request within the deadline, answer it, again while
// the client keeps it alive (up to 100 requests). It counts against the
// server's caps from its start until it ends or is evicted.
template <class Stream>
class session : public session_base, public std::enable_shared_from_this<session<Stream>> {
 public:
  template <class... Args>
  session(http_server::impl& server, asio::ip::address client, Args&&... args)
      : server_(server), client_(client), stream_(std::forward<Args>(args)...),
        buffer_(server.opts.header_limit + server.opts.body_limit) {
    ++server_.open;
    ++server_.per_client[client_];
  }
  ~session() override {
    heard();
    uncount();
  }

  void start() {
    place_ = server_.unheard.insert(server_.unheard.end(), this->weak_from_this());
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      read();
    } else {
      beast::get_lowest_layer(stream_).expires_after(server_.opts.header_timeout);
      deadline_set_ = true;
      stream_.async_handshake(asio::ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
        if (!ec)
          self->read();
      });
    }
  }

  const asio::ip::address& client() const override { return client_; }

  // Closed to make room for a newer connection: its place is free at once.
  void evict() override {
    heard();
    uncount();
    close();
  }

 private:
  // Its first request came whole (or it ends): no longer among those the server may evict.
  void heard() {
    if (place_) {
      server_.unheard.erase(*place_);
      place_.reset();
    }
  }

  void uncount() {
    if (!counted_)
      return;
    counted_ = false;
    --server_.open;
    auto i = server_.per_client.find(client_);
    if (i != server_.per_client.end() && --i->second == 0)
      server_.per_client.erase(i);
  }

  void read() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(server_.opts.header_limit));
    parser_->body_limit(server_.opts.body_limit);
    // A new connection has header_timeout for its first request, a kept-alive one idle_timeout for the next.
    if (served_ > 0)  // (the first request's deadline runs from the connection, its TLS handshake included)
      beast::get_lowest_layer(stream_).expires_after(server_.opts.idle_timeout);
    else if (!deadline_set_)
      beast::get_lowest_layer(stream_).expires_after(server_.opts.header_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (!ec)
      heard();
    if (ec == http::error::header_limit)
      return refuse(431, "the request's header is over " + std::to_string(server_.opts.header_limit) + " bytes");
    if (ec == http::error::body_limit)
      return refuse(413, "the request's body is over " + std::to_string(server_.opts.body_limit) + " bytes");
    if (ec == beast::error::timeout || ec == http::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::error::connection_reset || ec == asio::error::operation_aborted)
      return close();
    if (ec)
      return refuse(400, "a malformed request (" + ec.message() + ")");
    auto& req = parser_->get();
    http_request r{std::string(req.method_string()), std::string(req.target()),
                   std::string(req[http::field::authorization]), std::string(req[http::field::cookie]),
                   std::string(req[http::field::content_type]), req.body(), std::string(req[http::field::host])};
    bool keep = req.keep_alive() && ++served_ < 100;
    try {
      respond(server_.site->handle(r), req.version(), keep, req.method() == http::verb::head);
    } catch (const std::exception& e) {  // a bug of ours: the client hears so, the head goes on
      server_.log("an answer failed: " + std::string(e.what()));
      refuse(500, "the dashboard failed to answer this request");
    }
  }

  // An answer to a request that could not be read whole (or answered); then the connection ends.
  void refuse(int status, const std::string& why) {
    http_response r;
    r.status = status;
    r.body = why + "\n";
    refusing_ = true;
    respond(r, 11, false, false);
  }

  template <class Body>
  void fill(http::response<Body>& res, const http_response& answer, bool keep) {
    res.result(static_cast<unsigned>(answer.status));
    res.set(http::field::content_type, answer.content_type);
    for (auto& [k, v] : answer.headers)
      res.insert(k, v);
    harden(res, answer.content_type.rfind("text/html", 0) == 0);
    res.keep_alive(keep);
  }

  void respond(const http_response& answer, unsigned version, bool keep, bool head) {
    if (!answer.file.empty()) {
      http::file_body::value_type file;
      beast::error_code ec;
      file.open(answer.file.c_str(), beast::file_mode::scan, ec);
      if (ec) {
        http_response missing;
        missing.status = 404;
        missing.body = "the file is gone from the head's runs folder\n";
        return respond(missing, version, keep, head);
      }
      auto res = std::make_shared<http::response<http::file_body>>(http::status::ok, version);
      fill(*res, answer, keep);
      if (head) {
        res->content_length(file.size());
        auto empty = std::make_shared<http::response<http::empty_body>>(res->base());
        return send(empty, keep, server_.opts.write_timeout);
      }
      res->body() = std::move(file);
      res->prepare_payload();
      return send(res, keep, std::max<std::chrono::milliseconds>(server_.opts.write_timeout, std::chrono::minutes(5)));
    }
    auto res = std::make_shared<http::response<http::string_body>>(http::status::ok, version);
    fill(*res, answer, keep);
    res->body() = answer.body;
    res->prepare_payload();
    if (head) {
      auto empty = std::make_shared<http::response<http::empty_body>>(res->base());
      empty->content_length(answer.body.size());
      return send(empty, keep, server_.opts.write_timeout);
    }
    send(res, keep, server_.opts.write_timeout);
  }

  template <class Response>
  void send(std::shared_ptr<Response> res, bool keep, std::chrono::milliseconds timeout) {
    beast::get_lowest_layer(stream_).expires_after(timeout);
    http::async_write(stream_, *res, [self = this->shared_from_this(), res, keep](beast::error_code ec, size_t) {
      if (!ec && keep)
        self->read();
      else if (!ec && self->refusing_)
        drain_and_close(beast::get_lowest_layer(self->stream_).socket(), self);
      else
        self->close();
    });
  }

  void close() {
    beast::error_code ec;
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_both, ec);
    beast::get_lowest_layer(stream_).close();
  }

  http_server::impl& server_;
  asio::ip::address client_;
  std::optional<std::list<std::weak_ptr<session_base>>::iterator> place_;  // among the unheard
  bool counted_ = true;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  int served_ = 0;
  bool deadline_set_ = false;  // the first request's deadline runs (set before a TLS handshake)
  bool refusing_ = false;  // the request was not read whole: drain before closing
};

// Told 503 and closed (with TLS: closed, since answering needs the handshake
// the cap avoids). At most 256 are being told at once (each holds a file for
// up to a second): beyond, closed at once.
void refuse_connection(http_server::impl& server, tcp::socket socket, bool tls, const char* canned) {
  auto s = std::make_shared<tcp::socket>(std::move(socket));
  if (tls || server.refusing >= 256) {
    beast::error_code ignored;
    s->close(ignored);
    return;
  }
  ++server.refusing;
  auto done = std::shared_ptr<void>(nullptr, [&server](void*) { --server.refusing; });
  asio::async_write(*s, asio::buffer(canned, std::strlen(canned)), [s, done](beast::error_code, size_t) {
    drain_and_close(*s, std::make_shared<std::pair<std::shared_ptr<tcp::socket>, std::shared_ptr<void>>>(s, done));
  });
}

}  // namespace

bool http_server::impl::evict_oldest_unheard(const asio::ip::address* from) {
  for (auto i = unheard.begin(); i != unheard.end();) {
    auto oldest = i->lock();
    if (!oldest) {
      i = unheard.erase(i);
      continue;
    }
    if (from && oldest->client() != *from) {
      ++i;
      continue;
    }
    oldest->evict();  // takes itself off the list
    return true;
  }
  return false;
}

void http_server::impl::accept() {
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted)
      return;
    if (ec) {  // e.g. no file descriptor left: not again at once, which would spin
      log("cannot accept a connection: " + ec.message());
      retry.expires_after(std::chrono::milliseconds(100));
      retry.async_wait([this](beast::error_code e) {
        if (!e)
          accept();
      });
      return;
    }
    beast::error_code ignored;
    auto client = socket.remote_endpoint(ignored).address();
    // An address at its cap makes room from its own silent connections first: behind a reverse
    // proxy every user shares one address, and a slowloris through it must not lock them all out.
    auto mine = per_client.find(client);
    if (mine != per_client.end() && mine->second >= opts.max_per_client && !evict_oldest_unheard(&client))
      refuse_connection(*this, std::move(socket), tls != nullptr, canned_503_client);
    else if (open >= cap && !evict_oldest_unheard())  // every place is taken by a client that asked something
      refuse_connection(*this, std::move(socket), tls != nullptr, canned_503);
    else if (tls)
      std::make_shared<session<beast::ssl_stream<beast::tcp_stream>>>(*this, client, std::move(socket), *tls)->start();
    else
      std::make_shared<session<beast::tcp_stream>>(*this, client, std::move(socket))->start();
    accept();
  });
}

http_server::http_server(std::shared_ptr<dashboard_site> site, http_options opts) : impl_(std::make_shared<impl>()) {
  auto& m = *impl_;
  m.site = std::move(site);
  m.opts = std::move(opts);
  m.cap = connection_cap(m.opts.max_connections);  // nodes, the bulk channel, files: the rest
  if (m.opts.tls.enabled()) {
    m.tls = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
    m.tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
    m.tls->use_certificate_chain_file(m.opts.tls.cert);
    m.tls->use_private_key_file(m.opts.tls.key, asio::ssl::context::pem);
  }
  beast::error_code ec;
  auto address = asio::ip::make_address(m.opts.host == "localhost" ? "127.0.0.1" : m.opts.host, ec);
  if (ec)
    throw std::runtime_error("the dashboard cannot listen on '" + m.opts.host + "': not an IP address");
  tcp::endpoint at{address, m.opts.port};
  m.acceptor.open(at.protocol(), ec);
  if (!ec)
    m.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec)
    m.acceptor.bind(at, ec);
  if (!ec)
    m.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw std::runtime_error("the dashboard cannot listen on " + m.opts.host + ":" + std::to_string(m.opts.port) + ": " +
                             ec.message());
  m.accept();
  m.thread = std::thread([this] {
    for (;;) {
      try {
        impl_->io.run();
        return;  // stopped
      } catch (const std::exception& e) {  // a handler's: that connection is lost, the server goes on
        impl_->log("the dashboard's server: " + std::string(e.what()));
      }
    }
  });
}

http_server::~http_server() {
  impl_->io.stop();
  if (impl_->thread.joinable())
    impl_->thread.join();
}

uint16_t http_server::port() const { return impl_->acceptor.local_endpoint().port(); }

size_t http_server::max_connections() const { return impl_->cap; }

}  // namespace syncpoint::cluster
