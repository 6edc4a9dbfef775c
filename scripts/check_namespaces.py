#!/usr/bin/env python3
"""Namespaces follow the folders (docs/architecture.md, "One meaning per word").

Every namespace a library file under src/ or include/zeus/ opens must be its
folder's namespace (the longest folder of FOLDERS that holds the file), one
nested in it, an anonymous one, or a private helper's `zeus::<name>_internal`
/ `zeus::<name>_abi`. Opening an ancestor (`namespace zeus {` in a
batch-size file) counts as a mismatch: the declarations in it would land in
the wrong namespace.

A private header (under src/) that only its own part's files include (its
tests aside) holds that part's helpers: its names go in a
`zeus::<name>_internal` (or a nested `detail`), so a reader of a .cc file
tells the part's API from its plumbing. Parts only the programs use
(PROGRAMS_ONLY in CMakeLists.txt: zeusd, the simulator, the services'
servers...) install nothing, so the rule does not apply there; PRIVATE_OK
lists the headers it cannot apply to, with the reason.

  scripts/check_namespaces.py [ROOT]   exit 0: all follow; 1: mismatches listed
  scripts/check_namespaces.py --self-test   the checker against a made-up tree
"""

import os
import re
import sys

# folder (under src/ and include/zeus/) -> its namespace; longest folder wins.
FOLDERS = {
    "util": "zeus",
    "http": "zeus::http",
    "device": "zeus::device",
    "monitor": "zeus::monitor",
    "monitor/carbon": "zeus::carbon",
    "monitor/attribution": "zeus::attribution",
    "metric": "zeus::metric",
    "optimizer/callback": "zeus::callback",
    "optimizer/power_limit": "zeus::power_limit",
    "optimizer/power_limit/carbon_aware": "zeus::carbon_aware",
    "optimizer/batch_size": "zeus::batch_size",
    "optimizer/pipeline_frequency": "zeus::pipeline_frequency",
    "proxy": "zeus::proxy",
    "sim": "zeus::sim",
    "sim/paper": "zeus::sim::paper",
    "sim/carbon_aware": "zeus::sim::carbon_aware",
    "zeusd": "zeus::zeusd",
    "integrations/slurm": "zeus::slurm",
}

# Private headers that must open their part's own namespace.
PRIVATE_OK = {
    # Defines Executor::Impl, a member of the public class zeus::http::Executor.
    "src/http/executor_impl.h",
    # Aliases of Boost's names (asio, beast, tcp...) for the part's .cc files.
    "src/http/beast.h",
}

HELPER = re.compile(r"^zeus::\w+_(internal|abi)(::\w+)*$")
TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|'
                   r'\bnamespace\b\s*([\w:]*)\s*(=|\{)?|[{}]', re.S)


def opened_namespaces(text):
    """(line, full name, depth-0?) of each namespace the text opens."""
    stack = []  # per open brace: the namespace's full name, or None
    out = []
    for m in TOKEN.finditer(text):
        tok = m.group(0)
        if tok.startswith(("//", "/*", '"', "'")):
            continue
        if tok == "{":
            stack.append(None)
        elif tok == "}":
            if stack:
                stack.pop()
        elif m.group(2) == "{":
            name = m.group(1)
            outer = next((n for n in reversed(stack) if n is not None), "")
            full = name if not outer else (outer + "::" + name if name else outer + "::")
            line = text.count("\n", 0, m.start()) + 1
            out.append((line, full if name else "", all(n is None for n in stack)))
            stack.append(full if name else outer)
    return out


def expected(rel):
    best = ""
    for folder in FOLDERS:
        if (rel == folder or rel.startswith(folder + "/")) and len(folder) > len(best):
            best = folder
    if not best:
        return None, None
    return best, FOLDERS[best]


def check(root):
    problems = []
    for base in ("src", "include/zeus"):
        for dirpath, _, files in os.walk(os.path.join(root, base)):
            for f in sorted(files):
                if not f.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, f)
                rel_dir = os.path.relpath(dirpath, os.path.join(root, base))
                folder, want = expected(rel_dir)
                shown = os.path.relpath(path, root)
                if want is None:
                    problems.append(f"{shown}: folder {rel_dir} is in no row of FOLDERS")
                    continue
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                for line, name, top in opened_namespaces(text):
                    if name == "" or HELPER.match(name):
                        continue
                    if name == want or name.startswith(want + "::"):
                        continue
                    problems.append(f"{shown}:{line}: namespace {name} in {folder}/, "
                                    f"which is {want}")
    return problems


def part_lines(root):
    """(source folder relative to src/, the rest of its zeus_add_part line) per part."""
    path = os.path.join(root, "CMakeLists.txt")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    return re.findall(r"zeus_add_part\(\w+\s+src/(\S+)([^)]*)\)", text)


def programs_only_dirs(root):
    """The source folders (relative to src/) of the PROGRAMS_ONLY parts."""
    return {d for d, rest in part_lines(root) if "PROGRAMS_ONLY" in rest}


def includers(root):
    """'part/x.h' -> the files (relative to root) that include it by that name."""
    out = {}
    for base in ("src", "include", "apps", "python/src", "bench", "tests"):
        for dirpath, _, files in os.walk(os.path.join(root, base)):
            for f in files:
                if not f.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    for m in re.finditer(r'#include "([^"]+)"', fh.read()):
                        out.setdefault(m.group(1), []).append(os.path.relpath(path, root))
    return out


