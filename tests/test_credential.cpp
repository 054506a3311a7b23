// A secret in a cluster message (runtime/cluster/wire/interfaces.hpp,
// `credential`): it crosses processes whole, compares in constant time, and
// no message's text (CAF's to_string: what logs and render write) shows it.
#include "runtime/cluster/wire/interfaces.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/deep_to_string.hpp>

#include <doctest/doctest.h>

#include <type_traits>

using namespace syncpoint;
using namespace syncpoint::cluster;

TEST_CASE("credential: a secret crosses processes whole, and no message's text shows it") {
  caf::actor_system_config cfg;
  register_cluster_messages(cfg);
  caf::actor_system sys{cfg};
  auto msg = caf::make_message(stop_atom::value, uint64_t{7}, credential{"s3cret-t0ken"}, std::string("interrupted"));
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE(!sink(msg));
  caf::message back;
  caf::binary_deserializer source{sys, buf};
  REQUIRE(!source(back));
  REQUIRE(back.match_elements<stop_atom, uint64_t, credential, std::string>());
  CHECK(back.get_as<credential>(2).text == "s3cret-t0ken");
  CHECK(same_secret(back.get_as<credential>(2), "s3cret-t0ken"));
  CHECK(!same_secret(back.get_as<credential>(2), "s3cret-t0keN"));

  auto text = caf::to_string(back);
  CHECK_MESSAGE(text.find("s3cret") == std::string::npos, text);
  CHECK_MESSAGE(text.find("interrupted") != std::string::npos, text);  // the rest is written as before
  node_hello hello{"node-a", 2, "fingerprint", "n0de-t0ken", "clust3r-t0ken"};
  auto hello_text = caf::deep_to_string(hello);
  CHECK_MESSAGE(hello_text.find("node-a") != std::string::npos, hello_text);
  CHECK_MESSAGE(hello_text.find("t0ken") == std::string::npos, hello_text);

  // A plain string is not a secret: the head's and a node's handlers take a credential only.
  using stop_by_string = caf::replies_to<stop_atom, uint64_t, std::string, std::string>::with<bool>;
  using stop_by_credential = caf::replies_to<stop_atom, uint64_t, credential, std::string>::with<bool>;
  CHECK(caf::detail::tl_contains<head_actor::signatures, stop_by_credential>::value);
  CHECK(!caf::detail::tl_contains<head_actor::signatures, stop_by_string>::value);
}
