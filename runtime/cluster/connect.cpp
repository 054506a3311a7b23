#include "runtime/cluster/connect.hpp"

#include <caf/io/middleman.hpp>
#include <caf/openssl/all.hpp>

#include <cstdlib>
#include <fstream>

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

std::string check_tls(const tls_files& tls) {
  for (auto [file, flag] : {std::pair{&tls.cert, "--cert"}, std::pair{&tls.key, "--key"}, std::pair{&tls.ca, "--ca"}}) {
    if (file->empty())
      return std::string("--tls needs ") + flag + " FILE (and --cert, --key, --ca together)";
    std::ifstream in(*file);
    std::string line;
    if (!in || !std::getline(in, line))
      return std::string(flag) + " '" + *file + "' cannot be read";
    if (line.rfind("-----BEGIN", 0) != 0)
      return std::string(flag) + " '" + *file + "' is not a PEM file (it does not start with -----BEGIN)";
  }
  return "";
}

void configure_cluster(caf::actor_system_config& cfg, const tls_files& tls) {
  register_cluster_messages(cfg);
  cfg.load<caf::io::middleman>();
  if (tls.enabled()) {
    cfg.load<caf::openssl::manager>();
    cfg.openssl_certificate = tls.cert;
    cfg.openssl_key = tls.key;
    cfg.openssl_cafile = tls.ca;
  }
  cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::seconds(1)});
  cfg.set("middleman.connection-timeout", caf::timespan{std::chrono::seconds(3)});
  auto ids = caf::get_if<std::vector<std::string>>(&cfg, "middleman.app-identifiers");
  if (!ids || *ids == std::vector<std::string>{"generic-caf-app"})  // unless the user chose one
    cfg.set("middleman.app-identifiers",
            std::vector<std::string>{"syncpoint-" + schema_fingerprint()});
}

caf::expected<uint16_t> publish_head(caf::actor_system& sys, const head_actor& head, uint16_t port,
                                     const std::string& host) {
  if (sys.has_openssl_manager())
    return caf::openssl::publish(head, port, host.c_str(), true);
  return sys.middleman().publish(head, port, host.c_str(), true);
}

caf::expected<head_actor> connect_head(caf::actor_system& sys, const endpoint& at,
                                       caf::timespan timeout) {
  caf::scoped_actor self{sys};
  caf::expected<head_actor> result{caf::sec::runtime_error};
  auto where = at.host + ":" + std::to_string(at.port);
  bool tls = sys.has_openssl_manager();
  auto mm = tls ? sys.openssl_manager().actor_handle() : sys.middleman().actor_handle();
  self->request(mm, timeout, caf::connect_atom::value, at.host, at.port)
    .receive(
      [&](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>& ifs) {
        if (!ptr)
          result = caf::make_error(caf::sec::runtime_error,
                                   "nothing is published at " + where + " (is it a syncpoint head?)");
        else if (!sys.assignable<head_actor>(ifs))
          result = caf::make_error(caf::sec::runtime_error,
                                   "the actor at " + where +
                                     " has another interface than this build's head "
                                     "(a different syncpoint version?)");
        else
          result = caf::actor_cast<head_actor>(std::move(ptr));
      },
      [&](caf::error& err) {
        std::string why;
        if (err == caf::sec::request_timeout || err == caf::sec::connection_timeout)
          why = "no syncpoint head answered at " + where + " within " +
                std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout).count()) +
                " s (wrong port, a firewall, or not a syncpoint head" +
                (tls ? "; with --tls also: the head has no TLS, or refused this certificate)" : ")");
        else if (err == caf::sec::incompatible_application_ids)
          why = "the head at " + where +
                " refused this process: CAF's application identifiers differ (another "
                "application, or a syncpoint built from another message schema)";
        else if (err == caf::sec::disconnect_during_handshake)
          why = "the head at " + where + " closed the connection during the handshake" +
                (tls ? std::string(": it does not accept this certificate (not signed by its --ca), or it does "
                                   "not use TLS")
                     : std::string(": it may require TLS (--tls --cert --key --ca)"));
        else if (err == caf::sec::incompatible_versions)
          why = "the head at " + where + " refused this process: another CAF version";
        else if (err == caf::sec::cannot_connect_to_node)
          why = "cannot connect to " + where +
                (tls ? " (no head listening there, or the TLS handshake failed: a certificate not signed by "
                       "the other side's --ca, or a head without --tls)"
                     : " (no head listening there?)");
        else
          why = "cannot reach the head at " + where + ": " + sys.render(err);
        result = caf::make_error(caf::sec::runtime_error, why);
      });
  return result;
}

}  // namespace syncpoint::cluster
