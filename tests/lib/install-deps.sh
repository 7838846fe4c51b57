#!/usr/bin/env bash
# install-deps.sh [--with-test-tools]: installs the Debian 12 packages profopt needs to
# build and run, only those missing. Needs root (apt-get) when something is missing.
set -eu

packages=(build-essential cmake pkg-config lttng-tools liblttng-ust-dev liblttng-ctl-dev
	babeltrace2 libbabeltrace2-dev libyajl-dev zlib1g-dev libcairo2-dev libpango1.0-dev libgraphviz-dev
	libxml2-dev libelf-dev libdw-dev util-linux fonts-dejavu-core)
if [ "${1:-}" = "--with-test-tools" ]; then
	# python3-dev: CPython 3.11's headers and embed library, for unit.lib.pyframes and
	# unit.lib.pyframes.layouts.py311 (libprofopt's reader itself builds without them)
	packages+=(python3-dev python3-bt2 python3-venv python3-wheel python3-setuptools libxml2-utils poppler-utils python3-torch python3-pil chromium clang
		libclang-rt-14-dev clang-format valgrind time
		slurm-wlm munge openmpi-bin) # e2e.cluster.*: a private Slurm node, mpirun
fi

missing=()
for pkg in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$pkg")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing Debian packages: ${missing[*]}; run as root or install them" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
