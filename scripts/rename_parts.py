#!/usr/bin/env python3
"""One mechanical step of issue 33: names follow the rooms.

Re-runnable on a clean checkout (each move and replacement is skipped once
done). What it does:

* namespaces: zeus::bso -> zeus::batch_size, zeus::perseus ->
  zeus::pipeline_frequency, zeus::sim::chase -> zeus::sim::carbon_aware;
* folders without paper names: optimizer/power_limit/chase joins
  optimizer/power_limit/carbon_aware (one room for carbon-aware power limits),
  sim/chase becomes sim/carbon_aware, tests/integration/{bso,perseus_server}
  become {batch_size,pipeline_frequency_server}, the test helpers, fuzz
  targets and test suites named for the papers are named for their parts;
* every path, include and part name that pointed at the old places.

docs/benchmarks.md keeps its history as written.

  scripts/rename_parts.py [--dry-run]
"""

import os
import re
import subprocess
import sys

DRY = "--dry-run" in sys.argv

# (old path, new path): files and folders, moved with git mv.
MOVES = [
    ("include/zeus/optimizer/power_limit/chase/chase_controller.h",
     "include/zeus/optimizer/power_limit/carbon_aware/chase_controller.h"),
    ("include/zeus/optimizer/power_limit/chase/provider_source.h",
     "include/zeus/optimizer/power_limit/carbon_aware/provider_source.h"),
    ("src/optimizer/power_limit/chase/chase_controller.cc",
     "src/optimizer/power_limit/carbon_aware/chase_controller.cc"),
    ("src/optimizer/power_limit/chase/provider_source.cc",
     "src/optimizer/power_limit/carbon_aware/provider_source.cc"),
    ("tests/unit/optimizer/power_limit/chase/chase_controller_test.cc",
     "tests/unit/optimizer/power_limit/carbon_aware/chase_controller_test.cc"),
    ("include/zeus/sim/chase", "include/zeus/sim/carbon_aware"),
    ("src/sim/chase", "src/sim/carbon_aware"),
    ("tests/integration/bso", "tests/integration/batch_size"),
    ("tests/integration/perseus_server", "tests/integration/pipeline_frequency_server"),
    ("tests/unit/optimizer/batch_size/service/bso_test_helpers.h",
     "tests/unit/optimizer/batch_size/service/service_test_helpers.h"),
    ("tests/unit/optimizer/batch_size/service/bso_test_helpers.cc",
     "tests/unit/optimizer/batch_size/service/service_test_helpers.cc"),
    ("tests/unit/optimizer/pipeline_frequency/pfo_test_helpers.h",
     "tests/unit/optimizer/pipeline_frequency/pipeline_frequency_test_helpers.h"),
    ("tests/unit/optimizer/pipeline_frequency/pfo_test_helpers.cc",
     "tests/unit/optimizer/pipeline_frequency/pipeline_frequency_test_helpers.cc"),
    ("tests/unit/optimizer/pipeline_frequency/planner/perseus_test_helpers.h",
     "tests/unit/optimizer/pipeline_frequency/planner/planner_test_helpers.h"),
    ("tests/unit/optimizer/pipeline_frequency/planner/perseus_test_helpers.cc",
     "tests/unit/optimizer/pipeline_frequency/planner/planner_test_helpers.cc"),
    ("tests/workloads/bso_w1.h", "tests/workloads/batch_size_w1.h"),
    ("tests/fuzz/fuzz_bso_body.cc", "tests/fuzz/fuzz_batch_size_body.cc"),
    ("tests/fuzz/fuzz_perseus_plans.cc", "tests/fuzz/fuzz_pipeline_frequency_plans.cc"),
    ("tests/fuzz/fuzz_perseus_profile.cc", "tests/fuzz/fuzz_pipeline_frequency_profile.cc"),
    ("tests/fuzz/corpus/bso_body", "tests/fuzz/corpus/batch_size_body"),
    ("tests/fuzz/corpus/perseus_plans", "tests/fuzz/corpus/pipeline_frequency_plans"),
    ("tests/fuzz/corpus/perseus_profile", "tests/fuzz/corpus/pipeline_frequency_profile"),
]

