// Boost.Asio for the refengine. Boost 1.74's awaitable.hpp uses std::exchange without
// including <utility>; going through this header keeps the order right whatever include
// sorting does.
#pragma once

// clang-format off
#include <utility>
#include <boost/asio.hpp>
// clang-format on
