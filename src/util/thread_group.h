// Work spread over threads that must not take the process down: an exception
// thrown in a thread would call std::terminate, and so would destroying a
// joinable std::thread when starting the next one fails (the OS is out of
// threads or memory). run_on_threads owns both cases, so its callers cannot
// forget one.
#pragma once

#include <cstddef>
#include <functional>
#include <thread>

namespace zeus {

// Starts a thread that runs `body` (a seam: tests make it fail).
using ThreadStarter = std::function<std::thread(std::function<void()> body)>;

// Runs body(i) for i in [0, count) on a thread each and joins them all.
// * An exception thrown by a body is caught in its thread; after every thread
//   has been joined the first one is rethrown in the caller.
// * When a thread cannot be started, `stop` is called (it must make the
//   started bodies return soon), the started threads are joined, and
//   kResourceExhausted is thrown naming how many could be started.
// `start` defaults to constructing a std::thread.
void run_on_threads(std::size_t count, const std::function<void(std::size_t)>& body,
                    const std::function<void()>& stop, const ThreadStarter& start = {});

}  // namespace zeus
