#!/usr/bin/env bash
# rehearse.sh OUT: runs tests/gpu/device_checks.sh here, on a machine without a GPU, as the
# GPU machine will: in private mount and PID namespaces where this machine's own LTTng
# (programs, libraries, headers, pkg-config files) and pkg-config are hidden, so that only
# the Debian packages of .gpu/debs serve, with the CPU plan tests/gpu/plan-cpu.txt. What
# needs a GPU (the collector's records, the C program, the bench) is left out by the
# script itself when nvidia-smi is missing. Needs root (unshare, mount).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(readlink -f "${1:?usage: rehearse.sh OUT}")
if [ "${PROFOPT_REHEARSAL:-}" != inside ]; then
	PROFOPT_REHEARSAL=inside exec unshare --mount --pid --fork --kill-child --mount-proc \
		--propagation private "$0" "$@"
fi
multiarch=/usr/lib/x86_64-linux-gnu
hide_file() { mount --bind /dev/null "$1"; }
for file in /usr/bin/lttng /usr/bin/lttng-sessiond /usr/bin/lttng-relayd /usr/bin/pkg-config \
	/usr/bin/pkgconf /usr/bin/x86_64-linux-gnu-pkg-config "$multiarch"/liblttng-* \
	"$multiarch"/liburcu* "$multiarch"/libpopt* "$multiarch"/libnuma* \
	"$multiarch"/libxml2* "$multiarch"/libicu* "$multiarch"/libkmod* "$multiarch"/libpkgconf*; do
	[ -f "$file" ] && [ ! -L "$file" ] && hide_file "$file"
done
for dir in /usr/include/lttng /usr/include/x86_64-linux-gnu/lttng /usr/include/urcu \
	"$multiarch"/pkgconfig /usr/share/pkgconfig "$multiarch"/lttng /usr/share/xml/lttng \
	/run/lttng /dev/shm; do
	[ -d "$dir" ] && mount -t tmpfs rehearsal "$dir"
done
# The GPU machine's python3 has torch; here Debian's does.
bin=$(mktemp -d /tmp/profopt-rehearsal-bin.XXXXXX)
ln -s /usr/bin/python3 "$bin/python3"
PATH=$bin:$PATH PLAN=$root/tests/gpu/plan-cpu.txt PROFOPT_GPU_WORK=${PROFOPT_GPU_WORK:-/tmp/profopt-gpu-rehearsal} \
	"$root/tests/gpu/device_checks.sh" "$out"
