// A command's options on CLI11 (Debian's libcli11-dev), with the conventions
// users expect: "--name value" as well as "--name=value"; "--flag",
// "--flag=false" and "--flag false"; a switch given bare ("--online" is
// "--online=on"); and a value never taken from the next option: "--lr
// --workers 2" is refused as "option '--lr' needs a value (a number), not the
// option '--workers' after it". A refusal is one line naming the argument.
// --help (-h) prints the options by group. --config-file FILE (and, without
// it, caf-application.ini in the working directory) holds "name = value" lines
// under [global] or in a "global { }" block; the command line has the last word.
// A command that starts an actor system takes CAF's own settings too
// (--scheduler.max-threads=2, --middleman.app-identifiers=[...]).
//
//   syncpoint::cli::option_table table{"head"};
//   table.group("cluster").add(port, "port", "port to listen on (required)");
//   if (int rc = parse_command(table, args, "head"); rc >= 0)
//     return rc;  // 0: the help was printed; 2: refused, said on stderr
#pragma once

#include <CLI/CLI.hpp>

#include <caf/actor_system_config.hpp>

#include <cstdint>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace syncpoint::cli {

class option_table {
 public:
  explicit option_table(const std::string& command);

  /// Options added after this are listed under NAME in --help (job,
  /// protocol, data, optimizer, cluster, output).
  option_table& group(const std::string& name);

  /// An option: NAMES is "long" or "long,s" (a one-letter short name).
  /// Integers, numbers and text take a value; a bool is a flag.
  template <class T>
  option_table& add(T& value, const std::string& names, const std::string& help) {
    auto* opt = app_.add_option(cli_names(names), value, help);
    if constexpr (std::is_integral_v<T>)
      declare(opt, names, value_kind::integer, static_cast<int64_t>(std::numeric_limits<T>::min()),
              static_cast<uint64_t>(std::numeric_limits<T>::max()));
    else
      declare(opt, names, std::is_floating_point_v<T> ? value_kind::number : value_kind::text);
    return *this;
  }
  option_table& add(bool& value, const std::string& names, const std::string& help);
  /// An option that may be given again: each value is kept, in order.
  option_table& add(std::vector<std::string>& values, const std::string& names, const std::string& help);

  /// `--NAME` given bare means `--NAME=VALUE` (an on/off switch: "on").
  option_table& bare_means(const std::string& name, const std::string& value);
  /// How to say what NAME's value must be when it is missing or wrong ("on or off").
  option_table& expects(const std::string& name, const std::string& words);
  /// Another long name for NAME ("ca" for "ca-cert").
  option_table& alias(const std::string& name, const std::string& other);

  /// Words that are no option go to `into` (report's folders), not refused.
  option_table& operands(std::vector<std::string>& into);
  /// What --help prints above the options: the usage and what the command does.
  option_table& about(const std::string& text);

  /// --GROUP.NAME settings go to `cfg` (CAF's own: scheduler, middleman...).
  option_table& actor_system(caf::actor_system_config& cfg);
  /// Arguments the table does not know are kept, in order, in passed() (sweep:
  /// the cells' options, --config-file included), instead of refused; refusals
  /// say "--jobs needs a value".
  option_table& pass_unknown();

  /// Parses args (without program and subcommand). Returns "" on success, else
  /// the refusal. --help anywhere prints the options and parses nothing.
  std::string parse_args(const std::vector<std::string>& args);

  bool help_printed() const { return help_printed_; }
  /// Whether NAME was given, on the command line or in the config file.
  bool given(const std::string& name) const;
  const std::vector<std::string>& passed() const { return passed_; }

  /// The options, by group: what --help prints.
  std::string help() const;

 private:
  enum class value_kind { integer, number, text, flag };
  struct entry {
    std::string name;
    char short_name = 0;
    value_kind kind = value_kind::text;
    std::string group;
    CLI::Option* option = nullptr;
  };

  static std::string cli_names(const std::string& names);
  void declare(CLI::Option* opt, const std::string& names, value_kind kind, int64_t lowest = 0, uint64_t highest = 0);
  const entry* find(const std::string& long_name) const;
  const entry* find(char short_name) const;
  /// " (did you mean --NAME?)" for the option nearest to an unknown one, or "" when none is near.
  std::string nearest(const std::string& unknown, const std::string& prefix) const;
  std::string expected(const entry& e) const;
  std::string value_refusal(const entry& e, const std::string& value) const;
  std::string normalize(const std::vector<std::string>& args, std::vector<std::string>& out);
  std::string read_config(std::vector<std::string>& out);
  std::string apply_actor_system_args();

  CLI::App app_;
  std::string group_ = "job";
  std::vector<entry> entries_;
  std::map<std::string, std::string> bare_, expects_, aliases_;
  std::string config_file_;
  caf::actor_system_config* system_ = nullptr;
  std::vector<std::string>* operands_ = nullptr;
  std::string about_;
  bool pass_unknown_ = false;
  bool help_printed_ = false;
  std::set<std::string> on_command_line_, from_file_;
  std::string file_words_;  // how a refusal names the config file
  std::vector<std::string> system_args_, passed_;
};

/// Parses `args` for `syncpoint COMMAND`: -1 to go on, 0 when the help was
/// printed, 2 (after one line on stderr) for a bad argument.
template <class Options>
int parse_command(Options& opts, const std::vector<std::string>& args, const std::string& command) {
  auto err = opts.parse_args(args);
  if (!err.empty()) {
    std::cerr << "syncpoint " << command << ": " << err << "\n";
    return 2;
  }
  return opts.help_printed() ? 0 : -1;
}

}  // namespace syncpoint::cli