# Text replacements in every tracked text file (regex, replacement).
TEXT = [
    # Paths and include lines (the longer, more specific ones first).
    (r"optimizer/power_limit/chase/", "optimizer/power_limit/carbon_aware/"),
    (r"optimizer/power_limit/chase\b", "optimizer/power_limit/carbon_aware"),
    (r"\bsim/chase\b", "sim/carbon_aware"),
    (r"tests/integration/bso\b", "tests/integration/batch_size"),
    (r"tests/integration/perseus_server\b", "tests/integration/pipeline_frequency_server"),
    (r"\bbso_test_helpers\b", "service_test_helpers"),
    (r"\bpfo_test_helpers\b", "pipeline_frequency_test_helpers"),
    (r"\bperseus_test_helpers\b", "planner_test_helpers"),
    (r"\bbso_w1\b", "batch_size_w1"),
    (r"\bfuzz_bso_body\b", "fuzz_batch_size_body"),
    (r"\bfuzz_perseus_plans\b", "fuzz_pipeline_frequency_plans"),
    (r"\bfuzz_perseus_profile\b", "fuzz_pipeline_frequency_profile"),
    (r"corpus/bso_body\b", "corpus/batch_size_body"),
    (r"corpus/perseus_(plans|profile)\b", r"corpus/pipeline_frequency_\1"),
    # Part names.
    (r"\bsim_chase\b", "sim_carbon_aware"),
    (r"\bperseus_server_upstream_client\b", "pipeline_frequency_server_upstream_client"),
    (r"\bbso_crash_short\b", "batch_size_crash_short"),
    # Test suites of the library's parts (the suites of the commands, `BsoCli`,
    # `PerseusCli`..., keep the commands' names, as the commands do).
    # (with "Test": a suite may be a fixture class, which must not take the
    # name of the class it tests)
    (r"\bBso(Service|Api|Client|Policy|Postgres|Fuzz)\b", r"BatchSize\1Test"),
    (r"\bPfo(JobManager|Messages|PlanSources|Controller|Optimizer|HttpApi|Straggler|"
     r"PointSolution|Emulation|ThreeDParallel|ProfiledGpu)\b", r"PipelineFrequency\1Test"),
    (r"\bPerseusPlannerTest\b", "PlannerTest"),
    (r"\bPerseus(Fixture|Estimate|ProfileBounds|Dag|CostModel|Menu|DeepGraph|SpecialFiles|"
     r"Property|Profile|PlansJson|Options)Test\b", r"Planner\1Test"),
]

# C++ only: namespaces and their qualifiers.
CXX = [
    (r"\bzeus::bso\b", "zeus::batch_size"),
    (r"(?<![\w:])bso::", "batch_size::"),
    (r"\bzeus::perseus\b", "zeus::pipeline_frequency"),
    (r"(?<![\w:])perseus::", "pipeline_frequency::"),
    (r"\bzeus::sim::chase\b", "zeus::sim::carbon_aware"),
    (r"\bsim::chase::", "sim::carbon_aware::"),
    (r"(?<![\w:])chase::", "carbon_aware::"),
    (r"\bZEUS_SIM_CHASE_", "ZEUS_SIM_CARBON_AWARE_"),
]

KEEP_AS_WRITTEN = {"docs/benchmarks.md", "scripts/rename_parts.py"}
CXX_EXT = (".h", ".cc", ".cpp", ".hpp")


def git(*args):
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def move(old, new):
    if not os.path.exists(old):
        return
    print(f"git mv {old} {new}")
    if not DRY:
        os.makedirs(os.path.dirname(new), exist_ok=True)
        git("mv", old, new)
        parent = os.path.dirname(old)
        while parent and os.path.isdir(parent) and not os.listdir(parent):
            os.rmdir(parent)
            parent = os.path.dirname(parent)


def rewrite(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
        return
    out = text
    for pattern, repl in TEXT:
        out = re.sub(pattern, repl, out)
    if path.endswith(CXX_EXT):
        for pattern, repl in CXX:
            out = re.sub(pattern, repl, out)
    if out != text:
        print(f"edit {path}")
        if not DRY:
            with open(path, "w", encoding="utf-8") as f:
                f.write(out)


def main():
    os.chdir(git("rev-parse", "--show-toplevel").strip())
    for old, new in MOVES:
        move(old, new)
    for path in git("ls-files").splitlines():
        if path in KEEP_AS_WRITTEN or not os.path.isfile(path):
            continue
        rewrite(path)


if __name__ == "__main__":
    main()
