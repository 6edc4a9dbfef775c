#!/usr/bin/env bash
# Fetches NVIDIA's real NVML library and header from Debian bookworm's non-free
# component into DEST (a folder of the build tree), for the ABI check and the
# tests that load the real library (docs/measuring.md, "The real NVML in the
# tests"). The system's apt sources are never touched: apt-get runs with a
# private sources list, state and cache under DEST/apt.
#
#   scripts/fetch_real_nvml.sh DEST
#
# Leaves DEST/include/nvml.h, DEST/lib/libnvidia-ml.so.1, DEST/VERSIONS (the
# package versions) and the packages' copyright files. Idempotent: when DEST is complete it returns at once.
# ZEUS_REAL_NVML_MIRROR (default http://deb.debian.org/debian) and
# ZEUS_REAL_NVML_SUITE (default bookworm) pick another mirror or suite.
# Exit status: 0 fetched (or already there); 75 the registry or the tools are
# out of reach (no network, no apt-get, no Debian keyring): the callers skip,
# except under CI=true; 1 anything else.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DEST" >&2
  exit 2
fi
dest=$1
suite=${ZEUS_REAL_NVML_SUITE:-bookworm}
mirror=${ZEUS_REAL_NVML_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

if [ -f "$dest/.complete" ] && [ -f "$dest/include/nvml.h" ] && [ -e "$dest/lib/libnvidia-ml.so.1" ]; then
  exit 0
fi

unavailable() {
  echo "fetch_real_nvml: $*" >&2
  exit 75
}
for tool in apt-get dpkg-deb; do
  command -v "$tool" >/dev/null || unavailable "$tool is not installed (the real NVML comes from Debian packages)"
done
[ -r "$keyring" ] || unavailable "$keyring is missing (install debian-archive-keyring)"

mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
apt_dir=$dest/apt
rm -rf "$apt_dir" "$dest/root" "$dest/include" "$dest/lib" "$dest/.complete"
mkdir -p "$apt_dir/state/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
touch "$apt_dir/state/status"
echo "deb [signed-by=$keyring] $mirror $suite non-free" >"$apt_dir/sources.list"

opts=(
  -o "Dir::Etc::SourceList=$apt_dir/sources.list"
  -o "Dir::Etc::SourceParts=/dev/null"
  -o "Dir::Etc::Preferences=/dev/null"
  -o "Dir::Etc::PreferencesParts=/dev/null"
  -o "Dir::State=$apt_dir/state"
  -o "Dir::State::status=$apt_dir/state/status"
  -o "Dir::Cache=$apt_dir/cache"
  -o "Acquire::Retries=1"
  -o "Acquire::http::Timeout=20"
  -o "APT::Get::List-Cleanup=false"
)
# apt drops to the _apt user for downloads when run as root; that user
# cannot write into a build tree owned by root with a private umask.
[ "$(id -u)" -eq 0 ] && opts+=(-o "APT::Sandbox::User=root")

log=$apt_dir/apt.log
if ! apt-get "${opts[@]}" -q update >"$log" 2>&1 || grep -qE '^(W|E): (Failed to fetch|Some index files failed)' "$log"; then
  unavailable "cannot reach $mirror ($suite non-free): $(grep -E '^(W|E):' "$log" | head -n 2 | tr '\n' ' ')"
fi
if ! (cd "$apt_dir/debs" && apt-get "${opts[@]}" -q download libnvidia-ml1 libnvidia-ml-dev) >>"$log" 2>&1; then
  if grep -qE 'Unable to locate package|has no installation candidate' "$log"; then
    echo "fetch_real_nvml: $suite non-free has no libnvidia-ml1/libnvidia-ml-dev for this architecture" >&2
    exit 1
  fi
  unavailable "cannot download libnvidia-ml1/libnvidia-ml-dev from $mirror: $(grep -E '^(W|E):' "$log" | head -n 2 | tr '\n' ' ')"
fi

mkdir -p "$dest/root" "$dest/include" "$dest/lib"
: >"$dest/VERSIONS"
for deb in "$apt_dir"/debs/*.deb; do
  dpkg-deb -x "$deb" "$dest/root"
  dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb" >>"$dest/VERSIONS"
done
header=$(find "$dest/root" -name nvml.h -type f | head -n 1)
library=$(find "$dest/root" -name 'libnvidia-ml.so.1' | head -n 1)
if [ -z "$header" ] || [ -z "$library" ]; then
  echo "fetch_real_nvml: the packages hold no nvml.h or libnvidia-ml.so.1 (layout changed?)" >&2
  exit 1
fi
cp "$header" "$dest/include/nvml.h"
# The real file, not the package's symlink chain, under the name the driver uses.
cp "$(readlink -f "$library")" "$dest/lib/libnvidia-ml.so.1"
# NVIDIA's licence terms travel with the copies.
for copyright in "$dest"/root/usr/share/doc/*/copyright; do
  cp "$copyright" "$dest/copyright.$(basename "$(dirname "$copyright")")"
done
rm -rf "$apt_dir" "$dest/root"
touch "$dest/.complete"
echo "fetch_real_nvml: $(paste -sd';' "$dest/VERSIONS") in $dest"
