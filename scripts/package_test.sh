#!/usr/bin/env bash
# `make package-test`: the Debian packages installed into a fresh Debian 12
# root and smoke-tested there, as a user on a new machine would use them.
#
#  1. a copy of the cached base root (scripts/package_base_root.sh: debootstrap
#     minbase from Debian's registry, plus tests/package/base-packages.txt);
#  2. `apt-get install ./*.deb` inside it, so every dependency comes from
#     Debian by the packages' own Depends, not from this machine;
#  3. inside the root (chroot, private mount and PID namespaces, /proc and
#     /dev only: nothing of the build or source tree is reachable):
#     zeus show-env; zeus monitor energy on the simulated GPU; import
#     zeuscpp.monitor and measure a window; zeusd serve on a Unix socket with
#     a signing key, a token issued by `zeusd token issue`, and a client
#     round trip through it; the C++ consumer (tests/install/consumer, copied
#     in as the user's project) built against libzeus-dev;
#     systemd-analyze verify on the zeusd unit;
#  4. no installed file names the build or source tree.
# With ZEUS_PACKAGE_TEST_IMAGES=1 it then builds the OCI images from the
# tested root (scripts/package_images.sh).
#
#   scripts/package_test.sh PACKAGES_DIR
#
# The tested root stays in ZEUS_CACHE_DIR/package-test/tested (for the images
# and for a look around); apt's downloads are kept there between runs.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 PACKAGES_DIR" >&2; exit 2; }
pkgs=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(dirname "$pkgs")
cache=${ZEUS_CACHE_DIR:-$HOME/.cache/zeus}/package-test
[ "$(id -u)" -eq 0 ] || { echo "package-test: needs root (debootstrap, chroot)" >&2; exit 1; }
mapfile -t debs < <(ls "$pkgs"/*.deb 2>/dev/null)
[ ${#debs[@]} -ge 4 ] || { echo "package-test: expected 4 packages in $pkgs (make package)" >&2; exit 1; }

start=$SECONDS
base=$(bash "$src/scripts/package_base_root.sh")
root=$cache/tested
archives=$cache/apt-archives
step() { echo "== package-test ($((SECONDS - start)) s): $*"; }

step "fresh root from $base"
rm -rf "$root"
cp -a "$base" "$root"
mkdir -p "$archives" "$root/tmp/debs" "$root/tmp/consumer"
cp "${debs[@]}" "$root/tmp/debs/"
cp "$src/tests/install/consumer/CMakeLists.txt" "$src/tests/install/consumer/measure_sim.cc" \
  "$root/tmp/consumer/"
cp -a "$archives/." "$root/var/cache/apt/archives/" 2>/dev/null || true
cp /etc/resolv.conf "$root/etc/resolv.conf"

# Runs a shell script inside the root: own mount and PID namespaces (the
# mounts and any daemon left behind go when it ends), /proc and /dev only.
in_root() {
  unshare --mount --pid --fork --kill-child -- /bin/sh -c '
    set -e
    mount -t proc proc "$1/proc"
    mount --rbind /dev "$1/dev"
    exec chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
      LANG=C.UTF-8 /bin/bash -euo pipefail -c "$2"' sh "$root" "$1"
}

step "apt-get install ./*.deb (dependencies from Debian)"
install_cmd='export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends /tmp/debs/*.deb >/tmp/apt.log 2>&1'
if ! in_root "$install_cmd"; then
  # The cached base root's package lists may be older than the registry.
  in_root 'apt-get update -q >/dev/null' && in_root "$install_cmd" ||
    { tail -30 "$root/tmp/apt.log" >&2; exit 1; }
fi
cp -a "$root/var/cache/apt/archives/." "$archives/" 2>/dev/null || true
grep -E '^(Setting up|Unpacking) ' "$root/tmp/apt.log" | grep -c 'Setting up' |
  xargs -I{} echo "  {} packages set up"

step "zeus show-env"
in_root 'zeus show-env >/tmp/show-env.txt; head -20 /tmp/show-env.txt'

step "zeus monitor energy on the simulated GPU"
in_root 'cd /tmp && ZEUS_GPU_BACKEND=sim zeus monitor energy -- sleep 1 2>&1 | tee /tmp/monitor.txt
  grep -qi "gpu" /tmp/monitor.txt'

step "python3: import zeuscpp.monitor and measure a window"
in_root 'cd /tmp && ZEUS_GPU_BACKEND=sim python3 -c "
import zeuscpp.monitor
from zeuscpp.monitor import ZeusMonitor
m = ZeusMonitor(gpu_indices=[0])
m.begin_window(\"w\")
import time; time.sleep(0.5)
r = m.end_window(\"w\")
print(\"zeuscpp window:\", r)
assert r.time > 0.4 and r.gpu_energy[0] > 0, r
print(\"zeuscpp from\", zeuscpp.__file__)
"'

step "zeusd serve on a socket with a token; a client through it"
in_root '
  install -d -m 700 /etc/zeusd
  head -c 32 /dev/urandom | base64 > /etc/zeusd/key && chmod 600 /etc/zeusd/key
  token=$(zeusd token issue --signing-key-path /etc/zeusd/key --user ci --scope gpu-read --expires 1h)
  zeusd serve --mode uds --socket-path /tmp/zeusd.sock --gpu-backend sim \
    --signing-key-path /etc/zeusd/key >/tmp/zeusd.log 2>&1 &
  for i in $(seq 50); do [ -S /tmp/zeusd.sock ] && break; sleep 0.1; done
  [ -S /tmp/zeusd.sock ] || { cat /tmp/zeusd.log; exit 1; }
  # Without the token: refused. With it: the GPUs come from zeusd.
  if ZEUSD_SOCK_PATH=/tmp/zeusd.sock ZEUS_GPU_BACKEND=zeusd zeus monitor energy -- true \
      >/tmp/no_token.txt 2>&1; then
    echo "zeusd served a client without a token:"; cat /tmp/no_token.txt; exit 1
  fi
  ZEUSD_SOCK_PATH=/tmp/zeusd.sock ZEUSD_TOKEN=$token ZEUS_GPU_BACKEND=zeusd \
    zeus show-env | tee /tmp/through_zeusd.txt | grep -i zeusd
  ZEUSD_SOCK_PATH=/tmp/zeusd.sock ZEUSD_TOKEN=$token ZEUS_GPU_BACKEND=zeusd \
    zeus monitor energy -- sleep 0.5
  kill %1; wait || true'

step "C++ consumer against libzeus-dev (find_package(Zeus))"
in_root 'cmake -S /tmp/consumer -B /tmp/consumer-build -G Ninja -DCMAKE_BUILD_TYPE=Release >/tmp/consumer.log
  cmake --build /tmp/consumer-build >>/tmp/consumer.log
  /tmp/consumer-build/measure_sim'

step "systemd-analyze verify zeusd.service"
in_root 'unit=$(dpkg -L zeusd | grep "/zeusd.service$")
  SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$unit"
  getent group zeusd >/dev/null && echo "group zeusd: present"
  dpkg-query -W -f="\${Conffiles}\n" zeusd | grep -q /etc/default/zeusd && echo "conffile: /etc/default/zeusd"'

step "no installed file names the build or source tree"
leaks=""
for pkg in zeus libzeus-dev zeusd python3-zeuscpp; do
  while read -r f; do
    [ -f "$root$f" ] || continue
    if grep -q -a -e "$build" -e "$src/" "$root$f"; then leaks+=" $f"; fi
  done < <(in_root "dpkg -L $pkg")
done
if [ -n "$leaks" ]; then
  echo "these installed files name $src or $build:$leaks" >&2
  exit 1
fi

echo "== package-test: passed in $((SECONDS - start)) s"
if [ "${ZEUS_PACKAGE_TEST_IMAGES:-0}" = 1 ]; then
  bash "$src/scripts/package_images.sh" "$root" "$build/images"
fi
