#!/usr/bin/env bash
# device_checks.sh OUT: the checks of the CUPTI collector on a machine with an NVIDIA GPU,
# PyTorch with CUDA and nvcc, but without LTTng (tests/gpu/README.md). Run it from the
# source tree after tests/gpu/prepare.sh has put the Debian packages into .gpu/debs. It
# unpacks them into a private prefix, builds the recording side of profopt
# (PROFOPT_RECORD_ONLY) against the machine's CUDA toolkit, starts a session daemon of its
# own, and runs the plan (tests/gpu/plan.txt): PyTorch runs recorded with profopt-record,
# the same configurations without profopt (their own timings, and torch.profiler's view of
# them), a C program recorded with --gpu, and the collector's cost per kernel. Into OUT:
#   log.txt          what happened, with the versions and the collector's own counts
#   traces.tar.xz    the recorded traces (analysed elsewhere: tests/gpu/evaluate.py)
#   results.tar.xz   each run's ground truth (JSON) and output, the build log, the bench
# Nothing here needs the network. DEADLINE_S (default 420) stops starting new runs; PLAN
# names another plan (tests/gpu/rehearse.sh runs a CPU plan on a machine without a GPU).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: device_checks.sh OUT}
deadline_s=${DEADLINE_S:-420}
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1
work=${PROFOPT_GPU_WORK:-/tmp/profopt-gpu}
rm -rf "$work"
mkdir -p "$work/runs" "$work/traces"
started=$(date +%s)
say() { echo "[$(($(date +%s) - started))s] $*"; }

pack() {
	local compress=J suffix=xz
	command -v xz >/dev/null || { compress=z suffix=gz; }
	say "packing"
	tar -C "$work" -c${compress}f "$out/traces.tar.$suffix" traces
	tar -C "$work" -c${compress}f "$out/results.tar.$suffix" runs
	ls -la "$out"
}
trap pack EXIT

