#!/usr/bin/env bash
# hosts.sh BIN_DIR DATA_DIR: the host of each rank of a directory of torch.profiler traces
# comes from the file's name when tensorboard_trace_handler named it by default
# (HOST_PID.TIMESTAMP.pt.trace.json[.gz]), and is "?" otherwise. The two ranks of
# DATA_DIR/ranks-sampled are copied under such names (one host with dots, one plain), then
# one of them under a worker_name of the user's.
set -u
bin=$1
data=$2
work=$(mktemp -d /tmp/profopt-kineto-hosts.XXXXXX)
trap 'rm -rf "$work"' EXIT
failed=0

check() { # check NAME PATTERN: the summary of $work/NAME says PATTERN
	if ! grep -Eq -- "$2" "$work/$1.out"; then
		echo "FAIL $1: the summary does not say /$2/"
		sed 's/^/    /' "$work/$1.out"
		failed=1
	fi
}

mkdir "$work/named" "$work/mixed"
cp "$data/ranks-sampled/sampled_rank-0.json.gz" \
	"$work/named/node7.cluster.example.org_31337.1733580000123.pt.trace.json.gz"
cp "$data/ranks-sampled/sampled_rank-1.json.gz" "$work/named/gpu-b_4242.1733580000456.pt.trace.json.gz"
cp "$data/ranks-sampled/sampled_rank-0.json.gz" "$work/mixed/trainer_4242.1733580000123.pt.trace.json.gz"
cp "$data/ranks-sampled/sampled_rank-1.json.gz" "$work/mixed/rank1.1733580000456.pt.trace.json.gz"
for name in named mixed; do
	if ! "$bin/profopt-analyze" --json-only -o "$work/$name.report" "$work/$name" >"$work/$name.out" 2>&1; then
		echo "FAIL $name: profopt-analyze failed: $(tail -n 1 "$work/$name.out")"
		failed=1
	fi
done
check named '^ +0 node7\.cluster\.ex +1 ' # the table's column holds 16 characters
check named "Clock of gpu-b: .* from node7\.cluster\.example\.org's"
check named '^ +1 gpu-b +1 '
check mixed '^ +0 trainer +1 '
check mixed '^ +1 \? +1 '
for host in gpu-b node7.cluster.example.org; do
	grep -q "\"host\": \"$host\"" "$work/named.report/summary.json" ||
		{ echo "FAIL named: summary.json names no host $host"; failed=1; }
done
[ $failed = 0 ] && echo "ok: hosts from the file names, ? for a name of the user's"
exit $failed
