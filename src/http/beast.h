// Boost.Asio and Boost.Beast as the HTTP layer's sources name them: one set
// of includes and short names for the client, the async client and the
// server (private to src/http).
#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace zeus::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
using local = asio::local::stream_protocol;
using boost::system::error_code;

}  // namespace zeus::http
