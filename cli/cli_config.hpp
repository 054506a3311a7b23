// CAF's config options with the command-line conventions users expect:
// "--name value" as well as "--name=value", "--flag=false" and "--flag
// false", a switch given bare ("--online" is "--online=on"), and one-line
// messages naming the bad argument. A value is never taken from the next
// option: "--lr --workers 2" is refused as "--lr needs a value (a number)".
// Subcommands derive and add their options. --help (-h) prints those options,
// none of CAF's own (its config dump, its long help, its scheduler and
// middleman settings), on stdout.
#pragma once

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace syncpoint::cli {

class cli_config : public caf::actor_system_config {
 public:
  /// Parses args (without program and subcommand). Returns "" on success,
  /// else a message naming the bad argument. Leftover positional arguments
  /// are an error too, and so are a config file's unknown keys and values of
  /// the wrong type.
  std::string parse_args(const std::vector<std::string>& args);

  bool help_printed() const { return help_ || cli_helptext_printed; }

  /// The options a user of the command sets, one per line: what --help prints.
  std::string options_help() const;

 protected:
  /// `--NAME` given bare means `--NAME=VALUE` (an on/off switch: "on").
  void bare_means(const std::string& name, const std::string& value) { bare_[name] = value; }
  /// How to say what NAME's value must be when it is missing ("on or off").
  void expects(const std::string& name, const std::string& words) { expects_[name] = words; }

 private:
  std::string check_content();
  std::string expected_value(const std::string& name, const caf::config_option& opt) const;

  std::map<std::string, std::string> bare_, expects_;
  bool help_ = false;
};

/// Parses `args` into `opts` for `syncpoint COMMAND`: -1 to go on, 0 when
/// the help was printed, 2 (after one line on stderr) for a bad argument.
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
