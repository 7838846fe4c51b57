#!/usr/bin/env bash
# ending.sh BIN_DIR TRACE: a run that ended its run (run_end) but whose recorded command then
# exited with a failure status (a DataLoader worker killed, an error after the loop) did not
# end cleanly: summary.json says "failed-exit" with the status, the text summary says so,
# and no unfreed-allocations blames the memory of the step it was in. The same trace with
# exit status 0 ends clean.
set -u
bin=$1
trace=$2
work=$(mktemp -d /tmp/profopt-ending.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
check() { # check CONDITION-STATUS TEXT
	if [ "$1" -eq 0 ]; then echo "ok   $2"; else echo "FAIL $2"; failures=$((failures + 1)); fi
}
for exit_status in 0 1 137; do
	copy=$work/trace-$exit_status
	cp -r "$trace" "$copy"
	sed -i "s/^command_exit .*/command_exit $exit_status/" "$copy/profopt-recording.txt"
	"$bin/profopt-analyze" --json-only -o "$work/report-$exit_status" "$copy" \
		>"$work/out-$exit_status" 2>&1
	check $? "exit $exit_status: analysed"
done
ending() { /usr/bin/python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s['run']['ending'], s['run'].get('ending_detail'))" "$1"; }
check "$([ "$(ending "$work/report-0/summary.json")" = "clean None" ]; echo $?)" \
	"exit 0: ending clean ($(ending "$work/report-0/summary.json"))"
check "$([ "$(ending "$work/report-1/summary.json")" = "failed-exit the command exited with status 1" ]; echo $?)" \
	"exit 1: ending failed-exit ($(ending "$work/report-1/summary.json"))"
check "$([ "$(ending "$work/report-137/summary.json")" = "failed-exit the command was killed by signal 9" ]; echo $?)" \
	"exit 137: ending failed-exit by signal 9 ($(ending "$work/report-137/summary.json"))"
grep -q "Run ended: failed-exit (the command exited with status 1)" "$work/out-1"
check $? "the text summary says how the run ended"
[ "$failures" -eq 0 ]
