// The table of job_config's fields (core/job_schema.hpp) against job_config
// itself, its inspect, the CLI's options, --help and config file, validate()
// and run.json: a field missing from any of them, or out of order, fails here.
#include "core/job_schema.hpp"

#include "core/text.hpp"

#include "cli/options.hpp"
#include "runtime/records/run_files.hpp"
#include <syncpoint/train.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>

#include <unistd.h>

namespace {

using namespace syncpoint;
using cli_command = syncpoint::cli::options::command;

// The number of fields of an aggregate: the most initializers T{...} takes.
struct any_value {
  template <class U>
  operator U() const;  // never called: only asked whether T{any_value{}, ...} compiles
};
template <class T, class Seq, class = void>
struct takes : std::false_type {};
template <class T, size_t... I>
struct takes<T, std::index_sequence<I...>, std::void_t<decltype(T{(void(I), any_value{})...})>> : std::true_type {};
template <class T, size_t N = 0>
constexpr size_t field_count() {
  if constexpr (takes<T, std::make_index_sequence<N + 1>>::value)
    return field_count<T, N + 1>();
  else
    return N;
}

// Field F changed to a value unlike its default (one of its choices, if it has them).
void change(job_config& cfg, const job_field& f) {
  std::visit(
    [&](auto m) {
      auto& v = m.of(cfg);
      using T = typename decltype(m)::type;
      if constexpr (std::is_same_v<T, bool>)
        v = !v;
      else if constexpr (std::is_integral_v<T>)
        v += 3;
      else if constexpr (std::is_same_v<T, double>)
        v += 0.5;
      else if constexpr (std::is_same_v<T, std::string>)
        v = !f.choices.empty() ? (v == f.choices.back() ? f.choices.front() : f.choices.back())
            : f.key == "protocol" ? "ssp"
                                  : v + "x";
      else if constexpr (std::is_same_v<T, std::vector<double>>)
        v.push_back(2.5);
      else if constexpr (std::is_same_v<T, clock_kind>)
        v = v == clock_kind::real ? clock_kind::virtual_time : clock_kind::real;
      else
        v.set("staleness", "3");
    },
    f.member);
}

job_config changed(const job_field& f) {
  job_config cfg;
  change(cfg, f);
  return cfg;
}

// What the option takes to set the changed value: fields whose option sets two
// fields take both.
std::string option_value(const job_field& f) {
  if (f.key == "fail_worker" || f.key == "fail_at_iter")
    return "3@3";
  if (f.key == "measure_iter_cost")
    return "measure";
  return field_text(changed(f), f);
}

std::vector<char> encode(caf::actor_system& sys, job_config cfg) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE(!sink(cfg));
  return buf;
}

job_config decode(caf::actor_system& sys, const std::vector<char>& buf) {
  job_config cfg;
  caf::binary_deserializer source{sys, buf.data(), buf.size()};
  REQUIRE(!source(cfg));
  return cfg;
}

// The command a field's option is tried on: train, or submit for the cluster's.
cli_command command_of(const job_field& f) {
  return (f.commands & on_train) ? cli_command::train : cli_command::submit;
}

}  // namespace

TEST_CASE("job schema: the table holds every field of job_config, once each, in declaration order") {
  auto& fields = job_fields();
  // job_config's own fields but its internals, and the internals' fields
  CHECK(fields.size() == field_count<job_config>() - 1 + field_count<detail::job_internals>());
  job_config cfg;
  auto* base = reinterpret_cast<const char*>(&cfg);
  std::ptrdiff_t last = -1;
  std::set<std::string> keys, options;
  for (auto& f : fields) {
    CAPTURE(f.key);
    auto at = std::visit([&](auto m) { return reinterpret_cast<const char*>(&m.of(cfg)) - base; }, f.member);
    CHECK_MESSAGE(at > last, f.key << " is out of declaration order");
    last = at;
    CHECK(keys.insert(f.key).second);
    CHECK(!f.help.empty());
    CHECK(!f.layer.empty());
    CHECK_MESSAGE(f.help.find("(default") == std::string::npos, "a default is job_config's, not the help's");
    for (auto& choice : f.choices)  // --help names what the option takes
      CHECK_MESSAGE(f.help.find(choice) != std::string::npos, "'" << choice << "' in the help: " << f.help);
    if (f.binding == cli_binding::value || f.binding == cli_binding::parsed)
      CHECK(options.insert(f.option).second);
    if (f.binding == cli_binding::by_other)
      CHECK(std::any_of(fields.begin(), fields.end(), [&](auto& g) { return g.option == f.option && &g != &f; }));
  }
  CHECK(job_field_named("max_time_s").option == "max-time");
  CHECK_THROWS_AS(job_field_named("no_such_field"), std::out_of_range);
}

