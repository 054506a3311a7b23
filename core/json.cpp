// core/json.hpp through rapidjson's Writer. Its output stream adds the
// space after a ',' or ':' between values; a value handed in already
// encoded (raw) is placed by the Writer and copied as it is (a compact
// array stays compact).
#include "core/json.hpp"
#include "core/rapidjson.hpp"

#include <rapidjson/writer.h>

#include <cmath>
#include <cstdio>

namespace syncpoint::json {

namespace {

// What the Writer writes into: a string, with ", " and ": " for the
// separators outside strings (and one space, where a raw value has its own).
struct spaced_text {
  using Ch = char;
  std::string text;
  bool in_string = false, escaped = false, space_due = false;

  void Put(char c) {
    if (space_due) {
      space_due = false;
      if (c != ' ')
        text += ' ';
    }
    text += c;
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == ',' || c == ':') {
      space_due = true;
    }
  }
  void Flush() {}

  // A whole value, as it is: after the space a separator asked for.
  void verbatim(const std::string& value) {
    if (space_due && !value.empty() && value.front() != ' ')
      text += ' ';
    space_due = false;
    text += value;
  }
};

using text_writer = rapidjson::Writer<spaced_text>;

// The type a raw value's text is (the Writer checks only that the root is
// an object or an array).
rapidjson::Type type_of(const std::string& encoded) {
  switch (encoded.empty() ? ' ' : encoded.front()) {
    case '{': return rapidjson::kObjectType;
    case '[': return rapidjson::kArrayType;
    case '"': return rapidjson::kStringType;
    case 'n': return rapidjson::kNullType;
    case 't': return rapidjson::kTrueType;
    case 'f': return rapidjson::kFalseType;
    default: return rapidjson::kNumberType;
  }
}

// The Writer places it (the separator before it, its count in the object
// or array); its text goes in as it is.
void raw_value(text_writer& w, spaced_text& out, const std::string& encoded) {
  w.RawValue("", 0, type_of(encoded));
  out.verbatim(encoded);
}

}  // namespace

struct object::writer {
  spaced_text out;
  text_writer w{out};
  writer() { w.StartObject(); }
};

std::string str(const std::string& s) {
  spaced_text out;
  text_writer w(out);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return out.text;
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

object::object() : w_(std::make_unique<writer>()) {}
object::object(object&&) noexcept = default;
object& object::operator=(object&&) noexcept = default;
object::~object() = default;

object& object::raw(const std::string& key, const std::string& encoded) {
  w_->w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  raw_value(w_->w, w_->out, encoded);
  return *this;
}

object& object::add(const std::string& key, const std::string& s) {
  w_->w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w_->w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return *this;
}

object& object::add(const std::string& key, double x) {
  return raw(key, num(x));
}

object& object::add(const std::string& key, long long x) {
  w_->w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w_->w.Int64(x);
  return *this;
}

object& object::add(const std::string& key, bool b) {
  w_->w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w_->w.Bool(b);
  return *this;
}

std::string object::done() {
  w_->w.EndObject();
  return std::move(w_->out.text);
}

std::string array_of(const std::vector<std::string>& encoded) {
  spaced_text out;
  text_writer w(out);
  w.StartArray();
  for (auto& e : encoded)
    raw_value(w, out, e);
  w.EndArray();
  return out.text;
}

}  // namespace syncpoint::json