# ---- 1. Debian packages into a private prefix ----
deps=$work/deps
lib=$deps/usr/lib/x86_64-linux-gnu
mkdir -p "$deps"
for deb in "$root"/.gpu/debs/*.deb; do
	if command -v dpkg >/dev/null; then
		dpkg -x "$deb" "$deps" || { say "dpkg -x failed: $deb"; exit 1; }
	else
		python3 "$root/tests/gpu/unpack_deb.py" "$deb" "$deps" || exit 1
	fi
done
for pc in "$lib"/pkgconfig/*.pc "$deps"/usr/share/pkgconfig/*.pc; do
	[ -e "$pc" ] && sed -i "s#=/usr#=$deps/usr#g" "$pc"
done
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$deps/usr/bin:$PATH
export PKG_CONFIG_LIBDIR=$lib/pkgconfig:$deps/usr/share/pkgconfig
export LTTNG_SESSION_CONFIG_XSD_PATH=$deps/usr/share/xml/lttng
say "machine: $(uname -r); $(nvidia-smi --query-gpu=name,driver_version,memory.total \
	--format=csv,noheader 2>&1 | head -1)"
# Python and torch, where torch's own CUPTI is (the collector and torch.profiler then share
# one copy) and libtorch_cuda, as lines "VERSIONS ...", "CUPTI_DIR ...", "LIBTORCH_CUDA ...".
python3 "$root/tests/gpu/python_facts.py" >"$work/runs/python.txt" 2>&1
say "python: $(command -v python3) $(sed -n 's/^VERSIONS //p' "$work/runs/python.txt")"
cupti_dir=$(sed -n 's/^CUPTI_DIR //p' "$work/runs/python.txt")
torch_cuda=$(sed -n 's/^LIBTORCH_CUDA //p' "$work/runs/python.txt")
missing=$(for binary in "$deps/usr/bin/lttng-sessiond" "$deps/usr/bin/lttng" \
	"$lib/lttng/libexec/lttng-consumerd" "$lib/liblttng-ust.so.1" "$deps/usr/bin/pkgconf"; do
	ldd "$binary" | grep "not found" | sed "s#^#$binary: #"
done)
[ -z "$missing" ] || { say "libraries missing: $missing"; exit 1; }

# ---- 2. the recording side, built against this machine's CUDA toolkit ----
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
cuda_root=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
build=$work/build
say "building with the CUDA toolkit at $cuda_root ($("$nvcc" --version 2>&1 | tail -1))"
if ! cmake -S "$root" -B "$build" -DPROFOPT_RECORD_ONLY=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCUDAToolkit_ROOT="$cuda_root" -DPKG_CONFIG_EXECUTABLE="$deps/usr/bin/pkgconf" \
	>"$work/runs/build.log" 2>&1 ||
	! cmake --build "$build" -j"$(nproc)" >>"$work/runs/build.log" 2>&1 ||
	[ ! -e "$build/lib/libprofopt-cupti.so.0" ]; then
	tail -n 30 "$work/runs/build.log"
	# tests/gpu/prepare.sh built the same here, against CUDA 13.0 and the same prefix.
	[ -d "$root/.gpu/prebuilt/lib" ] || { say "the build failed"; exit 1; }
	say "the build failed: using the one tests/gpu/prepare.sh made (.gpu/prebuilt)"
	rm -rf "$build" && cp -a "$root/.gpu/prebuilt" "$build"
fi
grep "profopt:" "$work/runs/build.log"
export PATH=$build/bin:$PATH
export PROFOPT_LIBRARY=$build/lib/libprofopt.so.0
export PROFOPT_CUPTI_LIBRARY=$build/lib/libprofopt-cupti.so.0
export PYTHONPATH=$build/python PYTHONUNBUFFERED=1 PROFOPT_CUPTI_VERBOSE=1
[ -n "$cupti_dir" ] && export LD_LIBRARY_PATH=$cupti_dir:$LD_LIBRARY_PATH
say "CUPTI: torch's at ${cupti_dir:-(none found)}; libtorch_cuda: $(ldd "$torch_cuda" 2>&1 |
	grep -i cupti | tr '\n' ' ')(static if empty); the collector: $(ldd \
	"$PROFOPT_CUPTI_LIBRARY" | grep cupti)"

# ---- 3. a session daemon of our own ----
# In the foreground of a session of its own (--daemonize failed there once, saying only
# that it could not remove its lock file): ready when "lttng list" answers.
setsid lttng-sessiond --no-kernel --consumerd64-path="$lib/lttng/libexec/lttng-consumerd" \
	--consumerd64-libdir="$lib" >"$work/runs/sessiond.log" 2>&1 </dev/null &
for _ in $(seq 100); do
	lttng list >/dev/null 2>&1 && break
	sleep 0.1
done
lttng list >/dev/null 2>&1 ||
	{ tail -n 20 "$work/runs/sessiond.log"; say "lttng-sessiond did not start"; exit 1; }
say "lttng-sessiond $(cat /run/lttng/lttng-sessiond.pid 2>/dev/null) started"

# ---- 4. the plan: NAME MODE ARGS... (tests/gpu/plan.txt) ----
run() {
	local name=$1 mode=$2
	shift 2
	local truth=$work/runs/$name.json log=$work/runs/$name.log status
	if [ $(($(date +%s) - started)) -gt "$deadline_s" ]; then
		say "$name: not run (past the deadline of ${deadline_s}s)"
		return
	fi
	case $mode in
	profopt)
		timeout 150 profopt-record -o "$work/traces/$name" -- \
			python3 "$root/tests/gpu/train.py" --profopt --truth "$truth" "$@" >"$log" 2>&1
		;;
	profopt-nogpu)
		PROFOPT_GPU=0 timeout 150 profopt-record -o "$work/traces/$name" -- \
			python3 "$root/tests/gpu/train.py" --profopt --truth "$truth" "$@" >"$log" 2>&1
		;;
	profopt-nocb)
		PROFOPT_CUPTI_CALLBACKS=0 timeout 150 profopt-record -o "$work/traces/$name" -- \
			python3 "$root/tests/gpu/train.py" --profopt --truth "$truth" "$@" >"$log" 2>&1
		;;
	plain)
		timeout 150 python3 "$root/tests/gpu/train.py" --truth "$truth" "$@" >"$log" 2>&1
		;;
	inject) # a C program under profopt-record --gpu: the driver loads the collector
		nvcc -O2 -o "$work/gpu_overhead" "$root/bench/gpu_overhead.cu" >"$log" 2>&1 &&
			timeout 60 profopt-record --gpu -o "$work/traces/$name" -- \
				"$work/gpu_overhead" "$@" >>"$log" 2>&1
		;;
	bench) # the collector's cost per kernel of 5 us, 50 us and 1 ms
		ROUNDS=$1 RECORD=1 timeout 150 "$root/bench/gpu_overhead.sh" "$build" >"$log" 2>&1
		;;
	esac
	status=$?
	say "$name ($mode $*): exit $status; $(grep -h 'train.py\|profopt-cupti:\|us_per\|%' \
		"$log" | tr '\n' ' ' | cut -c1-600)"
}

while read -r name mode args; do
	case $name in '' | '#'*) continue ;; esac
	# shellcheck disable=SC2086
	run "$name" "$mode" $args
	if [ "$name" = cnn-fp32 ] && ! grep -q "profopt-cupti: pid .* recorded [1-9]" \
		"$work/runs/$name.log"; then
		tail -n 40 "$work/runs/$name.log"
		say "the first recorded run has no kernels: stopping here"
		exit 1
	fi
done <"${PLAN:-$root/tests/gpu/plan.txt}"
kill "$(cat /run/lttng/lttng-sessiond.pid)" 2>/dev/null
say "done"
