/* test_isolate.c: po_isolate_run() turns crashes, limits and hangs of the child into errors. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "common/isolate.h"

static volatile unsigned sink_value;

/* Under AddressSanitizer, let the crashes below kill the child as they would without it. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "handle_segv=0:handle_sigfpe=0:handle_sigbus=0:handle_abort=0";
}

static enum po_status child_ok(void *ctx, FILE *output, struct po_error *err)
{
	po_isolate_progress("decoding", "/traces/ok/channel0_0");
	fprintf(output, "hello from the child: %s\n", (const char *)ctx);
	return PO_STATUS_OK;
}

static enum po_status child_fails(void *ctx, FILE *output, struct po_error *err)
{
	fprintf(output, "partial output that must not reach the parent\n");
	po_error_set(err, "Failed to decode trace: path=/x: bad packet");
	return PO_STATUS_DECODE;
}

__attribute__((no_sanitize("undefined"))) static enum po_status
child_segfault(void *ctx, FILE *output, struct po_error *err)
{
	volatile int *null_pointer = NULL;

	po_isolate_progress("decoding", "/traces/bad/channel0_1");
	sink_value = *null_pointer;
	return PO_STATUS_OK;
}

/* A crash after the trace was read: while writing the report. */
__attribute__((no_sanitize("undefined"))) static enum po_status
child_render_segfault(void *ctx, FILE *output, struct po_error *err)
{
	volatile int *null_pointer = NULL;

	po_isolate_progress("writing the report", "/reports/.staging");
	sink_value = *null_pointer;
	return PO_STATUS_OK;
}

/* What libbabeltrace2 prints before it aborts on a precondition a damaged trace broke. */
static enum po_status child_library_abort(void *ctx, FILE *output, struct po_error *err)
{
	po_isolate_progress("decoding", "/traces/bad/channel0_3");
	fputs("11-26 23:30:39.090   299   300 F LIB/PACKET bt_packet_create@packet.c:221 "
	      "Babeltrace 2 library precondition not satisfied; error is:\n"
	      "11-26 23:30:39.090   299   300 F LIB/PACKET bt_packet_create@packet.c:221 "
	      "API function called while current thread has an error: "
	      "function=bt_packet_create\n"
	      "a line of the program's own\n",
	      stderr);
	fflush(stderr);
	abort();
}

/* A child that writes on stderr and ends with a result: its lines are passed on. */
static enum po_status child_warns(void *ctx, FILE *output, struct po_error *err)
{
	fputs("11-26 23:30:39.090   299   300 W PLUGIN/SRC a warning of the library\n", stderr);
	fprintf(output, "done\n");
	return PO_STATUS_OK;
}

/* A real division by zero, not UndefinedBehaviorSanitizer's report of it. */
__attribute__((no_sanitize("undefined"))) static enum po_status
child_divide(void *ctx, FILE *output, struct po_error *err)
{
	volatile int numerator = 7, zero = 0;

	po_isolate_progress("decoding", "/traces/bad/channel0_2");
	sink_value = numerator / zero;
	return PO_STATUS_OK;
}

static enum po_status child_abort(void *ctx, FILE *output, struct po_error *err)
{
	po_isolate_progress("decoding", "/traces/bad/metadata");
	abort();
}

static enum po_status child_spin(void *ctx, FILE *output, struct po_error *err)
{
	po_isolate_progress("decoding", "/traces/slow/channel0_3");
	for (;;)
		sink_value++;
	return PO_STATUS_OK;
}

static enum po_status child_sleep(void *ctx, FILE *output, struct po_error *err)
{
	po_isolate_progress("decoding", "/traces/stuck/channel0_4");
	for (;;)
		pause();
	return PO_STATUS_OK;
}

#if !defined(__SANITIZE_ADDRESS__) /* isolate.c sets no RLIMIT_AS under AddressSanitizer */
/* Touches every page it gets, as a decoder filling buffers; aborts when malloc fails. */
static enum po_status child_allocate(void *ctx, FILE *output, struct po_error *err)
{
	po_isolate_progress("decoding", "/traces/huge/channel0_5");
	for (;;) {
		char *block = malloc(16 << 20);

		if (!block)
			abort();
		memset(block, 1, 16 << 20);
	}
	return PO_STATUS_OK;
}
#endif

