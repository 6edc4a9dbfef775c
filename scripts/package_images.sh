#!/usr/bin/env bash
# The zeus and zeusd container images from the root `make package-test`
# tested, without pulling any base image. Each image carries what it runs and
# nothing else:
#
#   zeus   zeus, python3-zeuscpp, gnuplot-nox (`zeus simulate paper` draws its
#          figures with it: zeus Recommends it) and ca-certificates (the HTTPS
#          carbon and price providers)
#   zeusd  zeusd
#
# Each image root is a copy of the tested root where only those packages stay
# manually installed; everything else (the test tools, the compiler, the
# other Zeus packages, what Recommends or Suggests alone would keep) is
# purged, and so are documentation, manual pages and translations (copyright
# files stay; a dpkg exclude keeps later installs in the image free of them
# too). Then, for each root: its size against the bound below (the failure
# lists the largest packages), no compiler, build tool or -dev package, and
# its smoke test run in the root (`zeus show-env` and the README's
# `zeus simulate paper` with its figures; `zeusd --help`).
#
# Without --roots-only (ZEUS_PACKAGE_TEST_IMAGES=1 make package-test), the
# roots then become OCI images: umoci (Debian's package) makes an empty
# image, the root's files become its one layer, and the tag gets its entry
# point; each image is unpacked as a container runtime would (umoci unpack:
# the runtime bundle's rootfs and config.json) and the process its config
# names runs in that rootfs (chroot in private mount and PID namespaces). No
# container engine runs on the machines this was written on
# (docs/install.md says exactly what runs where).
#
#   scripts/package_images.sh TESTED_ROOT OUT_DIR [--roots-only]   # -> OUT_DIR/oci (tags zeus, zeusd)
set -euo pipefail
usage() { echo "usage: $0 TESTED_ROOT OUT_DIR [--roots-only]" >&2; exit 2; }
roots_only=0
case "$#:${3:-}" in
  2:) ;;
  3:--roots-only) roots_only=1 ;;
  *) usage ;;
esac
tested=$(cd "$1" && pwd)
out=$2
# Bounds on the image roots (MB, du -sm), about 25% over what they measured
# (docs/benchmarks.md, "Container images"): an image that grows past its
# bound fails here, naming its largest packages.
declare -A max_mb=([zeus]=250 [zeusd]=140)
declare -A keep=([zeus]="zeus python3-zeuscpp gnuplot-nox ca-certificates" [zeusd]="zeusd")
zeus_packages="libzeus-dev zeus zeusd python3-zeuscpp zeus-slurm"
if [ $roots_only = 0 ]; then
  command -v umoci >/dev/null || { echo "images: umoci is not installed (scripts/setup.sh package)" >&2; exit 1; }
fi
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

