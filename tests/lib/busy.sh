# busy.sh: for shell tests that time a program (sourced; tests/lib/machine.py does the
# measuring). A check that needs the CPUs the test was designed for, and failed while
# other programs used a quarter of them or more, makes the test skip (exit 77, ctest's
# SKIP_RETURN_CODE) with one line saying how busy the machine was; a check of the product
# itself never does.

busy_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# measured FILE CMD...: runs CMD; FILE gets what other programs used meanwhile. CMD's status.
measured() {
	local file=$1
	shift
	/usr/bin/python3 "$busy_lib/machine.py" run "$file" -- "$@"
}

# skip_if_busy WHAT WHY FILE...: when any FILE (of measured) shows a busy machine, prints
# the skip line (WHAT ran; WHY the test cannot judge) and exits 77; otherwise says what it
# measured and returns 1.
skip_if_busy() {
	local what=$1 why=$2
	shift 2
	/usr/bin/python3 "$busy_lib/machine.py" busy "$@" --what "$what" --why "$why" && exit 77
	return 1
}
