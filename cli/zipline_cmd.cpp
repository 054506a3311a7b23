#include "cli/zipline_cmd.hpp"

#include "core/json.hpp"

#include "cli/option_table.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace syncpoint::cli {

namespace {

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
