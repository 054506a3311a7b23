#include "runtime/studies/zipline_instances.hpp"

#include "core/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace syncpoint {

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r");
  auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

zipline_matrix read_zipline_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw input_error(path + ": cannot open");
  return parse_zipline_csv(in, path);
}

zipline_matrix parse_zipline_csv(std::istream& in, const std::string& path) {
  std::vector<std::vector<double>> rows;
  std::string line;
  size_t line_no = 0;
  std::vector<std::string> blank_lines;
  while (std::getline(in, line)) {
    ++line_no;
    auto where = path + ":" + std::to_string(line_no) + ": ";
    if (trim(line).empty()) {
      blank_lines.push_back(where);
      continue;
    }
    if (!blank_lines.empty())  // a blank line between rows
      throw input_error(blank_lines.front() + "empty line between rows");
    std::vector<double> row;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) {
      auto c = trim(cell);
      char* end = nullptr;
      double v = c.empty() ? 0 : std::strtod(c.c_str(), &end);
      if (c.empty() || end != c.c_str() + c.size() || !std::isfinite(v))
        throw input_error(where + "'" + c + "' in column " + std::to_string(row.size() + 1) +
                          " is not a number");
      if (!row.empty() && v < row.back())
        throw input_error(where + "not ascending at column " + std::to_string(row.size() + 1) +
                          " (" + c + " after " + json::num(row.back()) + ")");
      row.push_back(v);
    }
    if (!line.empty() && trim(line).back() == ',')
      throw input_error(where + "'' in column " + std::to_string(row.size() + 1) + " is not a number");
    if (!rows.empty() && row.size() != rows.front().size())
      throw input_error(where + std::to_string(row.size()) + " values, but line 1 has " +
                        std::to_string(rows.front().size()));
    rows.push_back(std::move(row));
  }
  if (rows.empty())
    throw input_error(path + ":1: empty file");
  zipline_matrix m(rows.size(), rows.front().size());
  for (size_t i = 0; i < rows.size(); ++i)
    std::copy(rows[i].begin(), rows[i].end(), m.t.begin() + static_cast<std::ptrdiff_t>(i * m.R));
  return m;
}

zipline_matrix random_zipline_matrix(size_t n, size_t R, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> start(0.0, 1.0), interval(0.5, 2.0);
  zipline_matrix m(n, R);
  for (size_t i = 0; i < n; ++i) {
    double b = start(rng), d = interval(rng);
    for (size_t r = 0; r < R; ++r)
      m.at(i, r) = b + static_cast<double>(r) * d;
  }
  return m;
}

}  // namespace syncpoint
