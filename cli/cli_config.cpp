#include "cli/cli_config.hpp"

#include <caf/detail/ini_consumer.hpp>
#include <caf/detail/parser/read_ini.hpp>
#include <caf/parser_state.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <optional>

namespace syncpoint::cli {

namespace {

std::string argument_of(const std::string& rendered) {
  auto key = std::string("\"argument\" = \"");
  auto b = rendered.find(key);
  if (b == std::string::npos)
    return {};
  b += key.size();
  auto e = rendered.find('"', b);
  return rendered.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

// " 'PATH'" from an error whose context is the file name, else "".
std::string context_words(const caf::error& err) {
  if (err.context().match_element<std::string>(0))
    return " '" + err.context().get_as<std::string>(0) + "'";
  return {};
}

}  // namespace

namespace {

// Whether a word is an option rather than a value: "--x", "-x"; "-5" and "-.5" are numbers.
bool is_option_word(const std::string& s) {
  return s.size() >= 2 && s[0] == '-' && !std::isdigit(static_cast<unsigned char>(s[1])) && s[1] != '.';
}

// A boolean flag's value in words, or nothing.
std::optional<bool> bool_word(const std::string& v) {
  if (v == "true" || v == "1" || v == "on")
    return true;
  if (v == "false" || v == "0" || v == "off")
    return false;
  return std::nullopt;
}

}  // namespace

std::string cli_config::expected_value(const std::string& name, const caf::config_option& opt) const {
  if (auto i = expects_.find(name); i != expects_.end())
    return i->second;
  auto type = std::string(opt.type_name().data(), opt.type_name().size());
  if (type.find("real") != std::string::npos || type.find("double") != std::string::npos)
    return "a number";
  if (type.find("int") != std::string::npos)
    return "an integer";
  if (type.find("list") != std::string::npos)
    return "a list";
  if (type.find("timespan") != std::string::npos)
    return "a duration";
  return "a value";
}

std::string cli_config::options_help() const {
  // CAF's own options (help, its config dump, scheduler, middleman, logger...)
  // are not the command's: what a user sets is in the global category.
  auto caf_own = [](const std::string& name) { return name == "help" || name == "long-help" || name == "dump-config"; };
  std::vector<std::pair<std::string, std::string>> lines;
  size_t width = 0;
  for (auto& opt : custom_options_) {
    auto category = std::string(opt.category().data(), opt.category().size());
    auto name = std::string(opt.long_name().data(), opt.long_name().size());
    if (category != "global" || caf_own(name))
      continue;
    auto shorts = std::string(opt.short_names().data(), opt.short_names().size());
    auto type = std::string(opt.type_name().data(), opt.type_name().size());
    std::string left = "  --" + name;
    for (char c : shorts)
      left += ", -" + std::string(1, c);
    if (!opt.is_flag())
      left += type.find("real") != std::string::npos ? " NUMBER" : type.find("int") != std::string::npos ? " N" : " VALUE";
    auto words = name == "config-file" ? std::string("read these options from FILE, one 'name = value' a line")
                                       : std::string(opt.description().data(), opt.description().size());
    width = std::max(width, left.size());
    lines.emplace_back(left, words);
  }
  std::string out = "options:\n";
  for (auto& [left, words] : lines)
    out += left + std::string(width + 2 - left.size(), ' ') + words + "\n";
  return out;
}

std::string cli_config::parse_args(const std::vector<std::string>& args) {
  for (auto& a : args)
    if (a == "--help" || a == "-h" || a == "-?" || a == "--long-help") {
      std::cout << options_help();
      help_ = true;
      return "";
    }
  // CAF wants --name=value; accept the common "--name value" as well.
  std::vector<std::string> joined;
  for (size_t i = 0; i < args.size(); ++i) {
    // CAF 0.17's parser does not take an option named "ca" (it reports it as
    // unknown): --ca is an alias of --ca-cert.
    auto a = args[i] == "--ca" ? std::string("--ca-cert")
             : args[i].rfind("--ca=", 0) == 0 ? "--ca-cert=" + args[i].substr(5)
                                              : args[i];
    if (a.size() > 2 && a.compare(0, 2, "--") == 0 && a.find('=') == std::string::npos) {
      auto name = a.substr(2);
      if (auto opt = custom_options_.cli_long_name_lookup(name)) {
        bool value_next = i + 1 < args.size() && !is_option_word(args[i + 1]);
        if (opt->is_flag()) {
          if (value_next && bool_word(args[i + 1]))
            a += "=" + args[++i];  // "--progress false": checked below as --progress=false
        } else if (value_next) {
          joined.push_back(a + "=" + args[++i]);
          continue;
        } else if (auto bare = bare_.find(name); bare != bare_.end()) {
          joined.push_back(a + "=" + bare->second);
          continue;
        } else {
          return "option '" + a + "' needs a value (" + expected_value(name, *opt) + ")" +
                 (i + 1 < args.size() ? ", not the option '" + args[i + 1] + "' after it" : "");
        }
      }
    }
    if (a.size() > 2 && a.compare(0, 2, "--") == 0 && a.find('=') != std::string::npos) {
      // --flag=false / --flag=true for booleans
      auto opt = custom_options_.cli_long_name_lookup(a.substr(2, a.find('=') - 2));
      if (opt != nullptr && opt->is_flag()) {
        auto v = bool_word(a.substr(a.find('=') + 1));
        if (!v)
          return "option '" + a + "' takes true or false";
        if (*v)
          joined.push_back(a.substr(0, a.find('=')));
        else
          opt->store(caf::config_value{false});
        continue;
      }
    }
    joined.push_back(a);
  }
  std::vector<std::string> argv_store{"syncpoint"};
  argv_store.insert(argv_store.end(), joined.begin(), joined.end());
  std::vector<char*> argv;
  for (auto& s : argv_store)
    argv.push_back(const_cast<char*>(s.c_str()));
  if (auto err = parse(static_cast<int>(argv.size()), argv.data())) {
    auto text = render(err);
    auto arg = argument_of(text);
    auto code = static_cast<caf::pec>(err.code());
    if (code == caf::pec::not_an_option)
      return "unknown option '" + arg + "' (see --help)";
    if (code == caf::pec::missing_argument)
      return "option '" + arg + "' needs a value";
    if (err.category() == caf::atom("system") && err.code() == static_cast<uint8_t>(caf::sec::cannot_open_file))
      return "cannot open the config file" + context_words(err);
    if (err.category() == caf::atom("parser") && arg.empty())  // no argument named: the file's
      return "the config file is malformed: " + text;
    auto name = arg.substr(0, arg.find('='));
    auto opt = name.size() > 2 ? custom_options_.cli_long_name_lookup(name.substr(2)) : nullptr;
    if (opt != nullptr)
      return "invalid value in '" + arg + "' (expected " + expected_value(name.substr(2), *opt) + ")";
    return "cannot parse '" + (arg.empty() ? text : arg) + "'";
  }
  if (!remainder.empty())
    return "unexpected argument '" + remainder.front() + "'";
  return check_content();
}

// CAF 0.17 keeps what a config file says about an option nobody declared,
// drops a value of the wrong type under a [section] line with a warning nobody
// sees, and sets the variables of "[global]" lines but not of "global { }"
// blocks. So the file is read once more as it is (no options: every key kept
// with its value), unknown keys and wrong types are refused naming the key,
// and every value in the end (the command line's last) goes to its variable.
std::string cli_config::check_content() {
  // Without --config-file, CAF reads caf-application.ini from the working
  // directory if there is one: a user may not know, so the message names it.
  std::ifstream in;
  std::string where = "the config file";
  if (auto file = caf::get_if<std::string>(&content, "config-file")) {
    in.open(*file);
  } else {
    in.open("caf-application.ini");
    if (in)
      where = "the config file 'caf-application.ini' (CAF reads it from the working directory)";
  }
  auto check = [&](const std::string& group, const std::string& key, const caf::config_value& value,
                   bool store) {
    auto opt = custom_options_.qualified_name_lookup(group, key);
    auto name = group == "global" ? key : group + "." + key;
    if (opt == nullptr)
      return "unknown option '" + name + "' in " + where + " (see --help)";
    if (opt->check(value))
      return "invalid value for '" + name + "' in " + where + ": " + caf::to_string(value) + " (expected " +
             expected_value(key, *opt) + ")";
    if (store)
      opt->store(value);
    return std::string();
  };
  // Global options sit at the top, the others in a dictionary per group.
  auto check_all = [&](const caf::settings& xs, bool store) {
    for (auto& [key, value] : xs) {
      std::string err;
      if (auto* group = caf::get_if<caf::settings>(&value)) {
        for (auto& [k, v] : *group)
          if (err.empty())
            err = check(key, k, v, store);
      } else {
        err = check("global", key, value, store);
      }
      if (!err.empty())
        return err;
    }
    return std::string();
  };
  if (in) {
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    caf::string_view view{text.data(), text.size()};
    caf::string_parser_state ps{view.begin(), view.end()};
    caf::config_option_set none;
    caf::settings as_written;
    caf::detail::ini_consumer consumer{none, as_written};
    caf::detail::parser::read_ini(ps, consumer);  // CAF's parse has read it already: no syntax errors left
    if (auto err = check_all(as_written, false); !err.empty())
      return err;
  }
  return check_all(content, true);
}

}  // namespace syncpoint::cli
