#!/usr/bin/env bash
# prepare.sh: gets what tests/gpu/device_checks.sh needs and the GPU machine lacks into
# .gpu/ (ignored by git; the device tool carries it): the Debian packages of LTTng, its
# libraries, headers and pkgconf (.gpu/debs), and a recording-only build made here against
# this machine's CUDA toolkit in the prefix the GPU machine will use (.gpu/prebuilt, used
# only when the build there fails). It then rehearses the whole script here
# (tests/gpu/rehearse.sh), without a GPU, with this machine's LTTng hidden.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
gpu=$root/.gpu
packages=(lttng-tools liblttng-ctl0 liblttng-ust1 liblttng-ust-common1 liblttng-ust-ctl5
	liburcu8 libnuma1 libpopt0 libxml2 libicu72 libkmod2 liblttng-ust-dev liblttng-ctl-dev
	liburcu-dev uuid-dev pkgconf pkgconf-bin libpkgconf3)
mkdir -p "$gpu/debs"
(cd "$gpu/debs" && apt-get download "${packages[@]}" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
rm -rf "$gpu/rehearsal"
PROFOPT_GPU_WORK=/tmp/profopt-gpu "$root/tests/gpu/rehearse.sh" "$gpu/rehearsal"
rm -rf "$gpu/prebuilt" && mkdir -p "$gpu/prebuilt"
cp -a /tmp/profopt-gpu/build/bin /tmp/profopt-gpu/build/lib /tmp/profopt-gpu/build/python \
	"$gpu/prebuilt/"
du -sh "$gpu"
