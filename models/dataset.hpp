// Moved to the public headers: <syncpoint/dataset.hpp> (include/syncpoint/).
#pragma once

#include <syncpoint/dataset.hpp>
