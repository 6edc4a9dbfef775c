#!/usr/bin/env python3
"""Man page and bash completion of a CLI11 program, from its --help.

Runs PROGRAM --help, then PROGRAM SUB --help for every subcommand its
"Subcommands:" section lists, recursively, and writes

* a troff man page (--man): NAME, SYNOPSIS, DESCRIPTION, OPTIONS, one
  subsection per command (its description, usage, arguments, options,
  subcommands and notes), then the hand-written sections of --sections
  (ENVIRONMENT, EXIT STATUS, FILES, SEE ALSO, ...);
* a bash completion script (--completion): the subcommands at each level,
  then that command's options; the fixed choices of an option where --help
  lists them ({a,b,c}), the shell's default (file) completion for the
  other values, and the command after `--` completed as a command.

Used at build time (cmake/zeus_packaging.cmake) and by the tests
(tests/help_docs). Only the standard library: Debian's python3 is enough.

The --sections file: `@name TEXT` gives the NAME line's summary; `= TITLE`
starts a section; blank lines separate blocks. A block of unindented lines
is a paragraph; an unindented first line followed by indented lines is a
term (bold unless it has `code` spans) with its description; a block whose
lines are all indented by four or more spaces is shown as is (examples).
In text, `code` is bold. '#' at the start of a line is a comment.
"""

import argparse
import os
import re
import subprocess
import sys
import time

# CLI11's help: the option or positional name is padded to this column, and a
# longer name puts its description on the next line, indented as far.
NAME_COLUMN = 30
SECTION_HEADERS = ("Options:", "Positionals:", "Subcommands:")


class Entry:
    """An option, positional or subcommand line of a help text."""

    def __init__(self, field, desc):
        self.field = field  # "--gpus TEXT", "-h,--help", "command TEXT ..."
        self.desc = desc
        tokens = field.split(" ", 1)
        self.names = tokens[0].split(",")
        self.annotation = tokens[1].strip() if len(tokens) > 1 else ""
        first = self.annotation.split(" ", 1)[0] if self.annotation else ""
        # A value's type comes first (TEXT, INT:INT in [1 - 10], TEXT:{a,b}=a);
        # a flag has none (at most "Excludes: ..." or "Needs: ...").
        self.type = first if re.match(r"^[A-Z][A-Z0-9_]*(?:$|[:=])", first) else ""
        m = re.search(r"\{([^{}]*)\}", self.type)
        self.choices = m.group(1).split(",") if m else []

    @property
    def takes_value(self):
        return bool(self.type)


class Command:
    def __init__(self, path):
        self.path = path  # ["monitor", "energy"]
        self.description = []
        self.usage = ""
        self.positionals = []
        self.options = []
        self.subcommands = []  # Entry per subcommand
        self.footer = []
        self.children = []


def balanced(text):
    return text.count("[") == text.count("]") and text.count("{") == text.count("}")


def split_entry(line, next_line):
    """(name field, description) of one entry line of an option section."""
    if len(line) > NAME_COLUMN and line[NAME_COLUMN] != " ":
        name, desc = line[:NAME_COLUMN].rstrip(), line[NAME_COLUMN:].strip()
        if line[NAME_COLUMN - 2 : NAME_COLUMN] == "  ":
            return name.strip(), desc
        # One space before the column: a name that just fits, or a long name
        # (its description on the next line) with a space there. A long name's
        # next line is its description; a bracket or a keyword cut in two
        # means the name goes on.
        if (
            line[NAME_COLUMN - 1] == " "
            and not next_line.startswith(" " * NAME_COLUMN)
            and balanced(name)
            and not name.endswith(":")
            and not re.match(r"^(REQUIRED|\.\.\.|Excludes:|Needs:|- |=)", desc)
        ):
            return name.strip(), desc
    return line.strip(), ""


def parse_entries(lines, subcommands=False):
    entries = []
    for i, line in enumerate(lines):
        if entries and line.startswith("   "):
            entries[-1].desc = (entries[-1].desc + " " + line.strip()).strip()
            continue
        if subcommands:
            parts = line.strip().split(None, 1)
            entries.append(Entry(parts[0], parts[1] if len(parts) > 1 else ""))
        else:
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            entries.append(Entry(*split_entry(line, nxt)))
    return entries


