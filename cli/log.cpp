// The cluster processes' event log (cli/log.hpp), through spdlog: its
// stderr sink is thread-safe (actor threads and the main thread log), and
// every line is flushed at once, so a line is on stderr before the event's
// consequences are (a test or an operator waiting for it sees it).
#include "cli/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>

namespace syncpoint::cli {

namespace {

std::shared_ptr<spdlog::logger> make(const std::string& role) {
  auto log = std::make_shared<spdlog::logger>(role, std::make_shared<spdlog::sinks::stderr_sink_mt>());
  log->set_pattern("%Y-%m-%d %H:%M:%S.%e %-5l %v");
  log->set_level(spdlog::level::info);
  log->flush_on(spdlog::level::trace);
  return log;
}

std::shared_ptr<spdlog::logger>& the_log() {
  static auto log = make("syncpoint");
  return log;
}

}  // namespace

bool start_log(const std::string& role, const std::string& level) {
  static const std::pair<const char*, spdlog::level::level_enum> levels[] = {
    {"debug", spdlog::level::debug}, {"info", spdlog::level::info}, {"warn", spdlog::level::warn},
    {"error", spdlog::level::err},   {"off", spdlog::level::off}};
  for (auto& [word, value] : levels) {
    if (level != word)
      continue;
    auto log = make(role);
    log->set_level(value);
    the_log() = log;
    return true;
  }
  return false;
}

void log_line(log_level level, const std::string& line) {
  static const spdlog::level::level_enum to_spdlog[] = {spdlog::level::debug, spdlog::level::info, spdlog::level::warn,
                                                         spdlog::level::err};
  the_log()->log(to_spdlog[static_cast<int>(level)], line);
}

}  // namespace syncpoint::cli
