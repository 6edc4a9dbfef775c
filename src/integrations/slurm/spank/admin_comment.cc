#include "integrations/slurm/spank/admin_comment.h"

#include <string_view>

#include "integrations/slurm/spank/run_command.h"

namespace zeus::slurm_internal {
namespace {

std::string failure_text(const CommandResult& r) {
  std::string text = r.exited ? "exit status " + std::to_string(r.exit_code) : r.error;
  std::string_view out = r.output;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.remove_suffix(1);
  if (!out.empty()) text += ": " + std::string(out.substr(0, 300));
  return text;
}

}  // namespace

std::string admin_comment_from_show_job(const std::string& output) {
  // `scontrol show job` prints AdminComment on a line of its own,
  // "   AdminComment=<text> ", so the value is the rest of that line.
  static constexpr std::string_view kKey = "AdminComment=";
  std::size_t at = 0;
  while (at < output.size()) {
    const auto eol = output.find('\n', at);
    std::string_view line(output.data() + at,
                          (eol == std::string::npos ? output.size() : eol) - at);
    at = eol == std::string::npos ? output.size() : eol + 1;
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (!line.starts_with(kKey)) continue;
    line.remove_prefix(kKey.size());
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    return std::string(line);
  }
  return "";
}

std::optional<std::string> read_admin_comment(const std::string& scontrol, const std::string& job,
                                              double timeout_s, std::string& error) {
  const auto r = run_command({scontrol, "show", "job", job}, timeout_s);
  if (!r.exited || r.exit_code != 0) {
    error = "scontrol show job " + job + ": " + failure_text(r);
    return std::nullopt;
  }
  return admin_comment_from_show_job(r.output);
}

bool write_admin_comment(const std::string& scontrol, const std::string& job,
                         const std::string& text, double timeout_s, std::string& error) {
  const auto r =
      run_command({scontrol, "update", "JobId=" + job, "AdminComment=" + text}, timeout_s);
  if (!r.exited || r.exit_code != 0) {
    error = "scontrol update JobId=" + job + " AdminComment=...: " + failure_text(r);
    return false;
  }
  return true;
}

}  // namespace zeus::slurm_internal
