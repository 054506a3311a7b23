// protocol_options: values by name, read through the type a protocol declared.
#include <syncpoint/protocol.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace syncpoint {

namespace {

const std::string& value_of(const std::map<std::string, std::string>& values, const std::string& name) {
  auto i = values.find(name);
  if (i == values.end())
    throw std::invalid_argument("protocol option '" + name +
                                "' is not set (is it declared by this protocol?)");
  return i->second;
}

}  // namespace

protocol_options& protocol_options::set(const std::string& name, const std::string& value) {
  values_[name] = value;
  return *this;
}

protocol_options& protocol_options::set(const std::string& name, long long value) {
  return set(name, std::to_string(value));
}

protocol_options& protocol_options::set(const std::string& name, double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  return set(name, std::string(buf));
}

long long protocol_options::integer(const std::string& name) const {
  return std::strtoll(value_of(values_, name).c_str(), nullptr, 10);
}

double protocol_options::real(const std::string& name) const {
  return std::strtod(value_of(values_, name).c_str(), nullptr);
}

const std::string& protocol_options::text(const std::string& name) const {
  return value_of(values_, name);
}

/// Checks one value against its declaration; "" if fine, else what is wrong.
std::string check_option_value(const option_spec& spec, const std::string& value) {
  auto flag = "--" + spec.name + "=" + value;
  auto range = [&](double x) -> std::string {
    if (x < spec.min || x > spec.max) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%g..%g", spec.min, spec.max);
      return "invalid value in '" + flag + "' (must be in " + buf + ")";
    }
    return {};
  };
  switch (spec.type) {
    case option_spec::kind::integer: {
      char* end = nullptr;
      errno = 0;
      long long x = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno == ERANGE)
        return "invalid value in '" + flag + "' (expected an integer)";
      return range(static_cast<double>(x));
    }
    case option_spec::kind::real: {
      char* end = nullptr;
      double x = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !std::isfinite(x))
        return "invalid value in '" + flag + "' (expected a number)";
      return range(x);
    }
    case option_spec::kind::text: {
      if (spec.choices.empty())
        return {};
      std::string valid;
      for (auto& c : spec.choices) {
        if (c == value)
          return {};
        valid += (valid.empty() ? "" : ", ") + c;
      }
      return "invalid value in '" + flag + "' (valid: " + valid + ")";
    }
  }
  return {};
}

}  // namespace syncpoint
