// Numbers and lists as text for tables, reports and messages.
//
//   syncpoint::fmt("%.2f", 1.234) == "1.23"
//   syncpoint::or_list({"same", "async"}) == "same or async"
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace syncpoint {

/// `x` printed with a printf format for one double (at most 63 characters).
inline std::string fmt(const char* format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

/// "a", "a or b", "a, b or c": the choices a refusal names.
inline std::string or_list(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
  return out;
}

}  // namespace syncpoint
