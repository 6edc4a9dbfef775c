#!/usr/bin/env bash
# `make package-test`: the Debian packages installed into a fresh Debian 12
# root and smoke-tested there, as a user on a new machine would use them.
#
#  1. a copy of the cached base root (scripts/package_base_root.sh: debootstrap
#     minbase from Debian's registry, plus tests/package/base-packages.txt:
#     the user's own tools, a compiler, CMake, Ninja; no pkg-config);
#  2. the packages' control data: what libzeus-dev depends on, what zeus
#     recommends (gnuplot), no compiler in any package's relations;
#  3. libzeus-dev alone, `apt-get install ./libzeus-dev_*.deb`, so only its
#     declared Depends come in: the C++ consumer (tests/install/consumer,
#     copied in as the user's project) built with find_package(Zeus) against
#     Zeus::monitor and Zeus::zeus, and with pkg-config, and run;
#  4. `apt-get install ./*.deb`, so every dependency comes from Debian by the
#     packages' own Depends, then zeus's Recommends; inside the root (chroot,
#     private mount and PID namespaces, /proc and /dev only: nothing of the
#     build or source tree is reachable): zeus show-env; the README's
#     `zeus simulate paper` (exit 2 without gnuplot, figures with it);
#     zeus monitor energy on the simulated GPU; import zeuscpp.monitor and
#     measure a window; zeusd serve on a Unix socket with a signing key, a
#     token issued by `zeusd token issue`, and a client round trip through
#     it; systemd-analyze verify on the zeusd unit;
#  5. no installed file names the build or source tree;
#  6. the container images' roots (scripts/package_images.sh --roots-only):
#     each within its size bound, without build tools, gnuplot in the zeus
#     image. With ZEUS_PACKAGE_TEST_IMAGES=1 the OCI images themselves.
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
cp "$src/tests/install/consumer/CMakeLists.txt" "$src/tests/install/consumer/"*.cc \
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
# apt_install ARGS...: apt-get install without Recommends in the root (what
# the packages depend on, nothing more); apt's lists are refreshed once when
# the cached base root's are older than the registry.
apt_install() {
  local cmd="export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends $* >/tmp/apt.log 2>&1"
  if ! in_root "$cmd"; then
    in_root 'apt-get update -q >/dev/null' && in_root "$cmd" ||
      { tail -30 "$root/tmp/apt.log" >&2; exit 1; }
  fi
  cp -a "$root/var/cache/apt/archives/." "$archives/" 2>/dev/null || true
  echo "  $(grep -c '^Setting up' "$root/tmp/apt.log" || true) packages set up"
}
deb_of() { ls "$pkgs/$1"_*.deb; }
field() { dpkg-deb -f "$(deb_of "$1")" "$2"; }

step "the packages' relations"
for p in zeus libzeus-dev zeusd python3-zeuscpp; do
  for f in Depends Recommends Suggests; do
    [ -z "$(field $p $f)" ] || printf '  %-16s %-10s %s\n' "$p" "$f:" "$(field $p $f | cut -c1-150)"
  done
done
# What find_package(Zeus) needs for Zeus::zeus (the libraries are static):
# the two this test once found missing by hand, and pkg-config (the config
# finds libpqxx through it). Step 3 proves the whole list by building.
for d in liblzma-dev libsvm-dev libfmt-dev nlohmann-json3-dev pkgconf; do
  field libzeus-dev Depends | tr ',|' '\n\n' | sed 's/^ *//; s/[ (].*//' | grep -qx "$d" ||
    { echo "package-test: libzeus-dev does not depend on $d" >&2; exit 1; }
done
field zeus Recommends | grep -q gnuplot ||
  { echo "package-test: zeus does not recommend gnuplot (zeus simulate paper needs it)" >&2; exit 1; }
# No package pulls a compiler into a user's machine or an image through its
# Recommends or Suggests (libzeus-dev may suggest cmake, the user's tool).
for p in zeus libzeus-dev zeusd python3-zeuscpp; do
  if field $p Recommends | tr ',|' '\n\n' | sed 's/^ *//; s/[ (].*//' |
    grep -Ex '(gcc|g\+\+|cpp|clang|build-essential)(-[0-9.]+)?'; then
    echo "package-test: $p recommends a compiler (above)" >&2
    exit 1
  fi
done