def internal_headers(root):
    """'dir/x.h' (relative to src/) of the headers parts list as INTERNAL_HEADERS."""
    out = set()
    for d, rest in part_lines(root):
        listed = re.search(r"INTERNAL_HEADERS((?:\s+[\w./]+\.h)+)", rest)
        if listed:
            out.update(d + "/" + h for h in listed.group(1).split())
    return out


def check_private(root):
    """Part-private headers of installed parts keep their names in a helper namespace.

    A header is shared (and keeps the part's namespace) when a part lists it
    in INTERNAL_HEADERS, or a file of another part, a program, the bindings, a
    benchmark, a header under include/ or another shared header includes it.
    """
    problems = []
    programs = programs_only_dirs(root)
    users = includers(root)
    src = os.path.join(root, "src")
    headers = []
    for dirpath, _, files in os.walk(src):
        headers += [os.path.relpath(os.path.join(dirpath, f), src) for f in files if f.endswith(".h")]
    folder_of = {h: expected(os.path.dirname(h))[0] for h in headers}
    shared = set(internal_headers(root))
    changed = True
    while changed:
        changed = False
        for h in headers:
            if h in shared:
                continue
            for u in users.get(h, []):
                inner = u[4:] if u.startswith("src/") else None
                if u.startswith("tests/"):
                    continue
                if inner is None or folder_of.get(inner, expected(os.path.dirname(inner))[0]) != \
                        folder_of[h] or inner in shared:
                    shared.add(h)
                    changed = True
                    break
    for h in sorted(headers):
        shown = "src/" + h
        folder = folder_of[h]
        if h in shared or shown in PRIVATE_OK or folder is None:
            continue
        if any(os.path.dirname(h) == d or os.path.dirname(h).startswith(d + "/") for d in programs):
            continue
        with open(os.path.join(src, h), encoding="utf-8") as fh:
            opened = opened_namespaces(fh.read())
        for line, name, _ in opened:
            if name and not HELPER.match(name) and "::detail" not in name:
                problems.append(f"{shown}:{line}: namespace {name} in a header only "
                                f"{folder}/ includes; its helpers go in zeus::<name>_internal")
    return problems


def self_test():
    """A tree with one file of each kind: only the bad ones are reported."""
    import tempfile
    files = {
        "src/proxy/good.cc": "namespace zeus::proxy {\nnamespace {\n}\n}\n",
        "src/proxy/helper.h": "namespace zeus::proxy_internal {\n}\n",
        "src/proxy/nested.cc": "namespace zeus::proxy {\nnamespace detail {\n}\n}\n",
        "src/proxy/comment.cc": "// namespace zeus {\nnamespace zeus::proxy {\n}\n",
        "src/proxy/alias.cc": "namespace fs = std::filesystem;\nnamespace zeus::proxy {}\n",
        "src/proxy/old_name.cc": "namespace zeus::bso {\n}\n",
        "src/proxy/ancestor.cc": "namespace zeus {\nnamespace proxy {\n}\n}\n",
        "include/zeus/sim/paper/wrong.h": "namespace zeus::sim {\n}\n",
        "src/device/plain.cc": "namespace zeus {\n}\n",
        "src/monitor/carbon/carbon.cc": "namespace zeus::carbon {\n}\n",
        "src/monitor/carbon/parent.cc": "namespace zeus::monitor {\n}\n",
        "src/nowhere/lost.cc": "namespace zeus {\n}\n",
        "src/metric/own.h": "namespace zeus::metric {\n}\n",
        "src/metric/own_helper.h": "namespace zeus::metric_internal {\n}\n",
        "src/metric/shared.h": "namespace zeus::metric {\n}\n",
        "src/metric/user.cc": '#include "metric/own.h"\n#include "metric/own_helper.h"\n',
        "apps/zeus/cmd.cc": '#include "metric/shared.h"\n',
        "src/zeusd/program.h": "namespace zeus::zeusd {\n}\n",
        "src/metric/listed.h": 'namespace zeus::metric {\n}\n#include "metric/via_listed.h"\n',
        "src/metric/via_listed.h": "namespace zeus::metric {\n}\n",
        "CMakeLists.txt": "zeus_add_part(zeusd src/zeusd DEPS zeus_util PROGRAMS_ONLY)\n"
                          "zeus_add_part(metric src/metric DEPS zeus_util INTERNAL_HEADERS listed.h)\n",
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        got = sorted(p.split(":")[0] for p in check(root) + check_private(root))
    want = sorted(["include/zeus/sim/paper/wrong.h", "src/nowhere/lost.cc", "src/metric/own.h",
                   "src/device/plain.cc", "src/monitor/carbon/parent.cc",
                   "src/proxy/ancestor.cc", "src/proxy/old_name.cc"])
    if got != want:
        print(f"self-test: reported {got}, expected {want}")
        return 1
    print("self-test: passed")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(os.path.abspath(root)) + check_private(os.path.abspath(root))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} namespace(s) do not follow their folder "
              "(scripts/check_namespaces.py, docs/architecture.md)")
        return 1
    print("namespaces follow the folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
