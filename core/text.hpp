// Numbers as text for tables, reports and messages.
//
//   syncpoint::fmt("%.2f", 1.234) == "1.23"
#pragma once

#include <cstdio>
#include <string>

namespace syncpoint {

/// `x` printed with a printf format for one double (at most 63 characters).
inline std::string fmt(const char* format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

}  // namespace syncpoint
