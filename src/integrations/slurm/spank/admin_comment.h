// The job's AdminComment through scontrol (admin only, so from slurmstepd,
// which runs as root): read the current text, write the merged one. scontrol
// rather than libslurm's slurm_update_job: a plugin that links libslurm into
// slurmstepd (which carries its own copy of Slurm's symbols) risks two copies
// of the same globals. It must run before the job ends: slurmctld refuses
// updates of a finished job.
#pragma once

#include <optional>
#include <string>

namespace zeus::slurm_internal {

// The AdminComment line of `scontrol show job` output ("" when there is none).
std::string admin_comment_from_show_job(const std::string& output);

// Reads the current AdminComment; std::nullopt with `error` set on failure.
std::optional<std::string> read_admin_comment(const std::string& scontrol, const std::string& job,
                                              double timeout_s, std::string& error);

// Sets it; false with `error` set on failure.
bool write_admin_comment(const std::string& scontrol, const std::string& job,
                         const std::string& text, double timeout_s, std::string& error);

}  // namespace zeus::slurm_internal
