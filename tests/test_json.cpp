// core/json.hpp: rapidjson's Writer with the files' layout (", " and ": "),
// numbers in their significant digits, null for what is not finite; what
// it writes parses back (rapidjson's reader) to what was written.
#include "core/json.hpp"
#include "core/rapidjson.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace syncpoint;

TEST_CASE("json: objects and arrays in the files' layout, raw values as they are, null for non-finite numbers") {
  auto inner = json::object().add("x", 1).add("y", std::string("two")).done();
  auto text = json::object()
                .add("a", 0.1)
                .add("b", std::numeric_limits<double>::infinity())
                .add("n", static_cast<long long>(-42))
                .add("u", 18446744073709551ull)
                .add("t", true)
                .raw("inner", inner)
                .raw("list", json::array(std::vector<double>{1.5, 2, std::nan("")}, [](double v) { return json::num(v); }))
                .raw("none", "null")
                .raw("empty", json::array_of({}))
                .raw("compact", "[0,2,1]")
                .done();
  CHECK(text == "{\"a\": 0.1, \"b\": null, \"n\": -42, \"u\": 18446744073709551, \"t\": true, "
                "\"inner\": {\"x\": 1, \"y\": \"two\"}, \"list\": [1.5, 2, null], \"none\": null, \"empty\": [], \"compact\": [0,2,1]}");
  CHECK(json::num(2.0 / 3.0) == "0.6666666667");  // 10 significant digits by default
  CHECK(json::num(2.0 / 3.0, 17) == "0.66666666666666663");
}

TEST_CASE("json: strings are escaped as rapidjson escapes them, and read back the same, separators inside them kept") {
  std::string tricky = std::string("say \"hi\", then: a\\b\n\tc") + '\x01' + "\r ü";
  auto text = json::object().add("k, :\"", tricky).done();
  CHECK(text == "{\"k, :\\\"\": \"say \\\"hi\\\", then: a\\\\b\\n\\tc\\u0001\\r ü\"}");
  rapidjson::Document d;
  d.Parse<rapidjson::kParseNoFlags>(text.c_str(), text.size());
  REQUIRE_FALSE(d.HasParseError());
  REQUIRE(d.HasMember("k, :\""));
  CHECK(std::string(d["k, :\""].GetString(), d["k, :\""].GetStringLength()) == tricky);
  CHECK(json::str("a\"b") == "\"a\\\"b\"");
}
