#include "runtime/cluster/net/endpoint.hpp"

#include <boost/asio.hpp>

#include <algorithm>
#include <cstdlib>

namespace syncpoint::cluster {

std::optional<endpoint> parse_endpoint(const std::string& s) {
  auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size())
    return std::nullopt;
  auto host = s.substr(0, colon);
  if (host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  char* end = nullptr;
  long port = std::strtol(s.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port < 1 || port > 65535 || host.empty())
    return std::nullopt;
  return endpoint{host, static_cast<uint16_t>(port)};
}

std::string local_address_towards(const std::string& host, uint16_t port) {
  namespace asio = boost::asio;
  asio::io_context io;
  boost::system::error_code ec;
  asio::ip::udp::resolver resolver(io);
  auto found = resolver.resolve(host, std::to_string(port), ec);
  if (ec || found.empty())
    return "";
  asio::ip::udp::socket probe(io);
  probe.open(found.begin()->endpoint().protocol(), ec);
  if (!ec)
    probe.connect(found.begin()->endpoint(), ec);  // a UDP "connect" picks the route, sends nothing
  if (ec)
    return "";
  auto local = probe.local_endpoint(ec);
  return ec ? "" : local.address().to_string();
}

bool is_loopback(const std::string& host) {
  if (host == "localhost")
    return true;
  boost::system::error_code ec;
  auto a = boost::asio::ip::make_address(host, ec);
  return !ec && a.is_loopback();
}

bool resolves_to_loopback(const std::string& host) {
  if (is_loopback(host))
    return true;
  boost::asio::io_context io;
  boost::asio::ip::tcp::resolver resolver(io);
  boost::system::error_code ec;
  auto found = resolver.resolve(host, "", ec);
  if (ec || found.empty())
    return false;
  return std::all_of(found.begin(), found.end(), [](const auto& e) { return e.endpoint().address().is_loopback(); });
}

}  // namespace syncpoint::cluster
