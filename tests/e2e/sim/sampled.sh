#!/usr/bin/env bash
# sampled.sh BIN: records profopt-sim with libprofopt's RSS/CPU sampler on
# (PROFOPT_SAMPLE_MS, as profopt-record sets it) and a host leak of 2 MiB per step in the
# main process. Checks that forking workers while the sampler runs works (the simulator
# finishes), that every process is sampled, and that the main process's RSS grows by
# about the leaked bytes, which are also reported as profopt mem_alloc events. Every
# process records its proportional and unique sets (smaps_rollup), a forked worker's first
# at its start, below its resident set; only the main process records the machine's memory.
set -eu
bin=$1
work=$(mktemp -d /tmp/profopt-sim-sampled.XXXXXX)
trap 'lttng destroy profopt-sim-sampled >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

lttng create profopt-sim-sampled --output="$work/trace" >/dev/null
lttng enable-channel -u --buffers-pid --subbuf-size 4M --num-subbuf 8 chan >/dev/null
lttng enable-event -u 'profopt:*' -c chan >/dev/null
lttng add-context -u -t vpid -t vtid -t procname -c chan >/dev/null
lttng start >/dev/null
# The simulator runs in a process group of its own, so that a hung run (workers included)
# can be stopped by its id after 60 s.
PROFOPT_SAMPLE_MS=10 LD_PRELOAD=liblttng-ust-fork.so setsid \
	"$bin/profopt-sim" --workers 2 --steps 40 --load-ms 1 --preprocess-ms 1 --collate-ms 1 \
	--h2d-ms 1 --forward-ms 2 --backward-ms 2 --optimizer-ms 1 --kernels 2 --gpu-ms 2 \
	--leak-bytes 2097152 --leak-in main &
sim=$!
for _ in $(seq 600); do
	kill -0 "$sim" 2>/dev/null || break
	sleep 0.1
done
hung=0
if kill -0 "$sim" 2>/dev/null; then
	hung=1
	kill -KILL -- "-$sim" 2>/dev/null || true
fi
status=0
wait "$sim" || status=$?
lttng stop >/dev/null
lttng destroy >/dev/null
if [ "$hung" -eq 1 ]; then
	echo "FAIL profopt-sim still running after 60 s (forking workers with the sampler on hangs)"
	exit 1
fi
if [ "$status" -ne 0 ]; then
	echo "FAIL profopt-sim exited with status $status"
	exit 1
fi

/usr/bin/python3 - "$work/trace" <<'PY'
import collections, sys
import bt2

rss = collections.defaultdict(list)  # vpid -> [(time, bytes)]
runq = collections.defaultdict(list)  # vpid -> run-queue wait samples (ns, cumulative)
leaks = collections.Counter()
sets = collections.defaultdict(list)  # (vpid, kind) -> values: 10 host_pss, 11 host_uss
machine_memory = collections.defaultdict(list)  # vpid -> machine_memory samples
main_pid = None
for msg in bt2.TraceCollectionMessageIterator(sys.argv[1]):
    if type(msg) is not bt2._EventMessageConst:
        continue
    ev = msg.event
    pid = int(ev.common_context_field["vpid"])
    if ev.name == "profopt:run_begin":
        main_pid = pid
    elif ev.name == "profopt:counter" and int(ev.payload_field["kind"]) == 1:
        rss[pid].append((msg.default_clock_snapshot.ns_from_origin, int(ev.payload_field["value"])))
    elif ev.name == "profopt:counter" and int(ev.payload_field["kind"]) == 5:
        runq[pid].append(int(ev.payload_field["value"]))
    elif ev.name == "profopt:counter" and int(ev.payload_field["kind"]) in (10, 11):
        sets[pid, int(ev.payload_field["kind"])].append(int(ev.payload_field["value"]))
    elif ev.name == "profopt:counter" and int(ev.payload_field["kind"]) == 12:
        machine_memory[pid].append(int(ev.payload_field["value"]))
    elif ev.name == "profopt:mem_alloc" and str(ev.payload_field["label"]) == "leak":
        leaks[pid] += int(ev.payload_field["bytes"])
failures = 0
def check(cond, text):
    global failures
    print(("ok   " if cond else "FAIL ") + text)
    failures += not cond

check(len(rss) == 3, f"host_rss sampled in {len(rss)} processes, expected 3")
check(leaks.get(main_pid) == 40 * 2097152, f"leak allocations in the main process: {leaks.get(main_pid)} bytes")
samples = sorted(rss.get(main_pid, []))
growth = samples[-1][1] - samples[0][1] if len(samples) >= 2 else 0
check(growth >= 0.6 * 40 * 2097152, f"main RSS grew by {growth} bytes for {40 * 2097152} leaked")
check(len(runq) == 3, f"process_runq_wait sampled in {len(runq)} processes, expected 3")
check(all(v == sorted(v) and v[0] >= 0 for v in runq.values()),
      "the run-queue wait only grows, from zero or more")
for kind, name in ((10, "host_pss"), (11, "host_uss")):
    sampled = [pid for pid in rss if sets.get((pid, kind))]
    check(len(sampled) == 3, f"{name} sampled in {len(sampled)} processes, expected 3")
    check(all(0 < v <= max(b for _, b in rss[pid]) for pid in sampled for v in sets[pid, kind]),
          f"{name} is positive and within the process's largest resident set")
check(list(machine_memory) == [main_pid] and min(machine_memory[main_pid]) > 0,
      f"machine_memory recorded by {sorted(machine_memory)}, expected the main process only")
sys.exit(1 if failures else 0)
PY
