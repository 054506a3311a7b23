// JSON for trace.jsonl, summary.json, run.json and the dashboard: rapidjson's
// Writer writes it (keys, strings and their escapes, null, nesting), with a
// space after each ',' and ':' (the files' layout since their first version:
// `{"a": 1, "b": [2, 3]}`), in a fixed key order. Numbers keep the files'
// own format, a given count of significant digits (rapidjson's Writer has
// only the shortest round trip), so the files stay byte for byte what they
// were. (cereal's JSON archive writes its own object layout and has no null.)
//
//   json::object().add("protocol", "bsp").add("accuracy", 0.8125).raw("evals", json::array(xs, encode)).done()
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace syncpoint::json {

/// A quoted, escaped JSON string.
std::string str(const std::string& s);
/// A number with up to `digits` significant digits; non-finite becomes null.
std::string num(double x, int digits = 10);
std::string num(long long x);

/// Builds `{"k": v, ...}`, in the order of the calls; `raw` takes a value
/// already encoded (a nested object's done(), an array, "null").
class object {
 public:
  object();
  object(object&&) noexcept;
  object& operator=(object&&) noexcept;
  ~object();

  object& raw(const std::string& key, const std::string& encoded);
  object& add(const std::string& key, const std::string& s);
  object& add(const std::string& key, const char* s) { return add(key, std::string(s)); }
  object& add(const std::string& key, double x);  ///< 10 significant digits; non-finite: null
  object& add(const std::string& key, long long x);
  object& add(const std::string& key, int x) { return add(key, static_cast<long long>(x)); }
  object& add(const std::string& key, unsigned long long x) { return add(key, static_cast<long long>(x)); }
  object& add(const std::string& key, bool b);
  /// The object's text; nothing may be added after it.
  std::string done();

 private:
  struct writer;
  std::unique_ptr<writer> w_;
};

/// `[v, ...]` of values already encoded.
std::string array_of(const std::vector<std::string>& encoded);

/// `[item(x), ...]` over `xs`, each item encoded by `item`.
template <class Range, class Encode>
std::string array(const Range& xs, Encode item) {
  std::vector<std::string> encoded;
  for (auto& x : xs)
    encoded.push_back(item(x));
  return array_of(encoded);
}

}  // namespace syncpoint::json
