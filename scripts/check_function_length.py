#!/usr/bin/env python3
"""No function over 100 lines (docs/architecture.md; ctest functions_at_most_100_lines).

Measures every function body in the project's C++ (src, include, apps,
python/src): from the line of its opening brace to the line of its closing
one, counting a lambda or a local class as part of the function that holds
it. A function is a brace block that follows a parameter list (`) {`,
`) const {`, `) override {`, a trailing return type, an initializer list...)
at namespace or class level; namespace, class, enum and initializer braces
are not functions.

  scripts/check_function_length.py [--max N] [--top K] [ROOT]
  exit 0: none over N (100); 1: the longer ones listed, longest first
  scripts/check_function_length.py --self-test
"""

import os
import re
import sys

DIRS = ("src", "include", "apps", "python/src")
TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|R"(?P<delim>[^(]*)\(.*?\)(?P=delim)"|'
                   r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[{}();]', re.S)
# What precedes a block's "{" when the block is a function body: the end of a
# parameter list and its qualifiers, or of a member initializer list.
FUNCTION_HEAD = re.compile(
    r"\)\s*(const|noexcept|override|final|mutable|volatile|&|&&|\s|->\s*[\w:<>,\s*&]+|"
    r"try|requires[^{]*)*$")
NOT_FUNCTION_HEAD = re.compile(r"\b(if|for|while|switch|catch|return)\s*\(.*\)\s*$", re.S)


def functions(text):
    """(name-ish, first line, line count) of each outermost function body."""
    out = []
    depth_stack = []  # per open brace: True if it opens a function body
    in_function = 0
    last_end = 0  # where the text since the last ;{} begins
    for m in TOKEN.finditer(text):
        tok = m.group(0)
        if tok in ("(", ")"):
            continue
        if len(tok) > 1:
            continue  # a comment or a string literal
        if tok == ";":
            last_end = m.end()
            continue
        if tok == "{":
            head = TOKEN.sub(lambda t: "" if len(t.group(0)) > 1 else t.group(0),
                             text[last_end:m.start()]).strip()
            is_fn = (in_function == 0 and bool(FUNCTION_HEAD.search(head)) and
                     not NOT_FUNCTION_HEAD.search(head) and "=" not in head.split("(")[0])
            if not is_fn and in_function == 0 and re.search(r"\)\s*:\s*[\w:]+[({]", head,
                                                            re.S) and head.endswith((")", "}")):
                is_fn = True  # a constructor's member initializer list
            depth_stack.append((is_fn, m.start(), head, last_end))
            if is_fn:
                in_function += 1
            last_end = m.end()
        else:
            if not depth_stack:
                last_end = m.end()
                continue
            is_fn, start, head, head_start = depth_stack.pop()
            if not is_fn and in_function == 0 and re.search(r"\)\s*:\s*[\w:]+[({]?", head):
                # A brace initializer in a constructor's member list: the
                # body's head goes on from where this one began.
                last_end = head_start
                continue
            if is_fn:
                in_function -= 1
                first = text.count("\n", 0, start) + 1
                last = text.count("\n", 0, m.start()) + 1
                name = re.findall(r"([~\w:]+)\s*\(", head)
                out.append((name[0] if name else head[-40:], first, last - first + 1))
            last_end = m.end()
    return out


def scan(root, limit):
    found = []
    for d in DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if not f.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                for name, line, length in functions(text):
                    if length > limit:
                        found.append((length, f"{os.path.relpath(path, root)}:{line}", name))
    return sorted(found, reverse=True)


def self_test():
    text = """namespace a {
struct S {
  int f() const {
    return 1;
  }
};
int g(int x) {
  auto l = [](int y) {
    return y;
  };
  if (x) {
    return l(x);
  }
  return 0;
}
S::S() : x_(1), y_{2} {
  z();
}
enum class E { kA, kB };
int h() { return 0; }
}
"""
    got = [(n, first, length) for n, first, length in functions(text)]
    want = [("f", 3, 3), ("g", 7, 9), ("S::S", 16, 3), ("h", 20, 1)]
    if got != want:
        print(f"self-test: got {got}, want {want}")
        return 1
    print("self-test: passed")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    limit, top, root = 100, None, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--max":
            limit = int(args.pop(0))
        elif a == "--top":
            top = int(args.pop(0))
        else:
            root = a
    found = scan(os.path.abspath(root), limit)
    for length, where, name in found[:top]:
        print(f"{length:4d}  {where}  {name}")
    if found:
        print(f"{len(found)} function(s) over {limit} lines (scripts/check_function_length.py)")
        return 1
    print(f"no function over {limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
