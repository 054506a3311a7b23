// TLS on every connection of a cluster process (caf::openssl): this
// process's certificate and private key (PEM), and the CA certificate that
// must have signed every peer's. Each side checks the other's certificate,
// so a peer without one signed by the CA cannot connect at all.
#pragma once

#include <string>

namespace syncpoint::cluster {

struct tls_files {
  std::string cert, key, ca;
  bool enabled() const { return !cert.empty() || !key.empty() || !ca.empty(); }
};

}  // namespace syncpoint::cluster
