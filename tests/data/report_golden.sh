#!/usr/bin/env bash
# report_golden.sh BIN_DIR CHECK_REPORT NAME...: the HTML and PDF text of profopt-analyze's
# report of each named golden trace (tests/data/traces/NAME), compared with
# tests/data/expected-report/NAME-index.html.txt and NAME-report.pdf.txt (check_report.py's
# golden mode; UPDATE_GOLDEN=1 rewrites them and fails).
set -u
bin=$1 check=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/profopt-report-golden.XXXXXX)
trap 'rm -rf "$work"' EXIT
failed=0
for name in "$@"; do
	if ! "$bin/profopt-analyze" -q -o "$work/$name" "$here/traces/$name" 2>"$work/$name.err"; then
		echo "FAIL $name: profopt-analyze failed: $(tail -n 1 "$work/$name.err")"
		failed=$((failed + 1))
		continue
	fi
	/usr/bin/python3 "$check" --output-dir "$work/$name" golden recorded \
		--golden-dir "$here/expected-report" --golden-name "$name" || failed=$((failed + 1))
done
exit $((failed > 0))
