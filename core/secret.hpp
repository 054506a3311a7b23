// Secrets (tokens, keys, session ids) compared in constant time: how long a
// comparison takes says nothing about how much of a guess was right.
//
//   if (!same_secret(given, token)) refuse();
#pragma once

#include <cstdint>
#include <string>

namespace syncpoint {

/// Whether `given` equals `secret`, in time that depends on their lengths only
/// (OpenSSL's CRYPTO_memcmp).
bool same_secret(const std::string& given, const std::string& secret);

/// Whether two 64-bit keys are equal, in constant time.
bool same_key(uint64_t given, uint64_t key);

/// SHA-256 of `text`, in hex: what to keep of a secret that is looked up by its value.
std::string secret_digest(const std::string& text);

}  // namespace syncpoint