TEST_CASE("job schema: inspect carries every field, in the table's order") {
  caf::actor_system_config sys_cfg;
  caf::actor_system sys{sys_cfg};
  auto plain = encode(sys, job_config{});
  size_t last = 0;
  for (auto& f : job_fields()) {
    CAPTURE(f.key);
    auto cfg = changed(f);
    REQUIRE(field_text(cfg, f) != field_text(job_config{}, f));
    auto bytes = encode(sys, cfg);
    CHECK_MESSAGE(field_text(decode(sys, bytes), f) == field_text(cfg, f), f.key << " is missing from inspect");
    // Where the encoding first differs lies inside this field's bytes: after the field before.
    auto at = static_cast<size_t>(std::mismatch(plain.begin(), plain.end(), bytes.begin(), bytes.end()).first -
                                  plain.begin());
    CHECK_MESSAGE((&f == &job_fields().front() || at > last), f.key << " is out of the table's order in inspect");
    last = at;
  }
}

TEST_CASE("job schema: each command's --help offers the fields the table gives it, with job_config's defaults") {
  for (auto c : {cli_command::train, cli_command::compare, cli_command::submit, cli_command::tune,
                 cli_command::simulate}) {
    uint8_t bit = c == cli_command::train     ? on_train
                  : c == cli_command::compare ? on_compare
                  : c == cli_command::submit  ? on_submit
                  : c == cli_command::tune    ? on_tune
                                              : on_simulate;
    cli::options opts(c);
    auto help = opts.help();
    job_config defaults;
    if (c == cli_command::submit)
      defaults.clock = clock_kind::real;  // a cluster runs on the real clock
    for (auto& f : job_fields()) {
      if (f.binding == cli_binding::none || f.binding == cli_binding::by_other)
        continue;
      CAPTURE(f.key);
      CAPTURE(static_cast<int>(bit));
      auto at = help.find("  --" + f.option + " ");
      if (at == std::string::npos)
        at = help.find("  --" + f.option + ",");
      CHECK_MESSAGE((at != std::string::npos) == ((f.commands & bit) != 0), "--" << f.option << " in:\n" << help);
      if (at == std::string::npos || default_text(f, defaults).empty())
        continue;
      auto next = help.find("\n  --", at + 1);
      auto flat = [](const std::string& text) {  // the help wraps its lines: words one space apart
        std::string out;
        std::istringstream words(text);
        for (std::string w; words >> w;)
          out += (out.empty() ? "" : " ") + w;
        return out;
      };
      auto entry = flat(help.substr(at, next == std::string::npos ? std::string::npos : next - at));
      auto want = flat("(default " + default_text(f, defaults) + ")");
      CHECK_MESSAGE(entry.find(want) != std::string::npos, want << " in: " << entry);
    }
  }
  CHECK(default_text(job_field_named("workers")) == "4");
  CHECK(default_text(job_field_named("max_time_s")) == "0: no limit");
  CHECK(default_text(job_field_named("straggler")) == "none");
  CHECK(default_text(job_field_named("progress")) == "on");
  CHECK(default_text(job_field_named("elastic")).empty());
}

