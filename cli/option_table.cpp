#include "cli/option_table.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace syncpoint::cli {

namespace {

// Thrown from a value's check, through CLI11, to parse_args: CLI11 catches only its own ValidationError
// there, and that would add its own words to ours.
struct refusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Whether a word is an option rather than a value: "--x", "-x"; "-5" and "-.5" are numbers.
bool is_option_word(const std::string& s) {
  return s.size() >= 2 && s[0] == '-' && !std::isdigit(static_cast<unsigned char>(s[1])) && s[1] != '.';
}

// A flag's value in words, or nothing.
std::optional<bool> bool_word(const std::string& v) {
  if (v == "true" || v == "1" || v == "on")
    return true;
  if (v == "false" || v == "0" || v == "off")
    return false;
  return std::nullopt;
}

// CAF's "global {\n  workers = 3\n}" as the INI sections CLI11 reads ("[global]").
std::string braces_as_sections(const std::string& text) {
  std::istringstream in(text);
  std::string out, line;
  std::vector<std::string> open;
  auto section = [&] {
    std::string name;
    for (auto& s : open)
      name += (name.empty() ? "" : ".") + s;
    return "[" + (name.empty() ? std::string("default") : name) + "]\n";
  };
  while (std::getline(in, line)) {
    auto t = CLI::detail::trim_copy(line, " \t\r");
    if (t.size() > 1 && t.back() == '{' && t.find('=') == std::string::npos) {
      open.push_back(CLI::detail::trim_copy(t.substr(0, t.size() - 1), " \t\r"));
      out += section();
    } else if (t == "}" && !open.empty()) {
      open.pop_back();
      out += section();
    } else {
      out += line + "\n";
    }
  }
  return out;
}

// The argument CAF's error names ("\"argument\" = \"--x=1\"" in its rendering).
std::string argument_of(const std::string& rendered) {
  auto key = std::string("\"argument\" = \"");
  auto b = rendered.find(key);
  if (b == std::string::npos)
    return {};
  b += key.size();
  auto e = rendered.find('"', b);
  return rendered.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

}  // namespace

option_table::option_table(const std::string& command) : app_("", "syncpoint " + command) {
  app_.set_help_flag();  // --help is ours: it wins over every other argument (parse_args)
  add(config_file_, "config-file", "read these options from FILE, one 'name = value' a line");
}

option_table& option_table::group(const std::string& name) {
  group_ = name;
  return *this;
}

std::string option_table::cli_names(const std::string& names) {
  auto comma = names.find(',');
  if (comma == std::string::npos)
    return "--" + names;
  return "--" + names.substr(0, comma) + ",-" + names.substr(comma + 1);
}

void option_table::declare(CLI::Option* opt, const std::string& names, value_kind kind, int64_t lowest, uint64_t highest) {
  entry e;
  auto comma = names.find(',');
  e.name = names.substr(0, comma);
  if (comma != std::string::npos)
    e.short_name = names[comma + 1];
  e.kind = kind;
  e.group = group_;
  e.option = opt;
  entries_.push_back(e);
  opt->group(group_);
  if (kind == value_kind::flag)
    return;
  opt->type_name(kind == value_kind::integer ? "N" : kind == value_kind::number ? "NUMBER" : "VALUE");
  opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // the last word: a later one, or the command line's
  if (kind == value_kind::text)
    return;
  auto name = e.name;
  // CLI11 reads integers in any base ("010" is 8) and unsigned ones from "-3": the value is checked here,
  // in decimal and in the variable's range, and handed on in the form CLI11 reads as meant.
  opt->transform(CLI::Validator(
    [this, name, kind, lowest, highest](std::string& text) -> std::string {
      auto& e = *find(name);
      auto* end = text.data() + text.size();
      if (kind == value_kind::integer) {
        bool negative = !text.empty() && text[0] == '-';
        int64_t below = 0;
        uint64_t above = 0;
        auto [p, ec] = negative ? std::from_chars(text.data(), end, below) : std::from_chars(text.data(), end, above);
        if (ec != std::errc() || p != end || text.empty() || (negative && below < lowest) || (!negative && above > highest))
          throw refusal(value_refusal(e, text));
        text = negative ? std::to_string(below) : std::to_string(above);
      } else {
        char* stop = nullptr;
        std::strtod(text.c_str(), &stop);
        if (text.empty() || stop != text.c_str() + text.size())
          throw refusal(value_refusal(e, text));
      }
      return {};
    },
    ""));
}

option_table& option_table::add(bool& value, const std::string& names, const std::string& help) {
  declare(app_.add_flag(cli_names(names), value, help), names, value_kind::flag);
  return *this;
}

option_table& option_table::add(std::vector<std::string>& values, const std::string& names, const std::string& help) {
  auto* opt = app_.add_option(cli_names(names), values, help);
  declare(opt, names, value_kind::text);
  opt->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return *this;
}

option_table& option_table::bare_means(const std::string& name, const std::string& value) {
  bare_[name] = value;
  return *this;
}

option_table& option_table::expects(const std::string& name, const std::string& words) {
  expects_[name] = words;
  return *this;
}

option_table& option_table::alias(const std::string& name, const std::string& other) {
  aliases_[other] = name;
  return *this;
}

option_table& option_table::operands(std::vector<std::string>& into) {
  operands_ = &into;
  return *this;
}

option_table& option_table::about(const std::string& text) {
  about_ = text;
  return *this;
}

option_table& option_table::actor_system(caf::actor_system_config& cfg) {
  system_ = &cfg;
  return *this;
}

option_table& option_table::pass_unknown() {
  pass_unknown_ = true;
  // The passed arguments' own config file is theirs, not this table's.
  app_.remove_option(entries_.front().option);
  entries_.erase(entries_.begin());
  return *this;
}

const option_table::entry* option_table::find(const std::string& long_name) const {
  auto name = long_name;
  if (auto a = aliases_.find(name); a != aliases_.end())
    name = a->second;
  for (auto& e : entries_)
    if (e.name == name)
      return &e;
  return nullptr;
}

namespace {

// Levenshtein distance: edits (insert, delete, replace) from a to b.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      auto up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

// As git and cargo do: the closest name within a third of its length (at least 1, at most 3 edits).
std::string option_table::nearest(const std::string& unknown, const std::string& prefix) const {
  std::string best;
  size_t best_distance = 0;
  auto consider = [&](const std::string& name) {
    auto d = edit_distance(unknown, name);
    if (d > 0 && d <= std::clamp<size_t>(name.size() / 3, 1, 3) && (best.empty() || d < best_distance)) {
      best = name;
      best_distance = d;
    }
  };
  for (auto& e : entries_)
    consider(e.name);
  for (auto& [alias, name] : aliases_)
    consider(alias);
  return best.empty() ? std::string() : " (did you mean " + prefix + best + "?)";
}

const option_table::entry* option_table::find(char short_name) const {
  for (auto& e : entries_)
    if (e.short_name == short_name)
      return &e;
  return nullptr;
}

bool option_table::given(const std::string& name) const {
  return on_command_line_.count(name) > 0 || from_file_.count(name) > 0;
}

std::string option_table::expected(const entry& e) const {
  if (auto i = expects_.find(e.name); i != expects_.end())
    return i->second;
  switch (e.kind) {
    case value_kind::integer:
      return "an integer";
    case value_kind::number:
      return "a number";
    case value_kind::flag:
      return "true or false";
    case value_kind::text:
      break;
  }
  return "a value";
}

std::string option_table::value_refusal(const entry& e, const std::string& value) const {
  if (from_file_.count(e.name))
    return "invalid value for '" + e.name + "' in " + file_words_ + ": \"" + value + "\" (expected " + expected(e) + ")";
  return "invalid value in '--" + e.name + "=" + value + "' (expected " + expected(e) + ")";
}

// The command line as CLI11 takes it: every option by its long name, a flag as --name=true|false, a value
// as the next argument; unknown arguments refused or passed on; CAF's settings put aside.
std::string option_table::normalize(const std::vector<std::string>& args, std::vector<std::string>& out) {
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    bool is_long = a.size() > 2 && a.compare(0, 2, "--") == 0;
    bool is_short = !is_long && a.size() == 2 && is_option_word(a);
    if (!is_long && !is_short) {
      if (operands_ != nullptr && !is_option_word(a)) {
        operands_->push_back(a);
        continue;
      }
      if (pass_unknown_) {
        passed_.push_back(a);
        continue;
      }
      return is_option_word(a) ? "unknown option '" + a + "' (see --help)" : "unexpected argument '" + a + "'";
    }
    auto eq = is_long ? a.find('=') : std::string::npos;
    auto name = is_long ? a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2) : std::string();
    std::optional<std::string> value;
    if (eq != std::string::npos)
      value = a.substr(eq + 1);
    bool next_is_value = i + 1 < args.size() && !is_option_word(args[i + 1]);
    if (is_long && name.find('.') != std::string::npos && system_ != nullptr) {
      system_args_.push_back(!value && next_is_value ? a + "=" + args[++i] : a);  // CAF's own
      continue;
    }
    const entry* e = is_long ? find(name) : find(a[1]);
    if (e == nullptr) {
      if (pass_unknown_) {
        passed_.push_back(a);
        continue;
      }
      return "unknown option '" + (is_long ? "--" + name : a) + "'" + (is_long ? nearest(name, "--") : "") +
             " (see --help)";
    }
    on_command_line_.insert(e->name);
    if (e->kind == value_kind::flag) {
      if (!value)
        value = next_is_value && bool_word(args[i + 1]) ? args[++i] : std::string("true");
      auto on = bool_word(*value);
      if (!on)
        return pass_unknown_ ? "--" + e->name + " takes true or false, not '" + *value + "'"
                             : "option '--" + e->name + "=" + *value + "' takes true or false";
      out.push_back("--" + e->name + "=" + (*on ? "true" : "false"));
      continue;
    }
    if (!value) {
      if (next_is_value) {
        value = args[++i];
      } else if (auto bare = bare_.find(e->name); bare != bare_.end()) {
        value = bare->second;
      } else {
        auto shown = is_long ? "--" + name : a;
        if (pass_unknown_)
          return shown + " needs a value";
        auto what = e->kind == value_kind::text && !expects_.count(e->name) ? std::string() : " (" + expected(*e) + ")";
        return "option '" + shown + "' needs a value" + what +
               (i + 1 < args.size() ? ", not the option '" + args[i + 1] + "' after it" : "");
      }
    }
    out.insert(out.end(), {"--" + e->name, *value});
  }
  return {};
}

