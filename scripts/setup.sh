#!/usr/bin/env bash
# Installs the Debian packages the project needs: every scripts/packages/*.txt
# (one file per part, whitespace-separated names, # comments: what `make run`
# and `make test` need), and for each NAME given
# scripts/packages/optional/NAME.txt (tools of one purpose, e.g.
# `setup.sh package` for make package). With --only, just the NAMEs' lists:
# `setup.sh --only python` is what `pip install .` needs, `--only minimal` the
# measurement-only build (docs/install.md). Idempotent and quiet when
# everything is already present. Runs as root (or through sudo).
#
#   scripts/setup.sh [--only] [NAME...]
set -euo pipefail
cd "$(dirname "$0")"

lists=(packages/*.txt)
if [ "${1:-}" = "--only" ]; then
  shift
  lists=()
  [ $# -gt 0 ] || { echo "setup: --only needs a list name" >&2; exit 2; }
fi
for name in "$@"; do
  if [ ! -f "packages/optional/$name.txt" ]; then
    echo "setup: no package list '$name' (choose from: $(cd packages/optional && ls ./*.txt | sed 's|^./||; s|\.txt$||' | tr '\n' ' '))" >&2
    exit 2
  fi
  lists+=("packages/optional/$name.txt")
done

PACKAGES=()
for list in "${lists[@]}"; do
  read -r -a names <<<"$(sed 's/#.*//' "$list" | tr '\n' ' ')"
  PACKAGES+=("${names[@]}")
done

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "setup: missing packages (${missing[*]}) and not root; install them with apt-get" >&2
    exit 1
  fi
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
