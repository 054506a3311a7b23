#include "cli/zipline_cmd.hpp"

#include "core/json.hpp"

#include "cli/option_table.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

namespace syncpoint::cli {

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r");
  auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

struct zipline_options {
  std::string input;
  std::string random;
  uint64_t seed = 1;
  std::string variant = "zipline-opt-bs";
  int repeat = 1;
  option_table table{"zipline"};

  zipline_options() {
    table.group("data")
      .add(input, "input,i", "CSV file: one line per worker, R ascending numbers per line")
      .add(random, "random", "N,R: a random instance of N workers and look-ahead R instead")
      .add(seed, "seed", "seed of --random (default 1)")
      .group("job")
      .add(variant, "variant", "zipline, zipline-opt, zipline-opt-bs or all (default zipline-opt-bs)")
      .add(repeat, "repeat", "time the algorithm this many times, report the median (default 1)");
  }
};

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

int run_zipline(const std::vector<std::string>& raw_args) {
  zipline_options opts;
  if (int rc = parse_command(opts.table, raw_args, "zipline"); rc >= 0)
    return rc;
  std::vector<zipline_variant> variants;
  try {
    if (opts.variant == "all")
      variants = {zipline_variant::plain, zipline_variant::opt, zipline_variant::opt_bs};
    else
      variants = {parse_zipline_variant(opts.variant)};
  } catch (const std::invalid_argument& e) {
    std::string why = e.what();  // "... (valid: a, b, c)": the command also takes all
    if (!why.empty() && why.back() == ')')
      why.insert(why.size() - 1, ", or all");
    std::cerr << "syncpoint zipline: " << why << "\n";
    return 2;
  }
  if (opts.repeat < 1) {
    std::cerr << "syncpoint zipline: --repeat must be >= 1\n";
    return 2;
  }
  zipline_matrix m;
  try {
    if (!opts.input.empty() == !opts.random.empty()) {
      std::cerr << "syncpoint zipline: give exactly one of --input FILE and --random N,R\n";
      return 2;
    }
    if (!opts.input.empty()) {
      m = read_zipline_csv(opts.input);
    } else {
      auto comma = opts.random.find(',');
      char* e1 = nullptr;
      char* e2 = nullptr;
      long n = comma == std::string::npos ? 0 : std::strtol(opts.random.c_str(), &e1, 10);
      long R = comma == std::string::npos ? 0 : std::strtol(opts.random.c_str() + comma + 1, &e2, 10);
      if (comma == std::string::npos || e1 != opts.random.c_str() + comma || *e2 != '\0' || n < 1
          || R < 1 || n * R > 100000000L) {
        std::cerr << "syncpoint zipline: --random '" << opts.random
                  << "' must be N,R with N, R >= 1 (and N*R <= 1e8)\n";
        return 2;
      }
      m = random_zipline_matrix(static_cast<size_t>(n), static_cast<size_t>(R), opts.seed);
    }
  } catch (const input_error& e) {
    std::cerr << "syncpoint zipline: " << e.what() << "\n";
    return 2;
  }
  for (auto v : variants) {
    zipline_result z;
    std::vector<double> micros;
    for (int k = 0; k < opts.repeat; ++k) {
      auto t0 = std::chrono::steady_clock::now();
      z = zipline(m, v);
      micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(micros.begin(), micros.end());
    std::string stops = "[";
    for (size_t i = 0; i < z.stops.size(); ++i)
      stops += (i ? "," : "") + std::to_string(z.stops[i]);
    stops += "]";
    std::cout << json::object()
                   .add("variant", to_string(v))
                   .add("n", static_cast<unsigned long long>(m.n))
                   .add("R", static_cast<unsigned long long>(m.R))
                   .raw("span", json::num(z.span, 17))
                   .raw("barrier", json::num(z.barrier, 17))
                   .raw("stops", stops)
                   .add("micros", micros[micros.size() / 2])
                   .done()
              << "\n";
  }
  return 0;
}

}  // namespace syncpoint::cli
