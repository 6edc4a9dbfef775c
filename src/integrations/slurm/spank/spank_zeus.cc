// spank_zeus.so: tells the node's zeusd which processes and GPUs each Slurm
// job step has, and at the step's end writes the step's energy from zeusd's
// ledger to the records directory and the job's AdminComment (docs/slurm.md).
//
// Where each part runs (all in slurmstepd, as root, remote context only):
//   slurm_spank_init           parse the plugstack.conf arguments
//   slurm_spank_task_post_fork register the task's pid (before it execs), in
//                              the step's slurmstepd itself, so what went
//                              wrong is known when the step ends
//   slurm_spank_task_init      in the task, just before it execs: with
//                              on_error=fail and a failed registration, end
//                              the task (exit 1) with the reason in its output
//   slurm_spank_task_exit      after the last local task: end the step, write
//                              the record and AdminComment while the job
//                              still runs (slurmctld refuses updates after)
//   slurm_spank_exit           the same for a step whose tasks never all
//                              exited through task_exit (a failed launch)
// Every callback catches everything: an exception must not cross into C.
// With on_error=warn (the default) no failure of ours fails the user's step.
//
// Why on_error=fail does not fail task_post_fork itself: slurmstepd then
// reports the launch as "could not execve", which for a batch job drains the
// node (slurmctld blames the node), and srun still exits 0. A task that exits
// 1 before exec is an ordinary failed step, charged to the job. post_fork
// runs in slurmstepd before it releases the forked tasks to exec, so it
// passes its verdict to them through a page shared across the fork.
#include <pwd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "integrations/slurm/spank/admin_comment.h"
#include "integrations/slurm/spank/options.h"
#include "integrations/slurm/spank/records_dir.h"
#include "integrations/slurm/spank/step_record.h"
#include "integrations/slurm/spank/unix_http.h"

// spank.h declares the callbacks (slurm_spank_init, ...) outside its own
// extern "C" block, which would give them C++ linkage here.
extern "C" {
#include <slurm/spank.h>
}

extern "C" {
// SPANK_PLUGIN(zeus, 1), spelled out: in C++ a const at namespace scope has
// internal linkage, and Slurm's loader looks these symbols up.
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
const char plugin_name[] = "zeus";
const char plugin_type[] = "spank";
const unsigned int plugin_version = SLURM_VERSION_NUMBER;
const unsigned int spank_plugin_version = 1;
}

namespace zeus::slurm_internal {
namespace {

constexpr std::uint32_t kNoVal = 0xfffffffeU;  // slurm.h's NO_VAL

// One slurmstepd serves one step, so the step's state is the process's.
struct StepState {
  PluginOptions options;
  bool configured = false;
  bool started = false;
  bool finished = false;
  bool zeusd_unresponsive = false;  // a call timed out: later tasks skip it
  StepIdentity id;
  std::string gpus;
  double start_s = 0;
  std::uint32_t local_tasks = 0;
  std::uint32_t tasks_seen = 0;
  std::uint32_t tasks_registered = 0;
  std::uint32_t tasks_exited = 0;
  std::vector<std::string> problems;
  std::string first_failure;
  // on_error=fail only: mapped shared before the tasks fork; a non-empty
  // string there is why the tasks must not run.
  char* refusal = nullptr;
};

constexpr std::size_t kRefusalBytes = 4096;

// With on_error=fail: the tasks of this step will exit before exec, saying why.
void refuse_tasks(StepState& s, const std::string& why) {
  if (!s.options.fail_on_error || s.refusal == nullptr || s.refusal[0] != '\0') return;
  const std::string text =
      "spank_zeus: on_error=fail: the step does not run: " + why.substr(0, kRefusalBytes - 100);
  std::memcpy(s.refusal, text.c_str(), text.size() + 1);
}

StepState& state() {
  static StepState s;
  return s;
}

double now_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

void log_error(const std::string& message) { slurm_error("spank_zeus: %s", message.c_str()); }
void log_info(const std::string& message) { slurm_verbose("spank_zeus: %s", message.c_str()); }

std::string getenv_of(spank_t sp, const char* name) {
  char buffer[4096];
  if (spank_getenv(sp, name, buffer, sizeof(buffer)) != ESPANK_SUCCESS) return "";
  return buffer;
}

std::string user_name(uid_t uid) {
  passwd pw{};
  passwd* found = nullptr;
  char buffer[4096];
  if (::getpwuid_r(uid, &pw, buffer, sizeof(buffer), &found) != 0 || found == nullptr) return "";
  return found->pw_name;
}

// The host's name (slurmd's NodeName may differ; the records say where
// they were written).
std::string node_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) return "";
  return host;
}

