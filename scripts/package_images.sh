#!/usr/bin/env bash
# OCI images for zeus and zeusd from the root `make package-test` tested,
# without pulling any base image: umoci (Debian's package) makes an empty
# image, the root's files become its one layer, and each tag gets its own
# entry point. Then each image is unpacked as a container runtime would
# (umoci unpack: the runtime bundle's rootfs and config.json) and the
# process its config names runs in that rootfs (chroot in private mount and
# PID namespaces). No container engine runs on the machines this was written
# on (docs/install.md says exactly what runs where).
#
#   scripts/package_images.sh TESTED_ROOT OUT_DIR   # -> OUT_DIR/oci (tags zeus, zeusd)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 TESTED_ROOT OUT_DIR" >&2; exit 2; }
tested=$(cd "$1" && pwd)
out=$2
command -v umoci >/dev/null || { echo "images: umoci is not installed (scripts/setup.sh package)" >&2; exit 1; }
version=$(chroot "$tested" dpkg-query -W -f='${Version}' zeus)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step() { echo "== images: $*"; }

# in_root ROOT COMMAND...: COMMAND in ROOT, in private mount and PID namespaces.
in_root() {
  unshare --mount --pid --fork --kill-child -- /bin/sh -c '
    set -e
    root=$1
    shift
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
      LANG=C.UTF-8 "$@"' sh "$@"
}

step "the image root: the tested root less the test tools"
cp -a "$tested" "$work/root"
# Everything but the three packages (and what they need, and what Debian
# never removes) is marked automatically installed, then removed.
in_root "$work/root" /bin/sh -c 'export DEBIAN_FRONTEND=noninteractive
  apt-get purge -y -q libzeus-dev >/dev/null
  apt-mark showmanual | xargs apt-mark auto >/dev/null
  apt-mark manual zeus zeusd python3-zeuscpp >/dev/null
  apt-get autoremove --purge -y -q >/dev/null
  apt-get clean
  rm -rf /var/lib/apt/lists/* /tmp/* /etc/zeusd/key /root/.cache'
echo "  $(du -sh "$work/root" | cut -f1) root filesystem"

rm -rf "$out/oci"
mkdir -p "$out"
umoci init --layout "$out/oci"
umoci new --image "$out/oci:base"
umoci unpack --image "$out/oci:base" "$work/bundle" >/dev/null
cp -a "$work/root/." "$work/bundle/rootfs/"
umoci repack --image "$out/oci:base" "$work/bundle"

step "tags zeus:$version and zeusd:$version"
umoci config --image "$out/oci:base" --tag zeus \
  --config.entrypoint /usr/bin/zeus --config.cmd show-env \
  --config.env ZEUS_LOG_LEVEL=info --config.workingdir /tmp \
  --config.label org.opencontainers.image.version="$version" \
  --config.label org.opencontainers.image.title=zeus
umoci config --image "$out/oci:base" --tag zeusd \
  --config.entrypoint /usr/bin/zeusd \
  --config.cmd serve --config.cmd=--mode --config.cmd=uds \
  --config.cmd=--socket-path --config.cmd=/run/zeusd/zeusd.sock \
  --config.cmd=--metrics-address --config.cmd=0.0.0.0:9400 \
  --config.exposedports 9400/tcp --config.volume /run/zeusd \
  --config.label org.opencontainers.image.version="$version" \
  --config.label org.opencontainers.image.title=zeusd
umoci rm --image "$out/oci:base"
umoci gc --layout "$out/oci"
umoci ls --layout "$out/oci" | sed 's/^/  tag: /'

# Smoke tests: the image's own process, with its arguments replaced by the
# smoke command (as `docker run IMAGE ARGS` would), in the unpacked rootfs.
smoke() {
  local tag=$1
  shift
  umoci unpack --image "$out/oci:$tag" "$work/run-$tag" >/dev/null
  local entry
  entry=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["process"]["args"][0])' \
    "$work/run-$tag/config.json")
  step "smoke $tag: $entry $*"
  in_root "$work/run-$tag/rootfs" "$entry" "$@"
}
smoke zeus show-env >"$work/zeus.txt"
head -12 "$work/zeus.txt"
smoke zeusd --help >"$work/zeusd.txt"
head -5 "$work/zeusd.txt"
echo "== images: built $out/oci (zeus, zeusd); docs/install.md shows how to load them"
