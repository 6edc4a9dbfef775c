// Where the data the commands ship with (the paper's traces, example
// profiles) lives at run time, so an installed or copied program finds it
// without any build-tree path compiled in (docs/install.md).
#pragma once

#include <string>
#include <string_view>

namespace zeus {

// The folder of the project's data set `name` (e.g. "zeus-traces"):
// $ZEUS_DATA_DIR/<name> when ZEUS_DATA_DIR is set, else
// <folder of the running program>/../share/zeus/<name>: the install layout
// (/usr/bin/zeus -> /usr/share/zeus/...), which the build tree mirrors
// (build/share/zeus links to the source tree's data/). Returns that path
// even when it does not exist, so the caller's "not found" names it.
std::string data_dir(std::string_view name);

}  // namespace zeus