// The step's identity and GPUs, read once at its first task.
void begin_step(spank_t sp, StepState& s) {
  std::uint32_t job = 0, step = 0, local = 0;
  uid_t uid = 0;
  spank_get_item(sp, S_JOB_ID, &job);
  spank_get_item(sp, S_JOB_STEPID, &step);
  spank_get_item(sp, S_JOB_UID, &uid);
  if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local) == ESPANK_SUCCESS) s.local_tasks = local;
  s.id.job = std::to_string(job);
  s.id.step = step_name(step);
  s.id.uid = uid;
  s.id.user = user_name(uid);
  s.id.node = node_name();
  std::uint32_t array_job = 0, array_task = 0;
  // A job outside an array answers its own id with task NO_VAL.
  if (spank_get_item(sp, S_JOB_ARRAY_ID, &array_job) == ESPANK_SUCCESS && array_job != 0 &&
      spank_get_item(sp, S_JOB_ARRAY_TASK_ID, &array_task) == ESPANK_SUCCESS &&
      array_task != kNoVal) {
    s.id.array_job = array_job;
    s.id.array_task = array_task;
  }
  // Global indices: the step's own GPUs, else the job's (a batch script).
  // CUDA_VISIBLE_DEVICES would be the task's renumbered view.
  std::string raw = getenv_of(sp, "SLURM_STEP_GPUS");
  if (raw.empty()) raw = getenv_of(sp, "SLURM_JOB_GPUS");
  s.gpus = gpu_list(raw);
  if (!raw.empty() && s.gpus.empty()) {
    s.problems.push_back("GPUs: cannot read the GPU list '" + raw.substr(0, 100) + "'");
  }
  s.start_s = now_s();
  s.started = true;
}

// Registers one task's pid; false when zeusd did not take it.
bool register_task(StepState& s, pid_t pid) {
  std::string why;
  if (s.zeusd_unresponsive) {
    why = "not tried: zeusd did not answer for an earlier task";
  } else {
    try {
      const auto reply = http_request(
          s.options.socket, "POST",
          "/attribution/jobs/start?" + start_query(s.id, {static_cast<long>(pid)}, s.gpus),
          s.options.timeout_s);
      if (reply.status == 200) return true;
      why = "zeusd answered " + std::to_string(reply.status) + ": " + reply.body.substr(0, 300);
    } catch (const HttpFailure& e) {
      why = e.what();
      if (why.starts_with("timed out")) s.zeusd_unresponsive = true;
    }
  }
  if (s.first_failure.empty()) s.first_failure = why;
  s.problems.push_back("task pid " + std::to_string(pid) + " not registered with zeusd (" +
                       s.options.socket + "): " + why);
  return false;
}

// Asks zeusd for the step's record.
void end_with_zeusd(StepState& s, StepOutcome& outcome) {
  try {
    const auto reply = http_request(
        s.options.socket, "POST", "/attribution/jobs/end?" + end_query(s.id), s.options.timeout_s);
    if (reply.status == 200) {
      auto j = nlohmann::json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
      if (j.is_object()) {
        outcome.ledger = std::move(j);
        return;
      }
      outcome.error = "zeusd's answer to /attribution/jobs/end is not a JSON object";
    } else if (reply.status == 404) {
      outcome.error =
          "zeusd has no record of this step (restarted during the step, or the step "
          "was never registered)";
    } else {
      outcome.error =
          "zeusd answered " + std::to_string(reply.status) + ": " + reply.body.substr(0, 300);
    }
  } catch (const HttpFailure& e) {
    outcome.error =
        std::string("zeusd unreachable at the step's end (") + s.options.socket + "): " + e.what();
  }
  if (s.tasks_registered == 0 && !s.first_failure.empty()) {
    outcome.error = "not registered with zeusd at the step's start (" + s.first_failure +
                    "); at its end: " + outcome.error;
  }
}

// At the step's start, a record that says its energy is unknown, replaced at
// its end: if slurmstepd never gets there (the node rebooted or crashed, the
// daemon was killed), the record that stays says what is missing rather
// than nothing at all.
void write_provisional_record(StepState& s) {
  StepOutcome outcome;
  outcome.id = s.id;
  outcome.start_s = s.start_s;
  outcome.end_s = s.start_s;
  outcome.error =
      "the step did not end on this node while the plugin ran: slurmstepd or the node went "
      "down before the step's end (a reboot, a crash), so its energy is unknown";
  try {
    ensure_directory(s.options.records);
    DirectoryLock lock(s.options.records, s.options.timeout_s);
    write_record_atomically(s.options.records, record_file_name(s.id), make_record(outcome).dump());
  } catch (const std::exception& e) {
    log_error(std::string("step record not written at the step's start: ") + e.what());
  }
}

// The job's summary into AdminComment, other keys kept.
void update_admin_comment(StepState& s, const nlohmann::json& summary) {
  std::string error;
  const auto current = read_admin_comment(s.options.scontrol, s.id.job, s.options.timeout_s, error);
  if (!current) {
    log_error("AdminComment not updated: " + error);
    return;
  }
  const auto merged = merge_admin_comment(*current, summary);
  if (!merged) {
    log_error("AdminComment of job " + s.id.job +
              " is text that is not a JSON object; leaving it as it is (the record is in " +
              s.options.records + ")");
    return;
  }
  if (!write_admin_comment(s.options.scontrol, s.id.job, *merged, s.options.timeout_s, error)) {
    log_error("AdminComment not updated: " + error);
  }
}

