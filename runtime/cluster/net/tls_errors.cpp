// A fix for CAF 0.17's OpenSSL module, which never clears OpenSSL's error
// queue. That queue is per thread, and the middleman's one thread serves every
// connection. So after one peer fails its TLS handshake (a certificate from
// another CA, or no TLS at all), the errors it left make SSL_get_error report
// SSL_ERROR_SSL for the next would-block read on any other connection, and
// CAF drops that connection too: one stranger knocking disconnected every node
// (measured: tests/test_cluster.cpp, "tls"). OpenSSL's rule is to clear the
// queue before each I/O call whose result goes to SSL_get_error; these
// wrappers do that and then call OpenSSL's own function. They interpose
// because libsyncpoint precedes libssl in the process's symbol search order
// (check_tls refuses to run TLS if it does not). They apply to the whole
// process, libssl's other users included; clearing the queue before I/O is
// OpenSSL's own rule, so that is harmless.
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

namespace {

template <class Fn>
Fn real(const char* name) {
  // libcaf_openssl asks for version OPENSSL_3.0.0 of each symbol; so do we.
  void* f = dlvsym(RTLD_NEXT, name, "OPENSSL_3.0.0");
  if (f == nullptr)
    f = dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    std::fprintf(stderr, "syncpoint: libssl's %s is missing\n", name);
    std::abort();
  }
  return reinterpret_cast<Fn>(f);
}

}  // namespace

extern "C" {

int SSL_read(SSL* ssl, void* buf, int num) {
  static auto f = real<int (*)(SSL*, void*, int)>("SSL_read");
  ERR_clear_error();
  return f(ssl, buf, num);
}

int SSL_write(SSL* ssl, const void* buf, int num) {
  static auto f = real<int (*)(SSL*, const void*, int)>("SSL_write");
  ERR_clear_error();
  return f(ssl, buf, num);
}

int SSL_accept(SSL* ssl) {
  static auto f = real<int (*)(SSL*)>("SSL_accept");
  ERR_clear_error();
  return f(ssl);
}

int SSL_connect(SSL* ssl) {
  static auto f = real<int (*)(SSL*)>("SSL_connect");
  ERR_clear_error();
  return f(ssl);
}

}  // extern "C"