/* What GLib prints when libbabeltrace2's allocation fails at the memory limit, then aborts. */
static enum po_status child_glib_out_of_memory(void *ctx, FILE *output, struct po_error *err)
{
	po_isolate_progress("decoding", "/traces/huge/channel0_6");
	fputs("a line of the program's own\n", stderr);
	fputs("\n***MEMORY-ERROR***: [13111]: GSlice: failed to allocate 240 bytes (alignment: "
	      "256): Cannot allocate memory\n",
	      stderr);
	fflush(stderr);
	abort();
}

static enum po_status child_big_output(void *ctx, FILE *output, struct po_error *err)
{
	for (int i = 0; i < 200000; i++)
		fprintf(output, "line %d\n", i);
	return PO_STATUS_OK;
}

static struct po_isolate_limits test_limits(void)
{
	struct po_isolate_limits limits = {
	    .cpu_seconds = 20, .memory_bytes = (size_t)512 << 20, .wall_seconds = 60};
	return limits;
}

static enum po_status run(po_isolated_fn fn, const struct po_isolate_limits *limits, char **output,
			  struct po_error *err)
{
	memset(err, 0, sizeof(*err));
	return po_isolate_run(fn, "ctx", limits, output, err);
}

static void test_success_with_output(void)
{
	struct po_isolate_limits limits = test_limits();
	struct po_error err;
	char *output = NULL;

	CHECK_INT_EQ(run(child_ok, &limits, &output, &err), PO_STATUS_OK);
	CHECK_STR_EQ(output, "hello from the child: ctx\n");
	free(output);
	CHECK_INT_EQ(run(child_big_output, &limits, &output, &err), PO_STATUS_OK);
	CHECK(output && strstr(output, "line 0\n") == output);
	CHECK(output && strstr(output, "line 199999\n"));
	free(output);
}

static void test_failure_keeps_error_drops_output(void)
{
	struct po_isolate_limits limits = test_limits();
	struct po_error err;
	char *output = NULL;

	CHECK_INT_EQ(run(child_fails, &limits, &output, &err), PO_STATUS_DECODE);
	CHECK_STR_EQ(err.message, "Failed to decode trace: path=/x: bad packet");
	CHECK(output == NULL);
}

static void check_crash(po_isolated_fn fn, const char *signal_text, const char *file)
{
	struct po_isolate_limits limits = test_limits();
	struct po_error err;
	char *output = NULL;

	CHECK_INT_EQ(run(fn, &limits, &output, &err), PO_STATUS_DECODE);
	CHECK(strstr(err.message, "crashed") != NULL);
	CHECK(strstr(err.message, signal_text) != NULL);
	CHECK(strstr(err.message, file) != NULL);
	CHECK(strchr(err.message, '\n') == NULL);
	CHECK(output == NULL);
	fprintf(stderr, "  %s\n", err.message);
}

static void test_segfault(void)
{
	check_crash(child_segfault, "(SIGSEGV)", "while reading /traces/bad/channel0_1");
}

/* Not the trace's fault: an internal error (exit 1), never "the trace is malformed". */
static void test_render_crash(void)
{
	struct po_isolate_limits limits = test_limits();
	struct po_error err;
	char *output = NULL;

	CHECK_INT_EQ(run(child_render_segfault, &limits, &output, &err), PO_STATUS_INTERNAL);
	CHECK(strstr(err.message, "profopt-analyze crashed (SIGSEGV) while writing the report "
				  "/reports/.staging") != NULL);
	CHECK(strstr(err.message, "not damage in the trace") != NULL);
	CHECK(strstr(err.message, "malformed") == NULL);
	CHECK(output == NULL);
	fprintf(stderr, "  %s\n", err.message);
}