# image_root NAME: $work/NAME, the tested root with only keep[NAME] (and what
# it depends on, and what Debian never removes) left.
image_root() {
  local name=$1 root=$work/$1 drop="" p
  for p in $zeus_packages; do
    [[ " ${keep[$name]} " == *" $p "* ]] || drop+=" $p"
  done
  cp -a "$tested" "$root"
  in_root "$root" /bin/bash -euo pipefail -c '
    export DEBIAN_FRONTEND=noninteractive
    keep=$1 drop=$2
    for p in $keep; do
      dpkg-query -W -f="\${Status}" "$p" 2>/dev/null | grep -q "ok installed" ||
        { echo "images: $p is not installed in the tested root" >&2; exit 1; }
    done
    apt-mark showmanual | xargs -r apt-mark auto >/dev/null
    # shellcheck disable=SC2086
    apt-mark manual $keep >/dev/null
    installed=$(dpkg-query -W -f="\${Package} \${Status}\n" $drop 2>/dev/null | grep "ok installed" | cut -d" " -f1 || true)
    # shellcheck disable=SC2086
    [ -z "$installed" ] || apt-get purge -y -q $installed >/dev/null
    # Recommends and Suggests keep nothing: the image runs what it depends on.
    apt-get autoremove --purge -y -q -o APT::AutoRemove::SuggestsImportant=false \
      -o APT::AutoRemove::RecommendsImportant=false >/dev/null
    apt-get clean
    rm -rf /var/lib/apt/lists/* /tmp/* /etc/zeusd/key /root/.cache /etc/resolv.conf \
      /var/cache/debconf/*-old /var/lib/dpkg/*-old /var/log/apt/* /var/log/*.log
    printf "%s\n" "# Container image: no documentation, manuals or translations (copyright stays)." \
      "path-exclude /usr/share/doc/*" "path-include /usr/share/doc/*/copyright" \
      "path-exclude /usr/share/man/*" "path-exclude /usr/share/info/*" \
      "path-exclude /usr/share/locale/*" "path-include /usr/share/locale/locale.alias" \
      > /etc/dpkg/dpkg.cfg.d/zeus-image-nodoc
    find /usr/share/doc -type f ! -name copyright -delete
    find /usr/share/doc -type l -delete
    find /usr/share/doc -mindepth 1 -type d -empty -delete
    rm -rf /usr/share/man/* /usr/share/info/*
    find /usr/share/locale -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +' \
    sh "${keep[$name]}" "$drop"
}

# check_root NAME: the size bound, and no build tools.
check_root() {
  local name=$1 root=$work/$1 mb
  mb=$(du -sm "$root" | cut -f1)
  echo "  $name: ${mb} MB root filesystem (bound ${max_mb[$name]} MB), $(chroot "$root" dpkg-query -W | wc -l) packages"
  if [ "$mb" -gt "${max_mb[$name]}" ]; then
    echo "images: the $name image root is ${mb} MB, over its bound of ${max_mb[$name]} MB" \
      "(scripts/package_images.sh). Its largest packages (KB):" >&2
    chroot "$root" dpkg-query -W -f='${Installed-Size}\t${Package}\n' | sort -rn | head -15 >&2
    exit 1
  fi
  local tools
  tools=$(chroot "$root" dpkg-query -W -f='${Package}\n' |
    grep -E '^(gcc|g\+\+|cpp|clang|binutils|cmake|make|ninja-build|pkgconf|pkg-config|build-essential)(-[0-9.]+)?$|^(binutils-.*|.*-dev)$' || true)
  if [ -n "$tools" ]; then
    echo "images: the $name image carries build tools it never runs:" $tools >&2
    exit 1
  fi
}

# smoke_zeus ROOT ENTRY / smoke_zeusd ROOT ENTRY: the image's programs.
smoke_zeus() {
  in_root "$1" "$2" show-env >"$work/zeus.txt"
  head -3 "$work/zeus.txt"
  # The README's command, figures included: gnuplot must be in the image.
  in_root "$1" /bin/sh -c "cd /tmp && $2 simulate paper --out /tmp/paper >/tmp/paper.log 2>&1 ||
    { cat /tmp/paper.log; exit 1; }
    n=\$(ls /tmp/paper/figures/*.png | wc -l); [ \"\$n\" -gt 0 ] || { echo 'no figures drawn'; exit 1; }
    echo \"  zeus simulate paper: \$n figures\"; rm -rf /tmp/paper /tmp/paper.log"
}
smoke_zeusd() {
  in_root "$1" "$2" --help >"$work/zeusd.txt"
  head -2 "$work/zeusd.txt"
}

for name in zeus zeusd; do
  step "the $name image root: ${keep[$name]}"
  image_root "$name"
  check_root "$name"
  "smoke_$name" "$work/$name" "/usr/bin/$name"
done
if [ $roots_only = 1 ]; then
  step "image roots checked (OCI images: ZEUS_PACKAGE_TEST_IMAGES=1)"
  exit 0
fi

rm -rf "$out/oci"
mkdir -p "$out"
umoci init --layout "$out/oci"
for name in zeus zeusd; do
  step "tag $name ($name:$version)"
  umoci new --image "$out/oci:$name"
  umoci unpack --image "$out/oci:$name" "$work/bundle-$name" >/dev/null
  cp -a "$work/$name/." "$work/bundle-$name/rootfs/"
  umoci repack --image "$out/oci:$name" "$work/bundle-$name"
  rm -rf "$work/bundle-$name" "$work/$name"
done
umoci config --image "$out/oci:zeus" \
  --config.entrypoint /usr/bin/zeus --config.cmd show-env \
  --config.env ZEUS_LOG_LEVEL=info --config.workingdir /tmp \
  --config.label org.opencontainers.image.version="$version" \
  --config.label org.opencontainers.image.title=zeus
umoci config --image "$out/oci:zeusd" \
  --config.entrypoint /usr/bin/zeusd \
  --config.cmd serve --config.cmd=--mode --config.cmd=uds \
  --config.cmd=--socket-path --config.cmd=/run/zeusd/zeusd.sock \
  --config.cmd=--metrics-address --config.cmd=0.0.0.0:9400 \
  --config.exposedports 9400/tcp --config.volume /run/zeusd \
  --config.label org.opencontainers.image.version="$version" \
  --config.label org.opencontainers.image.title=zeusd
umoci gc --layout "$out/oci"
umoci ls --layout "$out/oci" | sed 's/^/  tag: /'
echo "  $(du -sm "$out/oci" | cut -f1) MB OCI layout (compressed layers)"

# Smoke tests: the image's own process, with its arguments replaced by the
# smoke command (as `docker run IMAGE ARGS` would), in the unpacked rootfs.
for name in zeus zeusd; do
  umoci unpack --image "$out/oci:$name" "$work/run-$name" >/dev/null
  entry=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["process"]["args"][0])' \
    "$work/run-$name/config.json")
  step "smoke $name (unpacked image): $entry"
  "smoke_$name" "$work/run-$name/rootfs" "$entry"
done
echo "== images: built $out/oci (zeus, zeusd); docs/install.md shows how to load them"