def parse_help(path, text):
    cmd = Command(path)
    lines = text.splitlines()
    i = 0
    while i < len(lines) and not lines[i].startswith("Usage: "):
        if lines[i].strip():
            cmd.description.append(lines[i].strip())
        i += 1
    if i == len(lines):
        raise ValueError("no 'Usage:' line in the help of %r" % " ".join(path))
    cmd.usage = lines[i][len("Usage: ") :].strip()
    i += 1
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line in SECTION_HEADERS:
            j = i + 1
            while j < len(lines) and lines[j].startswith("  "):
                j += 1
            body = lines[i + 1 : j]
            if line == "Options:":
                cmd.options += parse_entries(body)
            elif line == "Positionals:":
                cmd.positionals += parse_entries(body)
            else:
                cmd.subcommands += parse_entries(body, subcommands=True)
            i = j
            continue
        # Anything else is the footer, which CLI11 prints last.
        cmd.footer = [l.rstrip() for l in lines[i:]]
        while cmd.footer and not cmd.footer[-1]:
            cmd.footer.pop()
        break
    return cmd


def run_help(program, path):
    env = dict(os.environ, LC_ALL="C", ZEUS_LOG_LEVEL="off")
    r = subprocess.run([program] + path + ["--help"], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(
            "%s %s --help: exit status %d\n%s" % (program, " ".join(path), r.returncode, r.stderr)
        )
    return r.stdout


def walk(program, path=()):
    cmd = parse_help(list(path), run_help(program, list(path)))
    for sub in cmd.subcommands:
        cmd.children.append(walk(program, tuple(path) + (sub.names[0],)))
    return cmd


def every_command(cmd):
    yield cmd
    for child in cmd.children:
        yield from every_command(child)


# --- troff ------------------------------------------------------------------


BREAK = "\0"  # where a long word may break (troff's \:)


def breakable(text):
    """Words too long for a line (paths, value lists) may break after a '/'
    or a ','."""
    return re.sub(r"\S{40,}", lambda m: re.sub(r"([/,])(?=.)", "\\1" + BREAK, m.group(0)), text)


def esc(text):
    """Text escaped for troff: backslashes, hyphens typed as minus signs,
    quotes that must stay ASCII, and anything outside ASCII by code point."""
    out = []
    for ch in breakable(text):
        if ch == BREAK:
            out.append("\\:")
        elif ch == "\\":
            out.append("\\e")
        elif ch == "-":
            out.append("\\-")
        elif ch == "'":
            out.append("\\(aq")
        elif ch == "`":
            out.append("\\(ga")
        elif ord(ch) > 126 or (ord(ch) < 32 and ch != "\t"):
            out.append("\\[u%04X]" % ord(ch))
        else:
            out.append(ch)
    return "".join(out)


def text_line(s):
    """One input line of text: a leading '.' or "'" would be a request."""
    s = esc(s)
    return "\\&" + s if s.startswith((".", "'")) else s


def inline(s):
    """Hand-written text: `code` in bold, the rest escaped."""
    parts = re.split(r"`([^`]*)`", s)
    out = []
    for k, part in enumerate(parts):
        out.append("\\fB" + esc(part) + "\\fR" if k % 2 else esc(part))
    line = "".join(out)
    return "\\&" + line if line.startswith((".", "'")) else line


def quoted(s):
    """A macro argument: double quotes inside become \\(dq."""
    return '"' + esc(s).replace('"', "\\(dq") + '"'


def option_tag(entry):
    names = ", ".join("\\fB" + esc(n) + "\\fR" for n in entry.names)
    rest = entry.annotation
    if entry.type:
        names += " \\fI" + esc(entry.type) + "\\fR"
        rest = rest[len(entry.type) :].strip()
    return names + (" " + esc(rest) if rest else "")


def footer_lines(footer):
    """The notes under a command's options: indented lines (examples) keep
    their own lines; other lines are filled, a new line after a sentence's
    end, an example or a colon."""
    out = [".PP"]
    prev = None
    for line in footer:
        if not line.strip():
            out.append(".PP")
            prev = None
            continue
        indented = line.startswith(" ")
        if prev is not None and (
            indented
            or prev.startswith(" ")
            or prev.endswith((".", ":"))
            or prev.startswith("Example")
        ):
            out.append(".br")
        out.append(text_line(line.strip()) if not indented else "\\&" + esc(line))
        prev = line
    return out


def read_sections(path):
    """(name summary, [(title, [block lines])]) of a --sections file."""
    summary, sections = "", []
    with open(path, encoding="utf-8") as f:
        raw = [l.rstrip("\n") for l in f]
    block = []

    def flush():
        if block and sections:
            sections[-1][1].append(list(block))
        block.clear()

    for line in raw:
        if line.startswith("#"):
            continue
        if line.startswith("@name "):
            summary = line[len("@name ") :].strip()
        elif line.startswith("= "):
            flush()
            sections.append((line[2:].strip(), []))
        elif not line.strip():
            flush()
        else:
            block.append(line.rstrip())
    flush()
    return summary, sections


def section_blocks(blocks):
    out = []
    for b in blocks:
        if all(l.startswith("    ") for l in b):
            out += [".PP", ".RS 4", ".nf"] + ["\\&" + esc(l[4:]) for l in b] + [".fi", ".RE"]
        elif len(b) > 1 and not b[0].startswith(" ") and all(l.startswith("  ") for l in b[1:]):
            term = inline(b[0]) if "`" in b[0] else "\\fB" + esc(b[0]) + "\\fR"
            out += [".TP", term] + [inline(l.strip()) for l in b[1:]]
        else:
            out += [".PP"] + [inline(l.strip()) for l in b]
    return out


def man_page(root, name, section, version, sections_file):
    summary, extra = read_sections(sections_file) if sections_file else ("", [])
    if not summary:
        summary = " ".join(root.description)
    date = ""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        date = time.strftime("%Y-%m-%d", time.gmtime(int(os.environ["SOURCE_DATE_EPOCH"])))
    manual = "System Administration" if section == "8" else "User Commands"
    out = [
        '.\\" Generated from `%s --help` by packaging/help_docs.py: do not edit.' % name,
        ".TH %s %s %s %s %s"
        % (quoted(name.upper()), section, quoted(date), quoted("%s %s" % (name, version)), quoted(manual)),
        # Left-aligned and unhyphenated: options, paths and values are typed,
        # and a hyphen that troff inserted would look like part of them.
        ".ad l",
        ".nh",
        ".SH NAME",
        esc(name) + " \\- " + esc(summary),
        ".SH SYNOPSIS",
    ]
    commands = list(every_command(root))
    first = True
    for cmd in commands:
        # The usage of each command that runs (a group with no options of its
        # own is in its subcommands' lines).
        runs = not cmd.children or len(cmd.options) > 1 or cmd.positionals or cmd is root
        if not runs:
            continue
        if not first:
            out.append(".br")
        first = False
        words = cmd.usage.split()
        out.append("\\fB" + esc(" ".join(words[: 1 + len(cmd.path)])) + "\\fR " + esc(" ".join(words[1 + len(cmd.path) :])))
    # The hand-written description where there is one (the NAME line already
    # says what the program's own description says), else the program's.
    described = [blocks for title, blocks in extra if title == "DESCRIPTION"]
    out.append(".SH DESCRIPTION")
    if described:
        for blocks in described:
            out += section_blocks(blocks)
    else:
        out += [text_line(l) for l in root.description]
    out.append(".SH OPTIONS")
    for o in root.options:
        out += [".TP", option_tag(o)] + ([text_line(o.desc)] if o.desc else [])
    if root.footer:
        out += footer_lines(root.footer)
    out.append(".SH COMMANDS")
    for cmd in commands[1:]:
        out.append(".SS " + quoted(" ".join([name] + cmd.path)))
        out += [text_line(l) for l in cmd.description]
        out += [".PP", "Usage: \\fB" + esc(" ".join([name] + cmd.path)) + "\\fR " + esc(
            " ".join(cmd.usage.split()[1 + len(cmd.path) :]))]
        if cmd.positionals:
            out += [".PP", "Arguments:"]
            for p in cmd.positionals:
                out += [".TP", "\\fI" + esc(p.names[0]) + "\\fR " + esc(p.annotation)]
                out += [text_line(p.desc)] if p.desc else []
        if cmd.options:
            out += [".PP", "Options:"]
            for o in cmd.options:
                out += [".TP", option_tag(o)] + ([text_line(o.desc)] if o.desc else [])
        if cmd.subcommands:
            out += [".PP", "Subcommands:"]
            for s in cmd.subcommands:
                out += [".TP", "\\fB" + esc(s.names[0]) + "\\fR"] + ([text_line(s.desc)] if s.desc else [])
        if cmd.footer:
            out += footer_lines(cmd.footer)
    for title, blocks in extra:
        if title != "DESCRIPTION":
            out.append(".SH " + quoted(title))
            out += section_blocks(blocks)
    return "\n".join(out) + "\n"


# --- bash completion ----------------------------------------------------------


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def completion(root, name):
    fn = "_" + re.sub(r"[^A-Za-z0-9_]", "_", name)
    spec, choices = [], []
    for cmd in every_command(root):
        key = " ".join(cmd.path)
        subs = " ".join(s.names[0] for s in cmd.subcommands)
        opts = " ".join(n for o in cmd.options for n in o.names)
        vals = " ".join(n for o in cmd.options if o.takes_value for n in o.names)
        spec.append(
            "    %s) subs=%s opts=%s vals=%s ;;" % (sh_quote(key), sh_quote(subs), sh_quote(opts), sh_quote(vals))
        )
        for o in cmd.options:
            if o.choices:
                for n in o.names:
                    choices.append("    %s) echo %s ;;" % (sh_quote(key + "|" + n), sh_quote(" ".join(o.choices))))
    template = r"""# bash completion for %(name)s: generated from `%(name)s --help` by
# packaging/help_docs.py (do not edit). The subcommands at each level, then
# the command's options; an option's fixed choices, else the shell's default
# completion for its value; after `--`, a command and its arguments.

# %(fn)s_spec PATH: sets subs, opts and vals (the options that take a value)
# of the command PATH ("" for %(name)s itself, "a b" for `%(name)s a b`).
%(fn)s_spec() {
  case "$1" in
%(spec)s
    *) subs='' opts='' vals='' ;;
  esac
}

# %(fn)s_choices PATH OPTION: the values OPTION accepts, when a fixed set.
%(fn)s_choices() {
  case "$1|$2" in
%(choices)s
    *) ;;
  esac
}

%(fn)s() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev='' path='' word opt='' prefix='' i
  local subs opts vals
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()
  %(fn)s_spec ''
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if [[ $word == -- ]]; then
      # A command to run: complete it as the shell would on its own.
      if declare -F _command_offset >/dev/null; then
        _command_offset $((i + 1))
      elif ((COMP_CWORD == i + 1)); then
        mapfile -t COMPREPLY < <(compgen -c -- "$cur")
      else
        compopt -o default 2>/dev/null || true
      fi
      return 0
    fi
    if [[ $word == -* ]]; then
      # An option's value is the next word (the next two when the shell split
      # --option=value at the '='), unless it came with it as --option=value.
      if [[ $word != *=* && " $vals " == *" $word "* ]]; then
        if [[ ${COMP_WORDS[i + 1]-} == = ]]; then ((i += 2)); else ((i += 1)); fi
      fi
      continue
    fi
    if [[ " $subs " == *" $word "* ]]; then
      path=${path:+$path }$word
      %(fn)s_spec "$path"
    fi
  done
  # The value of an option: --opt VALUE, --opt=VALUE (with or without '=' as
  # a word break).
  if [[ $cur == = && $prev == -* ]]; then
    opt=$prev cur=''
  elif [[ $prev == = ]] && ((COMP_CWORD >= 2)) && [[ ${COMP_WORDS[COMP_CWORD - 2]} == -* ]]; then
    opt=${COMP_WORDS[COMP_CWORD - 2]}
  elif [[ $cur == -*=* ]]; then
    opt=${cur%%%%=*} prefix=${cur%%%%=*}= cur=${cur#*=}
  elif [[ $prev == -* && $prev != *=* ]]; then
    opt=$prev
  fi
  if [[ -n $opt && " $vals " == *" $opt "* ]]; then
    local choices
    choices=$(%(fn)s_choices "$path" "$opt")
    if [[ -n $choices ]]; then
      mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "$choices" -- "$cur")
    else
      compopt -o default 2>/dev/null || true
    fi
    return 0
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
  elif [[ -n $subs ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
  elif [[ -z $cur ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
  else
    compopt -o default 2>/dev/null || true
  fi
  return 0
}
complete -F %(fn)s %(name)s
"""
    return template % {
        "name": name,
        "fn": fn,
        "spec": "\n".join(spec),
        "choices": "\n".join(choices),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--program", required=True, help="the built program to run with --help")
    ap.add_argument("--name", required=True, help="its installed name (zeus, zeusd)")
    ap.add_argument("--section", default="1", help="manual section")
    ap.add_argument("--version", default="", help="version for the page's footer")
    ap.add_argument("--sections", help="hand-written sections (ENVIRONMENT, EXIT STATUS, ...)")
    ap.add_argument("--man", help="write the man page here")
    ap.add_argument("--completion", help="write the bash completion script here")
    args = ap.parse_args()
    try:
        root = walk(args.program)
    except (OSError, RuntimeError, ValueError) as e:
        print("help_docs.py: %s" % e, file=sys.stderr)
        return 1
    for path, text in (
        (args.man, lambda: man_page(root, args.name, args.section, args.version, args.sections)),
        (args.completion, lambda: completion(root, args.name)),
    ):
        if path:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text())
            os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