static void test_divide_by_zero(void)
{
	check_crash(child_divide, "(SIGFPE)", "/traces/bad/channel0_2");
}

static void test_abort(void)
{
	check_crash(child_abort, "(SIGABRT)", "/traces/bad/metadata");
}

/* Runs fn with this process's stderr in a file; returns what reached it (owned). */
static char *run_capturing_stderr(po_isolated_fn fn, enum po_status *status, struct po_error *err)
{
	struct po_isolate_limits limits = test_limits();
	char path[] = "/tmp/profopt-test-isolate-XXXXXX", *text = calloc(1, 4096), *output = NULL;
	int saved = dup(STDERR_FILENO), fd = mkstemp(path);

	CHECK(fd >= 0 && saved >= 0 && text);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	*status = run(fn, &limits, &output, err);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	CHECK(pread(fd, text, 4095, 0) >= 0);
	close(fd);
	unlink(path);
	free(output);
	return text;
}

/* The library's log lines become the reason in the one-line error; other lines pass. */
static void test_library_abort_is_one_line(void)
{
	struct po_error err;
	enum po_status status;
	char *printed = run_capturing_stderr(child_library_abort, &status, &err);

	CHECK_INT_EQ(status, PO_STATUS_DECODE);
	CHECK(strstr(err.message,
		     "crashed (SIGABRT: a libbabeltrace2 precondition failed, in "
		     "bt_packet_create) while reading /traces/bad/channel0_3") != NULL);
	CHECK(strstr(printed, "LIB/PACKET") == NULL);
	CHECK_STR_EQ(printed, "a line of the program's own\n");
	fprintf(stderr, "  %s\n", err.message);
	free(printed);
}

/*
 * GLib's allocation failure is a memory limit met, said in the one-line error with its cause;
 * its lines are not printed (they came raw before the error, 8 GiB into a damaged trace).
 */
static void test_glib_out_of_memory_is_one_line(void)
{
	struct po_error err;
	enum po_status status;
	char *printed = run_capturing_stderr(child_glib_out_of_memory, &status, &err);

	CHECK_INT_EQ(status, PO_STATUS_DECODE);
	CHECK(strstr(err.message,
		     "exceeded its memory limit (512 MiB) while reading "
		     "/traces/huge/channel0_6 (GLib failed to allocate 240 bytes)") != NULL);
	CHECK(strstr(err.message, "PROFOPT_DECODE_LIMITS=mem=MiB") != NULL);
	CHECK_STR_EQ(printed, "a line of the program's own\n");
	fprintf(stderr, "  %s\n", err.message);
	free(printed);
}

static void test_warnings_pass_on_success(void)
{
	struct po_error err;
	enum po_status status;
	char *printed = run_capturing_stderr(child_warns, &status, &err);

	CHECK_INT_EQ(status, PO_STATUS_OK);
	CHECK_STR_EQ(printed, "11-26 23:30:39.090   299   300 W PLUGIN/SRC a warning of the "
			      "library\n");
	free(printed);
}

static void test_cpu_limit(void)
{
	struct po_isolate_limits limits = {.cpu_seconds = 1, .wall_seconds = 120};
	struct po_error err;

	CHECK_INT_EQ(run(child_spin, &limits, NULL, &err), PO_STATUS_DECODE);
	CHECK(strstr(err.message, "more than 1 s of CPU time") != NULL);
	CHECK(strstr(err.message, "/traces/slow/channel0_3") != NULL);
	fprintf(stderr, "  %s\n", err.message);
}

static void test_wall_limit(void)
{
	struct po_isolate_limits limits = {.cpu_seconds = 10, .wall_seconds = 1};
	struct po_error err;

	CHECK_INT_EQ(run(child_sleep, &limits, NULL, &err), PO_STATUS_DECODE);
	CHECK(strstr(err.message, "ran for more than 1 s") != NULL);
	CHECK(strstr(err.message, "/traces/stuck/channel0_4") != NULL);
	fprintf(stderr, "  %s\n", err.message);
}

