#!/usr/bin/env bash
# The man pages and bash completion in the install components that the
# Debian packages are made of (ctest: help_docs_install): `cmake --install
# BUILD --component runtime` (the zeus package) brings zeus(1) and zeus's
# completion, `--component daemon` (zeusd) zeusd(8) and zeusd's; each
# installed page is a valid gzip of a page for its program, each completion
# script completes when sourced from where bash-completion looks.
#
#   tests/help_docs/check_install.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# component program section binary
for entry in runtime:zeus:1 daemon:zeusd:8; do
  IFS=: read -r component name section <<<"$entry"
  root=$work/$component
  DESTDIR=$root cmake --install "$build" --prefix /usr --component "$component" >"$work/$component.log" ||
    { cat "$work/$component.log"; exit 1; }
  page=$root/usr/share/man/man$section/$name.$section.gz
  completion=$root/usr/share/bash-completion/completions/$name
  for f in "$root/usr/bin/$name" "$page" "$completion"; do
    [ -f "$f" ] || { echo "missing from the $component component: ${f#"$root"}" >&2; exit 1; }
  done
  gzip -t "$page"
  # Into a file first: `zcat | grep -m1` under pipefail fails whenever grep
  # stops reading before zcat has written the whole page (SIGPIPE, exit 141).
  zcat "$page" >"$work/$name.$section"
  head=$(grep -m1 '^\.TH' "$work/$name.$section")
  case $head in
    ".TH \"${name^^}\" $section "*) ;;
    *) echo "${page#"$root"}: not the page of $name($section): $head" >&2; exit 1 ;;
  esac
  got=$(bash --norc -c "source '$completion'; COMP_WORDS=($name ''); COMP_CWORD=1; _$name; echo \"\${COMPREPLY[*]}\"")
  echo "$component: ${page#"$root"}, ${completion#"$root"} ($name <TAB>: $got)"
  [ -n "$got" ] || { echo "the installed completion of $name completes nothing" >&2; exit 1; }
done
# Each program's files in its own package only.
if [ -e "$work/runtime/usr/share/man/man8/zeusd.8.gz" ] ||
  [ -e "$work/daemon/usr/share/bash-completion/completions/zeus" ]; then
  echo "a program's man page or completion is in the other's component" >&2
  exit 1
fi
echo "== help docs install: passed"