// The config file's options, before the command line's, each only if the command line does not give it.
std::string option_table::read_config(std::vector<std::string>& out) {
  std::string path = config_file_;
  file_words_ = "the config file";
  if (path.empty()) {
    // As CAF did: caf-application.ini in the working directory, if there is one. A user may not know it
    // is read, so a refusal names it.
    if (!std::ifstream("caf-application.ini"))
      return {};
    path = "caf-application.ini";
    file_words_ = "the config file 'caf-application.ini' (read from the working directory without --config-file)";
  }
  std::ifstream in(path);
  if (!in)
    return "cannot open the config file '" + path + "'";
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream sections(braces_as_sections(text));
  CLI::ConfigBase reader;
  reader.arrayBounds('\x02', '\x03');  // a value is one text, commas and spaces included: the option splits it
  std::vector<CLI::ConfigItem> items;
  try {
    items = reader.from_config(sections);
  } catch (const CLI::ParseError& e) {
    return "the config file is malformed: " + std::string(e.what());
  }
  for (auto& item : items) {
    if (item.name == "--" || item.name == "++" || item.name.empty())  // CLI11's marks of a section's end and start
      continue;
    std::string section;
    for (auto& p : item.parents)
      section += (section.empty() ? "" : ".") + p;
    auto key = section.empty() || section == "global" ? item.name : section + "." + item.name;
    const entry* e = find(key);
    if (e == nullptr || e->name == "config-file")
      return "unknown option '" + key + "' in " + file_words_ + nearest(key, "") + " (see --help)";
    if (on_command_line_.count(e->name))
      continue;
    std::string value;
    for (auto& v : item.inputs)
      value += (value.empty() ? "" : ",") + v;
    from_file_.insert(e->name);
    if (e->kind == value_kind::flag) {
      auto on = bool_word(value);
      if (!on)
        return value_refusal(*e, value);
      out.push_back("--" + e->name + "=" + (*on ? "true" : "false"));
    } else {
      out.insert(out.end(), {"--" + e->name, value});
    }
  }
  return {};
}

