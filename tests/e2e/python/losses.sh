#!/usr/bin/env bash
# losses.sh WORKERS [TRAIN ARGS...]: with a fixed seed, train.py prints the same losses
# with and without profopt's instrumentation.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
workers=$1
shift
work=$(mktemp -d /tmp/profopt-e2e-python.XXXXXX)
trap 'rm -rf "$work"' EXIT
train=("$root/samples/pytorch/train.py" --workers "$workers" --steps 40 --seed 5
	--print-losses "$@")
/usr/bin/python3 "${train[@]}" >"$work/with.txt" || exit 1
/usr/bin/python3 "${train[@]}" --no-profopt >"$work/without.txt" || exit 1
lines=$(grep -c '^step .* loss ' "$work/with.txt")
if [ "$lines" -ne 40 ]; then
	echo "FAIL expected 40 losses, got $lines"
	exit 1
fi
if ! diff -u "$work/without.txt" "$work/with.txt"; then
	echo "FAIL losses differ with instrumentation"
	exit 1
fi
echo "ok   40 identical losses with and without instrumentation (num_workers=$workers)"
