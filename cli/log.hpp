// The event log of a long-running cluster process (`syncpoint head`,
// `syncpoint node`): spdlog on stderr, one line per event, each with its
// time and level, shown from `--log-level` up. A command's own output (the
// head's address on stdout, a refusal of bad input and its exit status 2, a
// run's progress) is not the log and stays as it is.
//
//   start_log("node", opts.log_level);        // once, after the options are parsed
//   log_line(log_level::warn, "syncpoint node: WARNING: ...");
#pragma once

#include <string>

namespace syncpoint::cli {

enum class log_level { debug, info, warn, error };

/// The words --log-level takes.
inline constexpr const char* log_level_words = "debug, info, warn, error or off";

/// Sets the process's log: named `role`, showing `level` and above ("debug",
/// "info", "warn", "error", "off"). False for another word (the log stays as
/// it was: info and above).
bool start_log(const std::string& role, const std::string& level);

/// One line of the log, at `level`: "2026-11-27 10:04:05.123 info  [head] node 'a' joined".
void log_line(log_level level, const std::string& line);

}  // namespace syncpoint::cli
