// Just enough JSON writing for trace.jsonl and summary.json: fixed key order,
// `null` for absent values, numbers printed the same way on every machine.
// (cereal's JSON archive writes its own object layout and has no null.)
#pragma once

#include <string>

namespace syncpoint::json {

/// A quoted, escaped JSON string.
std::string str(const std::string& s);
/// A number with up to `digits` significant digits; non-finite becomes null.
std::string num(double x, int digits = 10);
std::string num(long long x);

/// Builds `{"k": v, ...}` from already-encoded values.
class object {
 public:
  object& raw(const std::string& key, const std::string& encoded);
  object& add(const std::string& key, const std::string& s) { return raw(key, str(s)); }
  object& add(const std::string& key, const char* s) { return raw(key, str(s)); }
  object& add(const std::string& key, double x) { return raw(key, num(x)); }
  object& add(const std::string& key, long long x) { return raw(key, num(x)); }
  object& add(const std::string& key, int x) { return raw(key, num(static_cast<long long>(x))); }
  object& add(const std::string& key, unsigned long long x) {
    return raw(key, num(static_cast<long long>(x)));
  }
  object& add(const std::string& key, bool b) { return raw(key, b ? "true" : "false"); }
  std::string done() const { return body_ + "}"; }

 private:
  std::string body_ = "{";
};

/// `[item(x), ...]` over `xs`, each item already encoded.
template <class Range, class Encode>
std::string array(const Range& xs, Encode item) {
  std::string out = "[";
  for (auto& x : xs) {
    if (out.size() > 1)
      out += ", ";
    out += item(x);
  }
  return out + "]";
}

}  // namespace syncpoint::json
