// rapidjson as cereal's JSON archive configures it. Every file that includes
// rapidjson must see one definition of RAPIDJSON_ASSERT: cereal's throws
// (cereal::RapidJSONException), rapidjson's own asserts (nothing under
// NDEBUG), and the linker keeps one copy of each inline function, so two
// definitions would let cereal's checks vanish (ASan builds caught it).
#pragma once

#include <cereal/archives/json.hpp>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
