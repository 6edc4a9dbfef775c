// The inside of http::Executor, for the .cc files of src/http only.
#pragma once

#include <boost/asio/any_io_executor.hpp>

#include "http/executor.h"

namespace zeus::http {

struct Executor::Impl {
  boost::asio::any_io_executor executor;
};

}  // namespace zeus::http
