// CAF's config options with the command-line conventions users expect:
// "--name value" as well as "--name=value", "--flag=false", and one-line
// messages naming the bad argument. Subcommands derive and add their options.
#pragma once

#include <caf/actor_system_config.hpp>

#include <string>
#include <vector>

namespace syncpoint::cli {

class cli_config : public caf::actor_system_config {
 public:
  /// Parses args (without program and subcommand). Returns "" on success,
  /// else a message naming the bad argument. Leftover positional arguments
  /// are an error too.
  std::string parse_args(const std::vector<std::string>& args);

  bool help_printed() const { return cli_helptext_printed; }
};

}  // namespace syncpoint::cli
