// The records directory on a node: one file per step, each one JSON line,
// written atomically (temporary file, fsync, rename) so a reader never sees
// half a record, and a lock that serializes the read-modify-write of a job's
// AdminComment between two steps that end at once.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace zeus::slurm_internal {

// Creates `dir` and its parents (mode 755) when missing. Throws
// std::runtime_error naming the path.
void ensure_directory(const std::string& dir);

// Writes `line` + '\n' to dir/name through dir/.name.XXXXXX (mode 644).
void write_record_atomically(const std::string& dir, const std::string& name,
                             const std::string& line);

// The records of `job` in `dir` ("<job>.<step>.json"), parsed; unreadable or
// malformed files are skipped.
std::vector<nlohmann::json> read_job_records(const std::string& dir, const std::string& job);

// An exclusive flock on dir/.lock, released by the destructor; waits at most
// `timeout_s` (then proceeds unlocked: a stuck peer must not hang a step).
class DirectoryLock {
 public:
  DirectoryLock(const std::string& dir, double timeout_s);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  bool held() const { return held_; }

 private:
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace zeus::slurm_internal
