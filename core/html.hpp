// Text in HTML: the comparison report (cli/) and the dashboard's pages
// (runtime/cluster/) put words that came from runs and peers into markup.
#pragma once

#include <string>

namespace syncpoint {

/// `s` with <, >, &, ' and " escaped: safe as element text and as a quoted attribute.
inline std::string escape_html(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\'': out += "&#39;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace syncpoint
