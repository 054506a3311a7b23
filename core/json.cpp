#include "core/json.hpp"

#include <cmath>
#include <cstdio>

namespace syncpoint::json {

std::string str(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string num(double x, int digits) {
  if (!std::isfinite(x))
    return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

std::string num(long long x) {
  return std::to_string(x);
}

object& object::raw(const std::string& key, const std::string& encoded) {
  if (body_.size() > 1)
    body_ += ", ";
  body_ += str(key) + ": " + encoded;
  return *this;
}

}  // namespace syncpoint::json
