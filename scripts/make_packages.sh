#!/usr/bin/env bash
# Builds the Debian packages from a configured and built tree (make package):
# cpack -G DEB, then lintian on each package (when installed), its findings
# written to <BUILD>/packages/lintian.txt and summed up. lintian's findings are
# reported, not fatal: docs/install.md lists the ones that stay and why.
#
#   scripts/make_packages.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
out=$build/packages
rm -f "$out"/*.deb
(cd "$build" && cpack -G DEB >"$build/cpack.log" 2>&1) || { tail -30 "$build/cpack.log" >&2; exit 1; }
mapfile -t debs < <(ls "$out"/*.deb)
[ ${#debs[@]} -gt 0 ] || { echo "make package: cpack made no .deb" >&2; exit 1; }
for deb in "${debs[@]}"; do
  printf '%-60s %s\n' "$(basename "$deb")" "$(dpkg-deb -f "$deb" Depends | cut -c1-100)"
done
if command -v lintian >/dev/null; then
  lintian --no-tag-display-limit "${debs[@]}" >"$out/lintian.txt" 2>&1 || true
  echo "lintian: $(grep -c '^E:' "$out/lintian.txt") errors, $(grep -c '^W:' "$out/lintian.txt") warnings ($out/lintian.txt)"
  grep -E '^(E|W):' "$out/lintian.txt" | sed 's/^/  /' | sort | uniq | head -40 || true
else
  echo "lintian is not installed: no check of the packages (apt-get install lintian)"
fi
