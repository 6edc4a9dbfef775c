#!/usr/bin/env bash
# Prints the path of a minimal Debian 12 root for `make package-test`,
# creating it with debootstrap from Debian's registry when it is not cached.
# The cache (ZEUS_CACHE_DIR, default ~/.cache/zeus) holds one root per
# content of tests/package/base-packages.txt and suite, so a warm CI reuses
# it and a changed list builds a new one. Runs as root (debootstrap, chroot).
#
#   scripts/package_base_root.sh        # -> /root/.cache/zeus/package-test/base-<key>
#
# ZEUS_DEBIAN_MIRROR (default http://deb.debian.org/debian), ZEUS_DEBIAN_SUITE
# (default bookworm).
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${ZEUS_DEBIAN_SUITE:-bookworm}
mirror=${ZEUS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${ZEUS_CACHE_DIR:-$HOME/.cache/zeus}/package-test
list=tests/package/base-packages.txt
include=$(sed 's/#.*//' "$list" | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
key=$(printf '%s %s %s' "$suite" "$mirror" "$include" | sha256sum | cut -c1-12)
root=$cache/base-$key

if [ -f "$root/.complete" ]; then
  echo "$root"
  exit 0
fi
command -v debootstrap >/dev/null || {
  echo "package-test: debootstrap is not installed (apt-get install debootstrap)" >&2
  exit 1
}
mkdir -p "$cache"
rm -rf "$root" "$root.partial"
echo "package-test: creating the base root $root (debootstrap $suite, once per package list)" >&2
start=$SECONDS
debootstrap --variant=minbase --include="$include" "$suite" "$root.partial" "$mirror" \
  >"$cache/debootstrap-$key.log" 2>&1 || {
  tail -20 "$cache/debootstrap-$key.log" >&2
  exit 1
}
# Keep apt's downloaded archives between runs (the test copies them in and out).
rm -f "$root.partial/etc/apt/apt.conf.d/docker-clean"
touch "$root.partial/.complete"
mv "$root.partial" "$root"
echo "package-test: base root ready in $((SECONDS - start)) s" >&2
echo "$root"
