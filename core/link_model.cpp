#include "core/link_model.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace syncpoint {

std::optional<double> parse_bandwidth(const std::string& text) {
  const char* s = text.c_str();
  char* end = nullptr;
  double value = std::strtod(s, &end);
  if (end == s || !std::isfinite(value) || value < 0)
    return std::nullopt;
  std::string unit;
  for (const char* p = end; *p; ++p)
    if (!std::isspace(static_cast<unsigned char>(*p)))
      unit += *p;
  if (unit.empty())
    return value;
  // "/s" or "ps" ends a unit ("MB/s", "Mbps"); a bare "MB" means per second too.
  if (unit.size() > 2 && unit.compare(unit.size() - 2, 2, "/s") == 0)
    unit.resize(unit.size() - 2);
  else if (unit.size() > 2 && unit.compare(unit.size() - 2, 2, "ps") == 0)
    unit.resize(unit.size() - 2);
  double scale = 1;
  size_t i = 0;
  switch (unit[0]) {
    case 'k': case 'K': scale = 1e3; i = 1; break;
    case 'M': scale = 1e6; i = 1; break;
    case 'G': scale = 1e9; i = 1; break;
    case 'T': scale = 1e12; i = 1; break;
    default: break;
  }
  if (i == 1 && unit.size() > 1 && unit[1] == 'i') {  // binary prefix
    scale = std::pow(1024.0, scale == 1e3 ? 1 : scale == 1e6 ? 2 : scale == 1e9 ? 3 : 4);
    i = 2;
  }
  auto rest = unit.substr(i);
  if (rest == "B")
    return value * scale;
  if (rest == "bit" || rest == "b")
    return value * scale / 8;
  return std::nullopt;
}

}  // namespace syncpoint
