// error_words (runtime/cluster/wire/connect.hpp): the words of an error a peer or
// CAF gave. An error with no context at all (CAF's own, such as a request to
// an actor that is gone) must be rendered, not read past its end: the
// submitter that reattached to a head coming back crashed on exactly that.
#include "runtime/cluster/wire/connect.hpp"

#include <doctest/doctest.h>

using namespace syncpoint;
using namespace syncpoint::cluster;

TEST_CASE("error_words: a message in the context is the words, and an error without context is CAF's rendering") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  CHECK(error_words(sys, make_error(sp_error::bad_input, "node 'a' offers 0 slots")) == "node 'a' offers 0 slots");
  caf::error bare = caf::sec::request_receiver_down;
  REQUIRE(bare.context().empty());
  CHECK(error_words(sys, bare) == sys.render(bare));
  CHECK(error_words(sys, caf::make_error(caf::sec::runtime_error, int32_t{7})) ==
        sys.render(caf::make_error(caf::sec::runtime_error, int32_t{7})));
}