#if !defined(__SANITIZE_ADDRESS__)
static void test_memory_limit(void)
{
	struct po_isolate_limits limits = test_limits();
	struct po_error err;

	limits.memory_bytes = (size_t)256 << 20;
	CHECK_INT_EQ(run(child_allocate, &limits, NULL, &err), PO_STATUS_DECODE);
	CHECK(strstr(err.message, "exceeded its memory limit (256 MiB)") != NULL);
	CHECK(strstr(err.message, "/traces/huge/channel0_5") != NULL);
	fprintf(stderr, "  %s\n", err.message);
}
#endif

static void send_sigint(int signo)
{
	(void)signo;
	kill(getpid(), SIGINT);
}

static void test_interrupted(void)
{
	struct po_isolate_limits limits = {.wall_seconds = 60};
	struct po_error err;

	/* SIGINT reaches the parent one second after the start, while the child sleeps. */
	signal(SIGALRM, send_sigint);
	alarm(1);
	CHECK_INT_EQ(run(child_sleep, &limits, NULL, &err), PO_STATUS_INTERRUPTED);
	signal(SIGALRM, SIG_DFL);
}

static void test_limits_from_environment(void)
{
	struct po_isolate_limits limits;
	struct po_error err = {{0}};
	/* each refused, naming itself: a limit meant to be raised is never silently ignored */
	const char *bad[] = {"mem=abc",	      "mem=",	      "mem",
			     "memory=100",    "cpu=0",	      "cpu=-5",
			     "wall=1.5",      "cpu=5,,mem=1", "mem=99999999999999999999",
			     "cpu=5,mem=abc", "wall=3 ",      "mem=16777217"};

	unsetenv("PROFOPT_DECODE_LIMITS");
	CHECK(po_isolate_limits_init(&limits, &err) == PO_STATUS_OK);
	CHECK_INT_EQ(limits.cpu_seconds, 3600);
	CHECK_INT_EQ(limits.wall_seconds, 7200);
	CHECK_INT_EQ(limits.memory_bytes, (size_t)8 << 30);
	setenv("PROFOPT_DECODE_LIMITS", "cpu=5,mem=100,wall=9", 1);
	CHECK(po_isolate_limits_init(&limits, &err) == PO_STATUS_OK);
	CHECK_INT_EQ(limits.cpu_seconds, 5);
	CHECK_INT_EQ(limits.wall_seconds, 9);
	CHECK_INT_EQ(limits.memory_bytes, (size_t)100 << 20);
	setenv("PROFOPT_DECODE_LIMITS", "wall=3", 1);
	CHECK(po_isolate_limits_init(&limits, &err) == PO_STATUS_OK);
	CHECK_INT_EQ(limits.cpu_seconds, 3600);
	CHECK_INT_EQ(limits.wall_seconds, 3);
	setenv("PROFOPT_DECODE_LIMITS", "", 1);
	CHECK(po_isolate_limits_init(&limits, &err) == PO_STATUS_OK);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		po_error_clear(&err);
		setenv("PROFOPT_DECODE_LIMITS", bad[i], 1);
		CHECK(po_isolate_limits_init(&limits, &err) == PO_STATUS_USAGE);
		CHECK(strstr(err.message, "PROFOPT_DECODE_LIMITS=") != NULL);
		CHECK_INT_EQ(limits.cpu_seconds, 3600); /* the defaults, not a part of it */
		CHECK_INT_EQ(limits.memory_bytes, (size_t)8 << 30);
	}
	unsetenv("PROFOPT_DECODE_LIMITS");
}

/*
 * --salvage's shadow copy: a scratch directory the child makes in the directory ctx names
 * (ctx's last character '!': its mark then removed), with a copy below it and a link out of
 * it, that the child dies in while reading a file of the copy.
 */
static enum po_status child_dies_in_scratch(void *ctx, FILE *output, struct po_error *err)
{
	const char *base = ctx;
	size_t base_len = strlen(base);
	bool marked = base[base_len - 1] != '!';
	char dir[256], path[320];

