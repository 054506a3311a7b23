#include "core/secret.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <stdexcept>

namespace syncpoint {

bool same_secret(const std::string& given, const std::string& secret) {
  // Lengths are not secret; the bytes are compared whole whatever they hold.
  return given.size() == secret.size() && CRYPTO_memcmp(given.data(), secret.data(), secret.size()) == 0;
}

bool same_key(uint64_t given, uint64_t key) {
  return CRYPTO_memcmp(&given, &key, sizeof key) == 0;
}

std::string secret_digest(const std::string& text) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(text.data(), text.size(), md, &n, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed (OpenSSL)");
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * n);
  for (unsigned int i = 0; i < n; ++i) {
    hex.push_back(digits[md[i] >> 4]);
    hex.push_back(digits[md[i] & 15]);
  }
  return hex;
}

}  // namespace syncpoint
