// Files that a privileged daemon reads and acts on (command overrides, the
// token signing key) must be changeable only by root or the daemon's own
// user: otherwise whoever can change them runs commands or mints tokens with
// the daemon's privileges.
#pragma once

#include <string>
#include <string_view>

namespace zeus::zeusd {

// Throws kNoPermission, naming the fix, when the file at `path` or any
// directory on its resolved path could be changed by another user: owned by
// someone other than root or the effective user, writable by others, writable
// by a group other than root's, or in a directory where others (or a non-root
// group) may replace it (writable without the sticky bit). Throws kIo when
// the path does not resolve. `what` names the file in messages.
void require_only_trusted_writers(const std::string& path, std::string_view what);

}  // namespace zeus::zeusd
