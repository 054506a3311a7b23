// Moved to the public headers: <syncpoint/data_registry.hpp> (include/syncpoint/).
#pragma once

#include <syncpoint/data_registry.hpp>