std::string option_table::apply_actor_system_args() {
  if (system_args_.empty())
    return {};
  std::istringstream no_file;
  auto err = system_->parse(system_args_, no_file);
  if (err) {
    auto text = caf::to_string(err);
    auto arg = argument_of(text);
    auto code = static_cast<caf::pec>(err.code());
    if (err.category() == caf::atom("parser") && code == caf::pec::not_an_option)
      return "unknown option '" + arg + "' (see --help)";
    if (err.category() == caf::atom("parser") && code == caf::pec::missing_argument)
      return "option '" + arg + "' needs a value";
    return "invalid value in '" + (arg.empty() ? text : arg) + "'";
  }
  if (!system_->remainder.empty())
    return "unexpected argument '" + system_->remainder.front() + "'";
  return {};
}

std::string option_table::parse_args(const std::vector<std::string>& args) {
  for (auto& a : args)
    if (a == "--help" || a == "-h" || a == "-?") {
      std::cout << help();
      help_printed_ = true;
      return {};
    }
  std::vector<std::string> cli, file;
  if (auto err = normalize(args, cli); !err.empty())
    return err;
  for (size_t i = 0; i + 1 < cli.size(); ++i)
    if (cli[i] == "--config-file")
      config_file_ = cli[i + 1];
  if (!pass_unknown_)
    if (auto err = read_config(file); !err.empty())
      return err;
  file.insert(file.end(), cli.begin(), cli.end());
  std::reverse(file.begin(), file.end());  // CLI11 takes the arguments last first
  try {
    app_.parse(file);
  } catch (const refusal& r) {
    return r.what();
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return apply_actor_system_args();
}

std::string option_table::help() const {
  auto left = [](const entry& e) {
    std::string out = "--" + e.name;
    if (e.short_name)
      out += ", -" + std::string(1, e.short_name);
    if (e.kind != value_kind::flag)
      out += " " + e.option->get_type_name();
    return out;
  };
  size_t width = 0;
  std::vector<std::string> groups;
  for (auto& e : entries_) {
    width = std::max(width, left(e).size() + 4);
    if (std::find(groups.begin(), groups.end(), e.group) == groups.end())
      groups.push_back(e.group);
  }
  std::ostringstream out;
  out << about_ << "options:\n";
  for (auto& g : groups) {
    out << "\n" << g << ":\n";
    for (auto& e : entries_)
      if (e.group == g)
        CLI::detail::format_help(out, left(e), e.option->get_description(), width);
  }
  return out.str();
}

}  // namespace syncpoint::cli