step "libzeus-dev alone: only its declared Depends (apt-get install ./libzeus-dev_*.deb)"
apt_install "/tmp/debs/$(basename "$(deb_of libzeus-dev)")"
step "C++ consumer: find_package(Zeus), Zeus::monitor and Zeus::zeus, built and run"
in_root 'cmake -S /tmp/consumer -B /tmp/consumer-build -G Ninja -DCMAKE_BUILD_TYPE=Release >/tmp/consumer.log 2>&1 ||
    { cat /tmp/consumer.log; exit 1; }
  cmake --build /tmp/consumer-build >>/tmp/consumer.log 2>&1 || { cat /tmp/consumer.log; exit 1; }
  cd /tmp && /tmp/consumer-build/measure_sim && /tmp/consumer-build/every_part'
step "C++ consumer: pkg-config --cflags --libs zeus"
in_root 'command -v pkg-config >/dev/null || { echo "pkg-config did not come with libzeus-dev"; exit 1; }
  c++ -o /tmp/pc_every_part /tmp/consumer/every_part.cc $(pkg-config --cflags --libs zeus)
  cd /tmp && /tmp/pc_every_part'

step "apt-get install ./*.deb (dependencies from Debian)"
apt_install /tmp/debs/*.deb

step "zeus show-env"
in_root 'zeus show-env >/tmp/show-env.txt; head -20 /tmp/show-env.txt'

step "zeus simulate paper (the README's command): gnuplot comes with zeus's Recommends"
in_root 'cd /tmp && if zeus simulate paper --out /tmp/paper-nognuplot >/tmp/paper.log 2>&1; then
    echo "zeus simulate paper drew its figures without gnuplot?"; exit 1
  fi
  grep -q gnuplot /tmp/paper.log && echo "  without gnuplot: refused, naming it (as expected)"'
# The first alternative of each of zeus's Recommends, as apt would pick.
recommends=$(field zeus Recommends | sed 's/([^)]*)//g' | tr ',' '\n' | sed 's/|.*//; s/ //g')
# shellcheck disable=SC2086
apt_install $recommends
in_root 'cd /tmp && zeus simulate paper --out /tmp/paper >/tmp/paper.log 2>&1 || { cat /tmp/paper.log; exit 1; }
  tail -1 /tmp/paper.log
  n=$(ls /tmp/paper/figures/*.png | wc -l); [ "$n" -gt 0 ] || { echo "no figures drawn"; exit 1; }
  echo "  $n figures drawn by $(command -v gnuplot)"'

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

step "systemd-analyze verify zeusd.service"
in_root 'unit=$(dpkg -L zeusd | grep "/zeusd.service$")
  SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$unit"
  getent group zeusd >/dev/null && echo "group zeusd: present"
  dpkg-query -W -f="\${Conffiles}\n" zeusd | grep -q /etc/default/zeusd && echo "conffile: /etc/default/zeusd"'

step "man pages and bash completion (packaging/help_docs.py)"
in_root 'for f in zeus:/usr/share/man/man1/zeus.1.gz zeus:/usr/share/bash-completion/completions/zeus \
    zeusd:/usr/share/man/man8/zeusd.8.gz zeusd:/usr/share/bash-completion/completions/zeusd; do
    dpkg -L "${f%%:*}" | grep -x "${f#*:}" >/dev/null && [ -s "${f#*:}" ] || { echo "${f%%:*} lacks ${f#*:}"; exit 1; }
  done
  zcat /usr/share/man/man1/zeus.1.gz | grep "^\.SS \"zeus monitor energy\"" >/dev/null || { echo "zeus.1 lacks zeus monitor energy"; exit 1; }
  source /usr/share/bash-completion/completions/zeus
  COMP_WORDS=(zeus monitor ""); COMP_CWORD=2; _zeus
  [ "${COMPREPLY[*]}" = "energy power temperature" ] || { echo "zeus monitor <TAB>: ${COMPREPLY[*]}"; exit 1; }
  echo "  zeus(1), zeusd(8) and both completions installed; zeus monitor <TAB>: ${COMPREPLY[*]}"'

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

step "the container images (scripts/package_images.sh)"
if [ "${ZEUS_PACKAGE_TEST_IMAGES:-0}" = 1 ]; then
  bash "$src/scripts/package_images.sh" "$root" "$build/images"
else
  bash "$src/scripts/package_images.sh" "$root" "$build/images" --roots-only
fi
echo "== package-test: passed in $((SECONDS - start)) s"
