#include "core/straggler.hpp"

#include <doctest/doctest.h>

using namespace syncpoint;

TEST_CASE("straggler: the three forms and their combination") {
  auto p = straggler_plan::parse("3:x4; 1:x2@10-20;2:+50ms;0:+1.5s@5-6");
  REQUIRE(p.items().size() == 4);
  CHECK(p.factor(3, 0) == 4.0);
  CHECK(p.factor(3, 1e6) == 4.0);
  CHECK(p.factor(1, 9.99) == 1.0);
  CHECK(p.factor(1, 10) == 2.0);
  CHECK(p.factor(1, 19.99) == 2.0);
  CHECK(p.factor(1, 20) == 1.0);
  CHECK(p.extra_s(2, 0) == doctest::Approx(0.05));
  CHECK(p.extra_s(0, 5.5) == doctest::Approx(1.5));
  CHECK(p.extra_s(0, 6.5) == 0.0);
  CHECK(p.factor(0, 0) == 1.0);
  CHECK(straggler_plan::parse("").empty());
  CHECK(straggler_plan::parse("1:+200us").extra_s(1, 0) == doctest::Approx(2e-4));
  CHECK_NOTHROW(p.check_workers(4));
  CHECK_THROWS_WITH_AS(p.check_workers(3), "straggler item for worker 3: only workers 0..2 exist",
                       straggler_error);
}

TEST_CASE("straggler: malformed specs name the offending part") {
  auto message = [](const std::string& spec) {
    try {
      straggler_plan::parse(spec);
    } catch (const straggler_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("3x4") == "straggler item '3x4': expected W:xF, W:xF@T1-T2 or W:+Dms");
  CHECK(message("a:x4") == "straggler item 'a:x4': worker 'a' is not a worker index");
  CHECK(message("3:x") == "straggler item '3:x': effect 'x' must be xF (slowdown) or +D<unit> (extra delay)");
  CHECK(message("3:xfour") == "straggler item '3:xfour': factor 'four' is not a number");
  CHECK(message("3:x0") == "straggler item '3:x0': factor must be in [1e-6, 1e6]");
  CHECK(message("3:x1e300") == "straggler item '3:x1e300': factor must be in [1e-6, 1e6]");
  CHECK(message("3:x1e-7") == "straggler item '3:x1e-7': factor must be in [1e-6, 1e6]");
  CHECK(message("3:+1e300s") == "straggler item '3:+1e300s': delay must be in [0, 1e6] s");
  CHECK(message("4294967296:x2").find("is not a worker index") != std::string::npos);
  CHECK(message("3:x2@5") == "straggler item '3:x2@5': window '5' must be T1-T2 (seconds)");
  CHECK(message("3:x2@9-5") == "straggler item '3:x2@9-5': window '9-5' must satisfy 0 <= T1 < T2");
  CHECK(message("3:+50") == "straggler item '3:+50': delay '+50' needs a unit (ms, us or s)");
  CHECK(message("3:+fastms") == "straggler item '3:+fastms': delay 'fast' is not a number");
  CHECK(message("1:x2;;3:x4") == "straggler spec '1:x2;;3:x4': empty item");
  CHECK(message("1:x2;3:y4").find("'3:y4'") != std::string::npos);
  // Items that overlap combine; the combination is held to one item's bounds.
  CHECK(message("2:x1e4;2:x1e3") ==
        "straggler spec: worker 2's factors multiply to 1e+07 at t=0 s; the product must be in [1e-6, 1e6]");
  CHECK(message("2:x1e4;1:x1e3;2:x1e3@5-6") ==
        "straggler spec: worker 2's factors multiply to 1e+07 at t=5 s; the product must be in [1e-6, 1e6]");
  CHECK(message("0:x1e-4@0-10;0:x1e-4@3-4") ==
        "straggler spec: worker 0's factors multiply to 1e-08 at t=3 s; the product must be in [1e-6, 1e6]");
  CHECK(message("0:+6e5s;0:+6e5s@1-2") ==
        "straggler spec: worker 0's delays add up to 1.2e+06 s at t=1 s; the sum must be at most 1e6 s");
  // ... but windows that only touch never overlap.
  CHECK(message("2:x1e6@0-10;2:x1e6@10-20") == "no error");
  CHECK(message("2:x1e6;2:x1e-6@5-6") == "no error");
}
