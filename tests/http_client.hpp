// A small HTTP client for the dashboard's tests: it sends the bytes it is
// given (well formed or not) and reads the answer until the server closes
// the connection, with a deadline for a hang. And the same over TLS.
#pragma once

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace syncpoint::testing {

struct http_reply {
  int status = 0;  ///< 0: the server closed without an answer
  std::map<std::string, std::string> headers;  ///< names in lower case
  std::string body;
  std::string header(const std::string& name) const {
    auto i = headers.find(name);
    return i == headers.end() ? "" : i->second;
  }
};

inline http_reply parse_reply(const std::string& raw) {
  http_reply r;
  auto end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || end == std::string::npos)
    return r;
  r.status = std::atoi(raw.c_str() + 9);
  size_t at = raw.find("\r\n") + 2;
  while (at < end) {
    auto eol = raw.find("\r\n", at);
    auto line = raw.substr(at, eol - at);
    auto colon = line.find(':');
    auto name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    auto value = colon == std::string::npos ? "" : line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    r.headers[name] = r.headers.count(name) ? r.headers[name] + ", " + value : value;
    at = eol + 2;
  }
  r.body = raw.substr(end + 4);
  return r;
}

/// A connected socket to 127.0.0.1:port whose reads give up after `timeout`;
/// -1 if refused. `from`: the loopback address it comes from (any of
/// 127.0.0.0/8, as a client of its own), or the kernel's choice.
inline int http_connect(int port, std::chrono::seconds timeout = std::chrono::seconds(120), const char* from = nullptr) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    throw std::runtime_error("no socket: too many open files?");
  timeval tv{static_cast<time_t>(timeout.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (from) {
    sockaddr_in me{};
    me.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &me.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&me), sizeof me) != 0) {
      ::close(fd);
      throw std::runtime_error(std::string("cannot bind a client socket to ") + from);
    }
  }
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(static_cast<uint16_t>(port));
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline void http_send(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    auto n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0)
      return;  // the server closed it: what it answered can still be read
    sent += static_cast<size_t>(n);
  }
}

/// Everything the server sends until it closes the connection (or the read deadline passes).
inline std::string http_read_all(int fd) {
  std::string out;
  char buf[16384];
  for (;;) {
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0)
      break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

/// Sends `raw` (from the address `from`, or 127.0.0.1) and reads the answer until the server closes the connection.
inline http_reply http_raw(int port, const std::string& raw, const char* from = nullptr) {
  int fd = http_connect(port, std::chrono::seconds(120), from);
  if (fd < 0)
    throw std::runtime_error("cannot connect to the dashboard on port " + std::to_string(port));
  http_send(fd, raw);
  auto reply = parse_reply(http_read_all(fd));
  ::close(fd);
  return reply;
}

/// `method target` with `headers` ("Name: value") and `body`, on a connection of its own.
inline http_reply http_request_to(int port, const std::string& method, const std::string& target,
                                  const std::vector<std::string>& headers = {}, const std::string& body = "",
                                  const char* from = nullptr) {
  std::string raw = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (auto& h : headers)
    raw += h + "\r\n";
  if (!body.empty() || method == "POST")
    raw += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  return http_raw(port, raw + "\r\n" + body, from);
}

inline http_reply http_get(int port, const std::string& target, const std::vector<std::string>& headers = {},
                           const char* from = nullptr) {
  return http_request_to(port, "GET", target, headers, "", from);
}

/// GET over TLS, checking the server's certificate against `ca_file` (not its name).
inline http_reply https_get(int port, const std::string& target, const std::string& ca_file) {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  ctx.load_verify_file(ca_file);
  ctx.set_verify_mode(asio::ssl::verify_peer);
  asio::ssl::stream<asio::ip::tcp::socket> s(io, ctx);
  s.next_layer().connect({asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)});
  timeval tv{120, 0};
  ::setsockopt(s.next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  s.handshake(asio::ssl::stream_base::client);
  std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  asio::write(s, asio::buffer(req));
  std::string out;
  boost::system::error_code ec;
  char buf[16384];
  for (;;) {
    auto n = s.read_some(asio::buffer(buf), ec);
    out.append(buf, n);
    if (ec)
      break;  // eof, or the server's close without close_notify
  }
  return parse_reply(out);
}

}  // namespace syncpoint::testing