TEST_CASE("job schema: each field's option sets it, on the command line and in a config file") {
  for (auto& f : job_fields()) {
    if (f.binding == cli_binding::none)
      continue;
    CAPTURE(f.key);
    cli::options opts(command_of(f));
    auto arg = "--" + f.option + "=" + option_value(f);
    CAPTURE(arg);
    REQUIRE(opts.parse_args({arg}) == "");
    auto want = changed(f);
    if (f.key == "fail_worker" || f.key == "fail_at_iter")
      want.internals.fail_worker = want.internals.fail_at_iter = 3;
    CHECK(field_text(opts.job(), f) == field_text(want, f));
  }
  // Every field a train option sets, at once, from a config file.
  auto dir = std::filesystem::temp_directory_path() / ("job-schema-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto file = (dir / "job.ini").string();
  {
    std::ofstream out(file);
    out << "[global]\n";
    for (auto& f : job_fields())
      if ((f.binding == cli_binding::value || f.binding == cli_binding::parsed) && (f.commands & on_train))
        out << f.option << " = \"" << option_value(f) << "\"\n";
  }
  cli::options opts(cli_command::train);
  REQUIRE(opts.parse_args({"--config-file", file}) == "");
  for (auto& f : job_fields())
    if ((f.binding == cli_binding::value || f.binding == cli_binding::parsed) && (f.commands & on_train)) {
      CAPTURE(f.key);
      auto want = changed(f);
      if (f.key == "fail_worker")
        want.internals.fail_worker = 3;
      CHECK(field_text(opts.job(), f) == field_text(want, f));
    }
  std::filesystem::remove_all(dir);
}

TEST_CASE("job schema: validate() refuses a value just outside each field's range or choices, naming it") {
  REQUIRE_NOTHROW(validate(job_config{}));
  auto refusal = [](const job_field& f, double x) -> std::string {
    job_config cfg;
    std::visit(
      [&](auto m) {
        using T = typename decltype(m)::type;
        if constexpr (std::is_arithmetic_v<T>)
          m.of(cfg) = static_cast<T>(x);
      },
      f.member);
    try {
      validate(cfg);
    } catch (const config_error& e) {
      return e.what();
    }
    return "(taken)";
  };
  for (auto& f : job_fields()) {
    CAPTURE(f.key);
    auto name = f.option.empty() ? f.key : "--" + f.option;
    if (std::isfinite(f.lowest)) {
      auto said = refusal(f, f.lowest_open ? f.lowest : f.lowest - 1);
      CHECK_MESSAGE(said.rfind(name + " must be ", 0) == 0, said);
      CHECK(refusal(f, f.lowest_open ? f.lowest + 0.5 : f.lowest) == "(taken)");
    }
    if (std::isfinite(f.highest)) {
      auto said = refusal(f, f.highest_open ? f.highest : f.highest + 1);
      CHECK_MESSAGE(said.rfind(name + " must be ", 0) == 0, said);
    }
    if (!f.choices.empty()) {
      job_config cfg;
      std::get<field_ref<std::string>>(f.member).of(cfg) = "bogus";
      CHECK_THROWS_WITH_AS(validate(cfg), (name + " must be " + or_list(f.choices) + ", not 'bogus'").c_str(),
                           config_error);
    }
  }
  job_config nan;
  nan.lr = std::nan("");
  CHECK_THROWS_WITH_AS(validate(nan), "--lr must be a positive number", config_error);
  job_config replicas;
  replicas.ps_replicas = 3;
  CHECK_THROWS_WITH_AS(validate(replicas), "--ps-replicas must be 0, 1 or 2", config_error);
  job_config clip;
  clip.clip_norm = -1;
  CHECK_THROWS_WITH_AS(validate(clip), "--clip-norm must be >= 0 (0: no clipping)", config_error);
}

TEST_CASE("job schema: run.json holds every field of the job by its name") {
  job_config cfg;
  cfg.workers = 7;
  cfg.protocol_opts.set("staleness", "3");
  auto p = current_provenance("syncpoint train", cfg);
  CHECK(p.options.size() == job_fields().size());
  CHECK(p.options.at("workers") == "7");
  CHECK(p.options.at("protocol_opts") == "staleness=3");
  CHECK(p.options.at("max_time_s") == "0");
  auto dir = std::filesystem::temp_directory_path() / ("job-schema-run-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_provenance(dir.string(), p);
  auto text = read_text((dir / "run.json").string());
  for (auto& f : job_fields())
    CHECK_MESSAGE(text.find("\"" + f.key + "\"") != std::string::npos, f.key << " in " << text);
  std::filesystem::remove_all(dir);
}
