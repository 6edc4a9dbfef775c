#!/usr/bin/env python3
"""The man pages of zeus and zeusd (ctest: help_docs_man).

Generates them from the built programs with packaging/help_docs.py, then
checks them against the programs' own --help, read here by a separate,
plainer walk (the lines of each "Subcommands:" and "Options:" section):

* every command `PROGRAM --help` lists, recursively, has its subsection,
  and every option each command's --help lists is in that subsection;
* the sections a user looks for are there: NAME, SYNOPSIS, DESCRIPTION,
  COMMANDS, ENVIRONMENT (every variable `zeus show-env --help` names, and the
  zeusd client's), EXIT STATUS (zeusd's 75), FILES (zeusd's socket and
  /etc/default/zeusd), SEE ALSO;
* `groff -man -Tutf8 -ww` renders them without a warning, every hyphen as
  the ASCII one users type (no troff hyphen U+2010: every '-' escaped), when
  groff is installed;
* text that troff would read as requests or escapes (a line starting with
  '.' or "'", backslashes, font escapes, non-ASCII) comes out as written,
  through a stand-in program whose --help has all of them.

  check_man.py GENERATOR SECTIONS_DIR ZEUS ZEUSD
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def help_text(program, path):
    r = subprocess.run([program] + path + ["--help"], capture_output=True, text=True,
                       env=dict(os.environ, ZEUS_LOG_LEVEL="off"))
    assert r.returncode == 0, (program, path, r.stderr)
    return r.stdout


def block(text, header):
    """The lines of one section ("Options:") of a help text."""
    m = re.search(r"^%s\n((?:  .*\n?)*)" % re.escape(header), text, re.M)
    return m.group(1).splitlines() if m else []


def commands(program, path=()):
    """{command path: [its option flags]}, walked the plain way."""
    text = help_text(program, list(path))
    flags = []
    for line in block(text, "Options:"):
        m = re.match(r"^  (-\S+)", line)
        if m:
            flags += m.group(1).split(",")
    out = {path: flags}
    for line in block(text, "Subcommands:"):
        m = re.match(r"^  (\S+)", line)
        if m:
            out.update(commands(program, path + (m.group(1),)))
    return out


def generate(generator, program, name, section, sections, out_dir):
    page = os.path.join(out_dir, "%s.%s" % (name, section))
    subprocess.run([sys.executable, generator, "--program", program, "--name", name,
                    "--section", section, "--version", "0.0.0-test", "--sections", sections,
                    "--man", page], check=True)
    return page


def render(page):
    """(plain text, groff's warnings), or None without groff."""
    if not shutil.which("groff"):
        return None
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-P-cbou", page],
                       capture_output=True, env=dict(os.environ, LC_ALL="C.UTF-8"))
    return r.stdout.decode("utf-8"), r.stderr.decode("utf-8", "replace") + (
        "" if r.returncode == 0 else "groff exit status %d" % r.returncode)


def sections_of(text):
    """{section title: its text} of a rendered page (titles at column 0)."""
    out, title = {}, None
    for line in text.splitlines():
        if re.match(r"^[A-Z][A-Z ]+$", line):
            title = line.strip()
            out[title] = ""
        elif title:
            out[title] += line + "\n"
    return out


def subsections_of(text):
    """{subsection title: its text}: titles indented by 3 spaces (.SS)."""
    out, title = {}, None
    for line in text.splitlines():
        m = re.match(r"^   (\S.*)$", line)
        if m and not line.startswith("    "):
            title = m.group(1).strip()
            out[title] = ""
        elif re.match(r"^\S", line):
            title = None
        elif title:
            out[title] += line + "\n"
    return out


def has_word(text, word):
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(word), text) is not None