	if (base_len > 128)
		_exit(9);
	snprintf(dir, sizeof(dir), "%.*s/profopt-salvage-XXXXXX", (int)(base_len - !marked), base);
	if (po_isolate_scratch_make(dir, "trace", "traces/mine") != 0)
		_exit(9);
	snprintf(path, sizeof(path), "%s/.profopt-scratch", dir);
	if (!marked && unlink(path) != 0)
		_exit(9);
	snprintf(path, sizeof(path), "%s/trace", dir);
	if (mkdir(path, 0700) != 0)
		_exit(9);
	snprintf(path, sizeof(path), "%s/trace/ust", dir);
	if (mkdir(path, 0700) != 0)
		_exit(9);
	snprintf(path, sizeof(path), "%s/trace/ust/metadata", dir);
	if (symlink("/etc/hostname", path) != 0)
		_exit(9);
	snprintf(path, sizeof(path), "%s/trace/ust/profopt_0", dir);
	fclose(fopen(path, "w"));
	po_isolate_progress("decoding", path);
	abort();
}

/* The entries of dir, not counting "." and "..". */
static int entry_count(const char *dir)
{
	DIR *stream = opendir(dir);
	struct dirent *entry;
	int count = 0;

	while (stream && (entry = readdir(stream)))
		count += strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0;
	if (stream)
		closedir(stream);
	return count;
}

/*
 * The child's scratch directory goes when the child dies in it (it used to stay in TMPDIR
 * whenever the decoder crashed on the repaired copy), without following the link in it,
 * and the error names the user's file, not the copy's.
 */
static void test_scratch_removed_after_crash(void)
{
	struct po_isolate_limits limits = test_limits();
	char base[] = "/tmp/profopt-test-scratch-XXXXXX";
	struct po_error err = {{0}};
	struct stat st;

	CHECK(mkdtemp(base) != NULL);
	CHECK_INT_EQ(po_isolate_run(child_dies_in_scratch, base, &limits, NULL, &err),
		     PO_STATUS_DECODE);
	CHECK(strstr(err.message, "while reading traces/mine/ust/profopt_0;") != NULL);
	CHECK(strstr(err.message, "profopt-salvage") == NULL);
	CHECK_INT_EQ(entry_count(base), 0);
	CHECK(stat("/etc/hostname", &st) == 0);
	fprintf(stderr, "  %s\n", err.message);
	rmdir(base);
}

/* A directory without the mark is not provably profopt's: it is left alone. */
static void test_unmarked_scratch_left_alone(void)
{
	struct po_isolate_limits limits = test_limits();
	char base[] = "/tmp/profopt-test-scratch-XXXXXX!";
	char command[PATH_MAX];
	struct po_error err = {{0}};

	base[strlen(base) - 1] = '\0';
	CHECK(mkdtemp(base) != NULL);
	base[strlen(base)] = '!';
	CHECK_INT_EQ(po_isolate_run(child_dies_in_scratch, base, &limits, NULL, &err),
		     PO_STATUS_DECODE);
	base[strlen(base) - 1] = '\0';
	CHECK_INT_EQ(entry_count(base), 1);
	snprintf(command, sizeof(command), "rm -r '%s'", base);
	CHECK(system(command) == 0);
}

int main(void)
{
	RUN(test_success_with_output);
	RUN(test_failure_keeps_error_drops_output);
	RUN(test_segfault);
	RUN(test_render_crash);
	RUN(test_divide_by_zero);
	RUN(test_abort);
	RUN(test_library_abort_is_one_line);
	RUN(test_glib_out_of_memory_is_one_line);
	RUN(test_warnings_pass_on_success);
	RUN(test_cpu_limit);
	RUN(test_wall_limit);
#if !defined(__SANITIZE_ADDRESS__)
	RUN(test_memory_limit);
#endif
	RUN(test_interrupted);
	RUN(test_limits_from_environment);
	RUN(test_scratch_removed_after_crash);
	RUN(test_unmarked_scratch_left_alone);
	return CHECK_SUMMARY();
}
