#!/bin/sh
# SPDX-License-Identifier: MIT
# tools/deps.sh GROUP... — make sure the Debian packages a make target needs are installed.
#
# Every make target that needs a tool calls this first with its groups. Packages already
# installed cost one dpkg-query each; missing ones are named, then installed with apt-get
# (as root), or the script stops with the exact command to run. Groups:
#   build  cross compiler, binutils, picolibc, glibc for the cross target, cpio
#          (make, make all; busybox-static and musl-dev for arm64 are test inputs that
#          tools/fetch-debs downloads, never installs)
#   run    QEMU                                          (make run, make debug, tests)
#   test   host compiler, cmocka, pytest, matplotlib, dtc, iproute2 (make test: `ip` makes
#          the host-only multi-queue taps of the PCI tests)
#   debug  gdb-multiarch                                 (make gdb)
#   format clang-format                                  (make format, make check-format)
#   bench  matplotlib                                    (make bench, plots)
set -u

pkgs_build="gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu picolibc-aarch64-linux-gnu \
libc6-dev-arm64-cross libc6-arm64-cross cpio"
pkgs_run="qemu-system-arm"
pkgs_test="gcc libc6-dev libcmocka-dev python3 python3-pytest python3-matplotlib device-tree-compiler \
iproute2"
pkgs_debug="gdb-multiarch"
pkgs_format="clang-format"
pkgs_bench="python3 python3-matplotlib"

want=""
for group in "$@"; do
    case "$group" in
    build) want="$want $pkgs_build" ;;
    run) want="$want $pkgs_run" ;;
    test) want="$want $pkgs_test" ;;
    debug) want="$want $pkgs_debug" ;;
    format) want="$want $pkgs_format" ;;
    bench) want="$want $pkgs_bench" ;;
    *)
        echo "deps: unknown group '$group' (known: build run test debug format bench)" >&2
        exit 2
        ;;
    esac
done

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps: this is not a Debian system (no dpkg-query); install the equivalents of:" >&2
    echo "deps:   $want" >&2
    echo "deps: continuing, the build will fail where a tool is missing" >&2
    exit 0
fi

missing=""
for p in $want; do
    case " $missing " in *" $p "*) continue ;; esac
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)
    [ "$status" = "install ok installed" ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "deps: missing Debian packages:$missing"
if [ "$(id -u)" != 0 ]; then
    echo "deps: not root, so cannot install them; run: sudo apt-get install -y$missing" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "deps: apt-get is not available; install these packages by hand:$missing" >&2
    exit 1
fi
echo "deps: installing:$missing (apt-get install -y --no-install-recommends)"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine's package lists may be stale or absent: try once, refresh, try again.
# shellcheck disable=SC2086
if ! apt-get install -y -q --no-install-recommends $missing >/tmp/zerotick-apt.log 2>&1; then
    echo "deps: first attempt failed, refreshing package lists (apt-get update)"
    apt-get update -q >>/tmp/zerotick-apt.log 2>&1
    # shellcheck disable=SC2086
    if ! apt-get install -y -q --no-install-recommends $missing >>/tmp/zerotick-apt.log 2>&1; then
        echo "deps: apt-get could not install:$missing" >&2
        echo "deps: last lines of /tmp/zerotick-apt.log:" >&2
        tail -n 15 /tmp/zerotick-apt.log >&2
        exit 1
    fi
fi
echo "deps: installed:$missing"
exit 0