// Ends the step once: record, then AdminComment. Returns false when
// something was missing (on_error=fail turns that into a failed step).
bool finish_step(StepState& s) {
  if (!s.started || s.finished) return true;
  s.finished = true;
  StepOutcome outcome;
  outcome.id = s.id;
  outcome.start_s = s.start_s;
  end_with_zeusd(s, outcome);
  outcome.end_s = now_s();
  outcome.problems = s.problems;
  const nlohmann::json record = make_record(outcome);
  const bool complete = outcome.ledger.has_value() && s.problems.empty();
  try {
    ensure_directory(s.options.records);
    DirectoryLock lock(s.options.records, s.options.timeout_s);
    write_record_atomically(s.options.records, record_file_name(s.id), record.dump());
    update_admin_comment(s, job_summary(read_job_records(s.options.records, s.id.job)));
  } catch (const std::exception& e) {
    log_error(std::string("step record not written: ") + e.what());
    return false;
  }
  if (complete) {
    log_info("job " + s.id.job + " step " + s.id.step + ": record written to " + s.options.records);
  } else {
    log_error("job " + s.id.job + " step " + s.id.step +
              ": energy incomplete: " + record["missing"].dump());
  }
  return complete;
}

}  // namespace
}  // namespace zeus::slurm_internal

namespace zsi = zeus::slurm_internal;

extern "C" {

int slurm_spank_init(spank_t sp, int ac, char** av) {
  try {
    if (spank_remote(sp) != 1) return 0;
    std::vector<std::string> errors;
    auto& s = zsi::state();
    s.options = zsi::parse_options(ac, av, errors);
    s.configured = true;
    for (const auto& e : errors) zsi::log_error(e);
    if (s.options.fail_on_error) {
      void* page = ::mmap(nullptr, zsi::kRefusalBytes, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      if (page == MAP_FAILED) {
        zsi::log_error("on_error=fail cannot be honoured: mmap failed");
      } else {
        s.refusal = static_cast<char*>(page);
        s.refusal[0] = '\0';
      }
    }
  } catch (const std::exception& e) {
    zsi::log_error(e.what());
  }
  return 0;
}

int slurm_spank_task_post_fork(spank_t sp, int, char**) {
  try {
    auto& s = zsi::state();
    if (!s.configured || spank_remote(sp) != 1) return 0;
    if (!s.started) {
      zsi::begin_step(sp, s);
      zsi::write_provisional_record(s);
    }
    pid_t pid = 0;
    if (spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS) {
      s.problems.push_back("a task's pid was not available to the plugin");
      zsi::refuse_tasks(s, s.problems.back());
      return 0;
    }
    ++s.tasks_seen;
    if (zsi::register_task(s, pid)) {
      ++s.tasks_registered;
      return 0;
    }
    zsi::log_error(s.problems.back());
    zsi::refuse_tasks(s, s.problems.back());
    return 0;  // not -1 even with on_error=fail: see the top
  } catch (const std::exception& e) {
    zsi::log_error(e.what());
    zsi::refuse_tasks(zsi::state(), e.what());
    return 0;
  }
}

int slurm_spank_task_init(spank_t sp, int, char**) {
  try {
    const auto& s = zsi::state();
    if (s.refusal == nullptr || s.refusal[0] == '\0' || spank_remote(sp) != 1) return 0;
    // In the task, whose stderr is the job's output: the user reads why.
    zsi::log_error(std::string(s.refusal).substr(std::strlen("spank_zeus: ")));
    return -1;  // slurmstepd ends the task with exit status 1
  } catch (const std::exception&) {
    return -1;
  }
}

int slurm_spank_task_exit(spank_t sp, int, char**) {
  try {
    auto& s = zsi::state();
    if (!s.configured || !s.started || spank_remote(sp) != 1) return 0;
    ++s.tasks_exited;
    if (s.local_tasks == 0 || s.tasks_exited < s.local_tasks) return 0;
    return zsi::finish_step(s) || !s.options.fail_on_error ? 0 : -1;
  } catch (const std::exception& e) {
    zsi::log_error(e.what());
    return zsi::state().options.fail_on_error ? -1 : 0;
  }
}

int slurm_spank_exit(spank_t sp, int, char**) {
  try {
    auto& s = zsi::state();
    if (!s.configured || spank_remote(sp) != 1) return 0;
    return zsi::finish_step(s) || !s.options.fail_on_error ? 0 : -1;
  } catch (const std::exception& e) {
    zsi::log_error(e.what());
    return zsi::state().options.fail_on_error ? -1 : 0;
  }
}

}  // extern "C"
