#!/usr/bin/env python3
"""The bash completion of zeus and zeusd (ctest: help_docs_completion).

Generates the scripts from the built programs with packaging/help_docs.py,
sources each in a plain `bash --norc` (no bash-completion package) and
completes as readline would (COMP_WORDS, COMP_CWORD, then the completion
function; COMPREPLY is the answer):

* the cases a user types first: `zeus mon<TAB>`, `zeus monitor <TAB>`,
  `zeus monitor energy --g<TAB>`, `zeusd serve --soc<TAB>`, an option's
  fixed choices (`--gpu-backend <TAB>`, also as --gpu-backend=), an option's
  value skipped when finding the command (`zeus simulate --gpu v100 p<TAB>`),
  no options offered for a path's value (the shell's file completion);
* every command of `PROGRAM --help`, walked here the plain way: `<TAB>`
  after it offers exactly its subcommands, and `-<TAB>` exactly its options.

  check_completion.py GENERATOR ZEUS ZEUSD
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
    r = subprocess.run([program] + path + ["--help"], capture_output=True, text=True)
    assert r.returncode == 0, (program, path, r.stderr)
    return r.stdout


def block(text, header):
    m = re.search(r"^%s\n((?:  .*\n?)*)" % re.escape(header), text, re.M)
    return m.group(1).splitlines() if m else []


def commands(program, path=()):
    """{command path: (subcommands, option flags)} from --help."""
    text = help_text(program, list(path))
    flags = [f for line in block(text, "Options:") for m in [re.match(r"^  (-\S+)", line)] if m
             for f in m.group(1).split(",")]
    subs = [m.group(1) for line in block(text, "Subcommands:") for m in [re.match(r"^  (\S+)", line)] if m]
    out = {path: (subs, flags)}
    for s in subs:
        out.update(commands(program, path + (s,)))
    return out


def complete(script, function, words):
    """COMPREPLY for the command line `words` (the last one being completed)."""
    quoted = " ".join("'%s'" % w.replace("'", "'\\''") for w in words)
    prog = """source '%s' || exit 3
COMP_WORDS=(%s); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
%s || exit 4
printf '%%s\\n' "${COMPREPLY[@]}"
""" % (script, quoted, function)
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog], capture_output=True, text=True)
    if r.returncode != 0:
        fail("%s: bash exit status %d: %s" % (" ".join(words), r.returncode, r.stderr))
    return [l for l in r.stdout.splitlines() if l]


def expect(script, function, words, want, exact=True):
    got = complete(script, function, words)
    ok = sorted(got) == sorted(want) if exact else set(want) <= set(got)
    if not ok:
        fail("%s<TAB>: got %s, want %s%s" % (" ".join(words), got, "" if exact else "at least ", want))


def main():
    generator, zeus, zeusd = sys.argv[1:4]
    work = tempfile.mkdtemp(prefix="help_docs_completion.")
    try:
        scripts = {}
        for program, name in ((zeus, "zeus"), (zeusd, "zeusd")):
            scripts[name] = os.path.join(work, name)
            subprocess.run([sys.executable, generator, "--program", program, "--name", name,
                            "--completion", scripts[name]], check=True)
            r = subprocess.run(["bash", "-n", scripts[name]], capture_output=True, text=True)
            if r.returncode != 0:
                fail("%s: not valid bash: %s" % (scripts[name], r.stderr))
            r = subprocess.run(["bash", "--norc", "-c", "source '%s' && complete -p %s" % (scripts[name], name)],
                               capture_output=True, text=True)
            if "-F _%s %s" % (name, name) not in r.stdout:
                fail("%s does not register _%s for %s: %s" % (scripts[name], name, name, r.stdout + r.stderr))
        z, zd = scripts["zeus"], scripts["zeusd"]

        expect(z, "_zeus", ["zeus", "mon"], ["monitor"])
        expect(z, "_zeus", ["zeus", "monitor", ""], ["energy", "power", "temperature"])
        expect(z, "_zeus", ["zeus", "monitor", "energy", "--g"], ["--gpus"])
        expect(zd, "_zeusd", ["zeusd", "serve", "--soc"],
               ["--socket-path", "--socket-permissions", "--socket-uid", "--socket-gid"])
        expect(zd, "_zeusd", ["zeusd", "t"], ["token"])
        expect(zd, "_zeusd", ["zeusd", "token", "issue", "--s"], ["--signing-key-path", "--scope"])
        # Fixed choices: --opt VALUE, --opt=VALUE split at '=' (bash's default
        # COMP_WORDBREAKS) and unsplit.
        expect(z, "_zeus", ["zeus", "power-limit", "--gpu-backend", ""], ["sim", "nvml", "auto"])
        expect(z, "_zeus", ["zeus", "power-limit", "--gpu-backend", "=", "n"], ["nvml"])
        expect(z, "_zeus", ["zeus", "power-limit", "--gpu-backend=n"], ["--gpu-backend=nvml"])
        # An option's value is not a command: after `--gpu v100` the
        # subcommands of simulate are still offered, also after a folder
        # named like one (`--out chase`); after `--gpus 0` the
        # options of energy.
        expect(z, "_zeus", ["zeus", "simulate", "--gpu", "v100", "p"], ["paper"])
        expect(z, "_zeus", ["zeus", "simulate", "--out", "chase", ""], ["paper", "chase"])
        expect(z, "_zeus", ["zeus", "simulate", "--out", "=", "chase", ""], ["paper", "chase"])
        expect(z, "_zeus", ["zeus", "monitor", "energy", "--gpus", "0", "--c"],
               ["--cpus", "--carbon-intensity", "--carbon-provider"])
        # A free value (a path) is left to the shell's file completion.
        expect(z, "_zeus", ["zeus", "monitor", "energy", "--log", ""], [])
        expect(zd, "_zeusd", ["zeusd", "serve", "--socket-path", ""], [])
        # After `--`, a command to run, not zeus's options.
        got = complete(z, "_zeus", ["zeus", "monitor", "energy", "--", "--g"])
        if "--gpus" in got:
            fail("zeus monitor energy -- --g<TAB> offers zeus's options: %s" % got)

        # Every command, against its --help.
        for program, name in ((zeus, "zeus"), (zeusd, "zeusd")):
            walked = commands(program)
            for path, (subs, flags) in walked.items():
                words = [name] + list(path)
                if subs:
                    expect(scripts[name], "_" + name, words + [""], subs)
                expect(scripts[name], "_" + name, words + ["-"], flags)
            print("%s: %d commands checked" % (name, len(walked)))
    finally:
        shutil.rmtree(work)
    if failures:
        print("%d failures" % len(failures))
        return 1
    print("bash completion: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
