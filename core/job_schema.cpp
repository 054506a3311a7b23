#include "core/job_schema.hpp"

#include "core/text.hpp"

#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace syncpoint {

namespace {

// 4096, 0.999, 1e9: as a person writes the bound.
std::string bound_text(double x) {
  if (x >= 1e6 && std::pow(10.0, std::round(std::log10(x))) == x)
    return "1e" + std::to_string(static_cast<int>(std::round(std::log10(x))));
  return fmt("%.10g", x);
}

bool integral(const job_field& f) {
  return std::visit([](auto m) { return std::is_integral_v<typename decltype(m)::type>; }, f.member) &&
         !std::holds_alternative<field_ref<bool>>(f.member);
}

// "in 1..4096", "0, 1 or 2", "in [0, 1)", ">= 0", "a positive number".
std::string range_words(const job_field& f) {
  bool low = std::isfinite(f.lowest), high = std::isfinite(f.highest);
  if (integral(f) && low && high) {
    if (f.highest - f.lowest > 2)
      return "in " + bound_text(f.lowest) + ".." + bound_text(f.highest);
    std::vector<std::string> each;
    for (double v = f.lowest; v <= f.highest; ++v)
      each.push_back(bound_text(v));
    return or_list(each);
  }
  if (low && high)
    return "in " + std::string(f.lowest_open ? "(" : "[") + bound_text(f.lowest) + ", " + bound_text(f.highest) +
           (f.highest_open ? ")" : "]");
  if (low)
    return f.lowest_open && f.lowest == 0 ? "a positive number"
                                           : (f.lowest_open ? "> " : ">= ") + bound_text(f.lowest);
  return (f.highest_open ? "< " : "<= ") + bound_text(f.highest);
}

bool within(const job_field& f, double x) {
  return std::isfinite(x) && (f.lowest_open ? x > f.lowest : x >= f.lowest) &&
         (f.highest_open ? x < f.highest : x <= f.highest);
}

std::string named(const job_field& f) {
  return f.option.empty() ? f.key : "--" + f.option;
}

}  // namespace

bool job_field::ranged() const {
  return std::isfinite(lowest) || std::isfinite(highest);
}

const job_field& job_field_named(const std::string& key) {
  for (auto& f : job_fields())
    if (f.key == key)
      return f;
  throw std::out_of_range("job_config has no field '" + key + "'");
}

std::string field_text(const job_config& cfg, const job_field& f) {
  return std::visit(
    [&](auto m) -> std::string {
      auto& v = m.of(cfg);
      using T = typename decltype(m)::type;
      if constexpr (std::is_same_v<T, bool>) {
        return v ? "true" : "false";
      } else if constexpr (std::is_integral_v<T>) {
        return std::to_string(v);
      } else if constexpr (std::is_same_v<T, double>) {
        return fmt("%.10g", v);
      } else if constexpr (std::is_same_v<T, std::string>) {
        return v;
      } else if constexpr (std::is_same_v<T, std::vector<double>>) {
        std::string out;
        for (double x : v)
          out += (out.empty() ? "" : ",") + fmt("%.10g", x);
        return out;
      } else if constexpr (std::is_same_v<T, clock_kind>) {
        return to_string(v);
      } else {
        std::string out;
        for (auto& [name, value] : v.values())
          out += (out.empty() ? "" : ",") + name + "=" + value;
        return out;
      }
    },
    f.member);
}

std::string default_text(const job_field& f, const job_config& defaults) {
  auto text = field_text(defaults, f);
  if (std::holds_alternative<field_ref<bool>>(f.member))
    return text == "true" ? "on" : "";
  if (f.none_means.empty())
    return text;
  if (text.empty())
    return f.none_means;
  if (text == "0" || text == "-1")
    return text + ": " + f.none_means;
  return text;
}

void check_field_ranges(const job_config& cfg) {
  for (auto& f : job_fields()) {
    if (f.ranged()) {
      double x = std::visit(
        [&](auto m) -> double {
          using T = typename decltype(m)::type;
          if constexpr (std::is_arithmetic_v<T>)
            return static_cast<double>(m.of(cfg));
          else
            throw std::logic_error("job field '" + f.key + "' has a range but is no number");
        },
        f.member);
      if (within(f, x))
        continue;
      bool zero_allowed = within(f, 0);
      throw config_error(named(f) + " must be " + range_words(f) + (f.unit.empty() ? "" : " " + f.unit) +
                         (zero_allowed && !f.none_means.empty() ? " (0: " + f.none_means + ")" : ""));
    }
    if (!f.choices.empty()) {
      auto text = field_text(cfg, f);
      bool known = false;
      for (auto& c : f.choices)
        known = known || c == text;
      if (!known)
        throw config_error(named(f) + " must be " + or_list(f.choices) + ", not '" + text + "'");
    }
  }
}

}  // namespace syncpoint
