#include "runtime/cluster/wire/connect.hpp"

#include <caf/io/middleman.hpp>
#include <caf/openssl/all.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <memory>

namespace syncpoint::cluster {

std::string error_words(caf::actor_system& sys, const caf::error& err) {
  // (match_element reads past the end of an empty context: a receiver-down error has none)
  if (!err.context().empty() && err.context().match_element<std::string>(0))
    return err.context().get_as<std::string>(0);
  return sys.render(err);
}

namespace {

std::string openssl_reason() {
  char buf[256] = "unknown reason";
  if (auto code = ERR_get_error())
    ERR_error_string_n(code, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

int no_passphrase(char*, int, int, void*) {
  return -1;  // an encrypted key is refused here, not prompted for on a network thread
}

}  // namespace

// CAF loads the files only when a connection arrives and throws on the
// middleman's thread if they are bad, which ends the process. So they are
// loaded here first, the way CAF will, and refused with OpenSSL's reason.
std::string check_tls(const tls_files& tls) {
  for (auto [file, flag] : {std::pair{&tls.cert, "--cert"}, std::pair{&tls.key, "--key"}, std::pair{&tls.ca, "--ca"}}) {
    if (file->empty())
      return std::string("--tls needs ") + flag + " FILE (and --cert, --key, --ca together)";
    if (!std::ifstream(*file))
      return std::string(flag) + " '" + *file + "' cannot be read";
  }
  std::unique_ptr<SSL_CTX, void (*)(SSL_CTX*)> ctx(SSL_CTX_new(TLS_method()), SSL_CTX_free);
  if (!ctx)
    return "OpenSSL cannot start: " + openssl_reason();
  SSL_CTX_set_default_passwd_cb(ctx.get(), no_passphrase);
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.cert.c_str()) != 1)
    return "--cert '" + tls.cert + "' is not a usable certificate: " + openssl_reason();
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), tls.key.c_str(), SSL_FILETYPE_PEM) != 1) {
    bool mismatch = ERR_GET_REASON(ERR_peek_error()) == X509_R_KEY_VALUES_MISMATCH;
    return "--key '" + tls.key + "' " +
           (mismatch ? "does not belong to --cert '" + tls.cert + "'"
                     : std::string("is not a usable private key (encrypted keys are not supported)")) +
           ": " + openssl_reason();
  }
  if (SSL_CTX_check_private_key(ctx.get()) != 1)
    return "--key '" + tls.key + "' does not belong to --cert '" + tls.cert + "': " + openssl_reason();
  if (SSL_CTX_load_verify_locations(ctx.get(), tls.ca.c_str(), nullptr) != 1)
    return "--ca '" + tls.ca + "' is not a usable CA certificate: " + openssl_reason();
  // libsyncpoint's wrappers (tls_errors.cpp) must be the SSL_read CAF calls;
  // without them one failed handshake would drop every other connection.
  Dl_info used{}, ours{};
  if (dladdr(dlsym(RTLD_DEFAULT, "SSL_read"), &used) == 0 || dladdr(reinterpret_cast<void*>(&check_tls), &ours) == 0 ||
      used.dli_fbase != ours.dli_fbase)
    return std::string("TLS is unsafe in this program: its SSL_read is libssl's, not libsyncpoint's fix "
                       "(link libsyncpoint before libssl; see runtime/cluster/net/tls_errors.cpp)");
  return "";
}

void configure_cluster(caf::actor_system_config& cfg, const tls_files& tls, size_t threads) {
  register_cluster_messages(cfg);
  // As in one process (runtime/job/job.cpp): a few coarse actors on one shared
  // queue. Work stealing's idle threads poll, and on a machine that runs a
  // head and nodes they take the cores the workers need (bench/ddp.sh:
  // 15k samples/s with it, 24k without). --scheduler.policy still chooses.
  if (!caf::get_if<caf::atom_value>(&cfg, "scheduler.policy"))
    cfg.set("scheduler.policy", caf::atom("sharing"));
  if (threads > 0 && !caf::get_if<size_t>(&cfg, "scheduler.max-threads"))
    cfg.set("scheduler.max-threads", threads);
  cfg.load<caf::io::middleman>();
  // Automatic connections open a second, plain listener on every interface:
  // that would bypass --host and --tls. Nodes always connect to the head.
  cfg.set("middleman.enable-automatic-connections", false);
  if (tls.enabled()) {
    cfg.load<caf::openssl::manager>();
    cfg.openssl_certificate = tls.cert;
    cfg.openssl_key = tls.key;
    cfg.openssl_cafile = tls.ca;
  }
  // Unless the command line chose (docs/cluster.md: a raised --middleman.connection-timeout).
  if (!caf::get_if<caf::timespan>(&cfg, "middleman.heartbeat-interval"))
    cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::seconds(1)});
  if (!caf::get_if<caf::timespan>(&cfg, "middleman.connection-timeout"))
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