def check_program(generator, sections_dir, program, name, section, work):
    page = generate(generator, program, name, section,
                    os.path.join(sections_dir, name + ".sections"), work)
    source = open(page, encoding="utf-8").read()
    walked = commands(program)
    print("%s: %d commands, %d options in --help" % (
        name, len(walked) - 1, sum(len(f) for f in walked.values())))

    # In the troff source: a subsection per command, each option in it.
    for path, flags in walked.items():
        if not path:
            continue
        title = " ".join((name,) + path)
        head = '.SS "%s"' % title.replace("-", "\\-")
        if head not in source:
            fail("%s: no subsection %s" % (page, head))
    for title in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "ENVIRONMENT",
                  '"EXIT STATUS"', "SEE ALSO"):
        if not re.search(r"^\.SH \"?%s\"?$" % title.strip('"'), source, re.M):
            fail("%s: no section %s" % (page, title))
    for line in source.splitlines():
        # Text lines never start with a request character unless escaped.
        if line.startswith("'") or (line.startswith(".") and not re.match(r"^\.(\\\"|[A-Za-z]{1,2}\b)", line)):
            fail("%s: a text line read as a request: %r" % (page, line))

    rendered = render(page)
    if rendered is None:
        print("groff not installed: the rendering checks are skipped")
        return
    text, warnings = rendered
    if warnings.strip():
        fail("groff -ww warns about %s:\n%s" % (page, warnings))
    if "\u2010" in text or "\u2212" in text:
        fail("%s: a hyphen renders as a typographic one (an unescaped '-' in the source)" % page)
    secs = sections_of(text)
    subs = subsections_of(secs.get("COMMANDS", ""))
    for path, flags in walked.items():
        title = " ".join((name,) + path)
        where = secs.get("OPTIONS", "") if not path else subs.get(title)
        if where is None:
            fail("%s: the rendered page has no subsection '%s'" % (page, title))
            continue
        for flag in flags:
            if not has_word(where, flag):
                fail("%s: '%s' does not list its option %s" % (page, title, flag))
    env = secs.get("ENVIRONMENT", "")
    wanted = ["ZEUS_LOG_LEVEL", "ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT", "ZEUSD_TOKEN",
              "ZEUS_NVML_LIBRARY", "ZEUS_SIM_GPUS"]
    if name == "zeus":
        # Every variable show-env's help names, so a new one is documented here too.
        show_env = help_text(program, ["show-env"])
        named = set(re.findall(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b", show_env))
        if len(named) < 8:
            fail("zeus show-env --help names only %s" % sorted(named))
        wanted += sorted(named) + ["ZEUS_GPU_BACKEND", "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"]
    else:
        wanted += ["ZEUSD_ARGS"]
    for var in wanted:
        if not has_word(env, var):
            fail("%s: ENVIRONMENT does not describe %s" % (page, var))
    status = secs.get("EXIT STATUS", "")
    for code in ["0", "1", "2"] + (["75"] if name == "zeusd" else []):
        if not re.search(r"^       %s\s*$|^       %s\s{2,}" % (code, code), status, re.M):
            fail("%s: EXIT STATUS does not describe %s" % (page, code))
    if name == "zeusd":
        for f in ("/run/zeusd/zeusd.sock", "/etc/default/zeusd"):
            if f not in secs.get("FILES", ""):
                fail("%s: FILES does not name %s" % (page, f))
    if "zeusd(8)" not in secs.get("SEE ALSO", "") and "zeus(1)" not in secs.get("SEE ALSO", ""):
        fail("%s: SEE ALSO names neither zeus(1) nor zeusd(8)" % page)


# A stand-in program: CLI11's layout, with text troff would misread.
TRICKY_HELP = r"""A tricky tool: 'quoted' and `ticked`, 5 µJ, C:\temp\new
Usage: tricky [OPTIONS] SUBCOMMAND

Options:
  -h,--help                   Print this help message and exit
  --path TEXT=C:\dir\fB       A \fBnot bold\fR path, "quoted" and \n
  --mode TEXT:{uds,tcp}=uds   .starts-with-dot is text
  --range-option-with-a-long-name INT:INT in [1 - 1024]
                              'starts with a quote
  --threads INT:NONNEGATIVE=0 Worker threads

Subcommands:
  sub                         A subcommand

.br is not a request here
'also not
Example: tricky --path C:\x -- ./run.sh
"""
TRICKY_SUB = """A subcommand
Usage: tricky sub [OPTIONS]

Options:
  -h,--help                   Print this help message and exit
"""


def check_escaping(generator, work):
    prog = os.path.join(work, "tricky")
    with open(prog, "w") as f:
        f.write("#!/bin/sh\nif [ \"$1\" = sub ]; then cat <<'EOF'\n%sEOF\nelse cat <<'EOF'\n%sEOF\nfi\n"
                % (TRICKY_SUB, TRICKY_HELP))
    os.chmod(prog, 0o755)
    sections = os.path.join(work, "tricky.sections")
    with open(sections, "w") as f:
        f.write("@name a tool\n= ENVIRONMENT\n`TRICKY_DIR`\n  .dot, \\back, 'quote' -flag\n")
    page = generate(generator, prog, "tricky", "1", sections, work)
    rendered = render(page)
    if rendered is None:
        return
    text, warnings = rendered
    if warnings.strip():
        fail("groff -ww warns about the stand-in's page:\n" + warnings)
    # Filled text wraps anywhere: compare with the spaces collapsed.
    flat = " ".join(text.split())
    for s in ("'quoted' and `ticked`, 5 µJ, C:\\temp\\new", "C:\\dir\\fB",
              "A \\fBnot bold\\fR path, \"quoted\" and \\n", ".starts-with-dot is text",
              "'starts with a quote", ".br is not a request here", "'also not",
              "tricky --path C:\\x -- ./run.sh", ".dot, \\back, 'quote' -flag",
              "--range-option-with-a-long-name INT:INT in [1 - 1024]", "Worker threads"):
        if " ".join(s.split()) not in flat:
            fail("the stand-in's page does not show %r as written" % s)
    subs = subsections_of(sections_of(text).get("COMMANDS", ""))
    if "tricky sub" not in subs:
        fail("the stand-in's page has no subsection 'tricky sub'")


def main():
    generator, sections_dir, zeus, zeusd = sys.argv[1:5]
    work = tempfile.mkdtemp(prefix="help_docs_man.")
    try:
        check_program(generator, sections_dir, zeus, "zeus", "1", work)
        check_program(generator, sections_dir, zeusd, "zeusd", "8", work)
        check_escaping(generator, work)
    finally:
        shutil.rmtree(work)
    if failures:
        print("%d failures" % len(failures))
        return 1
    print("man pages: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
