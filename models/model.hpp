// Moved to the public headers: <syncpoint/model.hpp> (include/syncpoint/).
#pragma once

#include <syncpoint/model.hpp>
