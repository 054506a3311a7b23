// The comparison page's parts, shared by report_html.cpp (charts, table,
// page) and report_words.cpp (who won and why, settings, provenance).
// Internal to cli/: users call report_html() (report_html.hpp).
#pragma once

#include "runtime/run_files.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace syncpoint::cli::report_parts {

std::string with_commas(uint64_t v);
/// The fewest samples any run that did not fail processed.
uint64_t equal_samples(const std::vector<run_record>& runs);
/// The target every run had (0 when none had one, or they differ).
double shared_target(const std::vector<run_record>& runs);

/// Who won on each count, why, and what each run spent its time on.
std::string verdict(const std::vector<run_record>& runs);
/// The settings all runs share, and a table of those that differ.
std::string settings(const std::vector<run_record>& runs);
/// The command(s), versions, machine and run folders.
std::string provenance(const std::vector<run_record>& runs);

}  // namespace syncpoint::cli::report_parts
