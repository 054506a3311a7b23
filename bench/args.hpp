// The benchmarks' command lines, through CLI11 (Debian's libcli11-dev):
// `--help` lists each option with its default; an unknown option, a missing
// or malformed value, a value out of its range or a stray argument is
// refused with exit status 2 and CLI11's words for what is wrong.
//
//   CLI::App app{"median throughput of ...", "bench_throughput"};
//   app.add_option("--repeat", repeat, "interleaved runs")->capture_default_str()->check(syncpoint::bench::positive());
//   if (int rc = syncpoint::bench::parse(app, argc, argv); rc >= 0)
//     return rc;
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <string>

namespace syncpoint::bench {

/// A number in [lo, hi], said in words when it is not ("--lr: 0 is not above 0").
/// (CLI11's own ranges print both bounds in full, 309 digits for a double's maximum.)
inline CLI::Validator between(double lo, double hi, bool open_below = false) {
  auto words = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return std::string(buf);
  };
  std::string name = (open_below ? "(" : "[") + words(lo) + ".." + words(hi) + "]";
  return CLI::Validator(
    [=](std::string& text) -> std::string {
      char* end = nullptr;
      double x = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0')
        return text + " is not a number";
      if (open_below ? x <= lo : x < lo)
        return text + " is not " + (open_below ? "above " : "at least ") + words(lo);
      if (x > hi)
        return text + " is above " + words(hi);
      return {};
    },
    name);
}

/// A number above 0.
inline CLI::Validator positive() { return between(0, std::numeric_limits<double>::max(), true).description("POSITIVE"); }
/// A number of 0 or more.
inline CLI::Validator non_negative() { return between(0, std::numeric_limits<double>::max()).description("NON-NEGATIVE"); }

/// -1 to go on; otherwise the exit status: 0 after --help, 2 for bad arguments.
inline int parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << app.get_name() << ": " << e.what() << " (--help lists the options)\n";
    return 2;
  }
}

}  // namespace syncpoint::bench
