/* isolate.c: runs a function in a forked child under CPU, memory and wall-clock limits. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "isolate.h"
#include "outdir.h"

#define PO_MIB (1024ull * 1024ull)
/* The most of what the child wrote on stderr that is kept: its start and its end. */
#define PO_STDERR_KEPT (64u * 1024u)

/* What the child is doing, written by the child and read by the parent after it died. */
struct po_isolate_shared {
	char phase[64];
	char file[1024];
	/* po_isolate_scratch_make(): the child's scratch directory, the copy in it, of what */
	char scratch[1024];
	char copy_root[1024];
	char shown_root[1024];
	/* the progress line's numbers; written by the child, read by the parent (atomics) */
	int64_t events;
	int64_t time_ns;
	int64_t begin_ns;
	int64_t end_ns;
};

/* weak: the mapping of the current po_isolate_run(), NULL outside of one */
static struct po_isolate_shared *isolate_shared;

/* How many PO_TERMINATING_SIGNALS there are. */
enum {
#define PO_X(name) +1
	PO_TERMINATING_SIGNAL_COUNT = 0 PO_TERMINATING_SIGNALS(PO_X)
#undef PO_X
};

/* The terminating signals recorded by on_terminating_signal(). */
static volatile sig_atomic_t signal_last;
static volatile sig_atomic_t signal_count;
/* po_signals_catch() nesting, and the dispositions and mask that the outermost replaced. */
static int signals_depth;
static struct sigaction signals_previous[PO_TERMINATING_SIGNAL_COUNT];
static sigset_t signals_blocked_previous;

/* What the child sends through the pipe before the error text and the output text. */
struct po_isolate_header {
	int32_t status;
	uint32_t message_len;
	uint64_t output_len;
};

/* The signals a decoder may die of, for the messages, besides the terminating ones. X(name) */
#define PO_ISOLATE_SIGNALS(X)                                                                      \
	X(SIGSEGV)                                                                                 \
	X(SIGFPE)                                                                                  \
	X(SIGABRT) X(SIGBUS) X(SIGILL) X(SIGKILL) X(SIGXCPU) X(SIGTRAP) X(SIGSYS) X(SIGXFSZ)

const char *po_signal_name(int signo)
{
	switch (signo) {
#define PO_X(name)                                                                                 \
	case name:                                                                                 \
		return #name;
		PO_ISOLATE_SIGNALS(PO_X)
		PO_TERMINATING_SIGNALS(PO_X)
#undef PO_X
	default:
		return "an unexpected signal";
	}
}

static const int terminating_signals[PO_TERMINATING_SIGNAL_COUNT] = {
#define PO_X(name) name,
    PO_TERMINATING_SIGNALS(PO_X)
#undef PO_X
};

static bool is_terminating(int signo)
{
	for (int i = 0; i < PO_TERMINATING_SIGNAL_COUNT; i++) {
		if (terminating_signals[i] == signo)
			return true;
	}
	return false;
}

static void on_terminating_signal(int signo)
{
	signal_last = signo;
	signal_count++; /* the handler blocks the others: no lost update */
}

static void terminating_set(sigset_t *set)
{
	sigemptyset(set);
	for (int i = 0; i < PO_TERMINATING_SIGNAL_COUNT; i++)
		sigaddset(set, terminating_signals[i]);
}

void po_signals_catch(void)
{
	struct sigaction action;

	if (signals_depth++ > 0)
		return;
	memset(&action, 0, sizeof(action));
	action.sa_handler = on_terminating_signal;
	terminating_set(&action.sa_mask);
	for (int i = 0; i < PO_TERMINATING_SIGNAL_COUNT; i++) {
		sigaction(terminating_signals[i], NULL, &signals_previous[i]);
		/* An ignored signal stays ignored (nohup, a background job's SIGINT). */
		if (signals_previous[i].sa_handler != SIG_IGN)
			sigaction(terminating_signals[i], &action, NULL);
	}
}

void po_signals_release(void)
{
	if (signals_depth == 0 || --signals_depth > 0)
		return;
	for (int i = 0; i < PO_TERMINATING_SIGNAL_COUNT; i++)
		sigaction(terminating_signals[i], &signals_previous[i], NULL);
}

int po_signals_caught(void)
{
	return signal_last;
}

unsigned po_signals_count(void)
{
	return (unsigned)signal_count;
}

void po_signals_block(void)
{
	sigset_t set;

	terminating_set(&set);
	sigprocmask(SIG_BLOCK, &set, &signals_blocked_previous);
}

void po_signals_unblock(void)
{
	sigprocmask(SIG_SETMASK, &signals_blocked_previous, NULL);
}

/* The largest value each key of PROFOPT_DECODE_LIMITS takes: 30 days, 16 TiB. */
#define LIMIT_MAX_SECONDS (30ULL * 24 * 3600)
#define LIMIT_MAX_MIB (16ULL * 1024 * 1024)

/*
 * Parses "cpu=S,mem=MiB,wall=S" (any subset, any order, each a whole number from 1 to its
 * maximum). Anything else is refused, naming the part: a limit the user meant to raise and
 * that was silently ignored would end an analysis with a misleading error hours later.
 */
static enum po_status limits_parse(struct po_isolate_limits *limits, const char *spec,
				   struct po_error *err)
{
	const char *part = spec;

	while (*part) {
		size_t len = strcspn(part, ",");
		const char *equals = memchr(part, '=', len);
		size_t key_len = equals ? (size_t)(equals - part) : 0;
		bool is_cpu = key_len == 3 && strncmp(part, "cpu", 3) == 0;
		bool is_mem = key_len == 3 && strncmp(part, "mem", 3) == 0;
		bool is_wall = key_len == 4 && strncmp(part, "wall", 4) == 0;
		unsigned long long max = is_mem ? LIMIT_MAX_MIB : LIMIT_MAX_SECONDS;
		unsigned long long value = 0;
		const char *digit = equals ? equals + 1 : part;
		const char *end = part + len;

		for (; digit < end && *digit >= '0' && *digit <= '9' && value <= max; digit++)
			value = value * 10 + (unsigned long long)(*digit - '0');
		if (!(is_cpu || is_mem || is_wall) || digit != end || digit == equals + 1 ||
		    value == 0 || value > max) {
			po_error_set(err,
				     "PROFOPT_DECODE_LIMITS=%s: \"%.*s\" is not KEY=N with KEY cpu "
				     "(seconds, 1 to %llu), mem (MiB, 1 to %llu) or wall (seconds, "
				     "1 to %llu), parts separated by commas",
				     spec, (int)len, part, LIMIT_MAX_SECONDS, LIMIT_MAX_MIB,
				     LIMIT_MAX_SECONDS);
			return PO_STATUS_USAGE;
		}
		if (is_cpu)
			limits->cpu_seconds = (unsigned)value;
		else if (is_mem)
			limits->memory_bytes = (size_t)(value * PO_MIB);
		else
			limits->wall_seconds = (unsigned)value;
		part += len;
		if (*part == ',')
			part++;
	}
	return PO_STATUS_OK;
}

enum po_status po_isolate_limits_init(struct po_isolate_limits *limits, struct po_error *err)
{
	const char *spec = getenv("PROFOPT_DECODE_LIMITS");
	struct po_isolate_limits parsed;
	enum po_status status;

	limits->cpu_seconds = 3600;
	limits->memory_bytes = (size_t)8 * 1024 * PO_MIB;
	limits->wall_seconds = 7200;
	limits->progress = false;
	limits->progress_after_ms = 1000;
	if (!spec)
		return PO_STATUS_OK;
	parsed = *limits;
	status = limits_parse(&parsed, spec, err);
	if (status == PO_STATUS_OK)
		*limits = parsed;
	return status;
}

void po_isolate_progress(const char *phase, const char *file)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* decoding lanes share it */
	size_t copy_len;

	if (!isolate_shared)
		return;
	copy_len = strnlen(isolate_shared->copy_root, sizeof(isolate_shared->copy_root));
	pthread_mutex_lock(&lock);
	snprintf(isolate_shared->phase, sizeof(isolate_shared->phase), "%s", phase ? phase : "");
	if (file && copy_len && strncmp(file, isolate_shared->copy_root, copy_len) == 0 &&
	    (file[copy_len] == '/' || file[copy_len] == '\0'))
		snprintf(isolate_shared->file, sizeof(isolate_shared->file), "%s%s",
			 isolate_shared->shown_root, file + copy_len);
	else
		snprintf(isolate_shared->file, sizeof(isolate_shared->file), "%s",
			 file ? file : "");
	pthread_mutex_unlock(&lock);
}

/* The mark of a scratch directory: only a directory holding it is removed. */
#define PO_SCRATCH_MARK ".profopt-scratch"

/* Tells the parent about dir (NULL: nothing to remove any more); strings too long: not. */
static void scratch_register(const char *dir, const char *copy_name, const char *shown_root)
{
	struct po_isolate_shared *shared = isolate_shared;

	if (!shared)
		return;
	shared->scratch[0] = shared->copy_root[0] = '\0';
	if (!dir)
		return;
	if (snprintf(shared->shown_root, sizeof(shared->shown_root), "%s", shown_root) >=
		(int)sizeof(shared->shown_root) ||
	    snprintf(shared->copy_root, sizeof(shared->copy_root), "%s/%s", dir, copy_name) >=
		(int)sizeof(shared->copy_root))
		shared->copy_root[0] = '\0'; /* named as the copy rather than cut */
	if (snprintf(shared->scratch, sizeof(shared->scratch), "%s", dir) >=
	    (int)sizeof(shared->scratch))
		shared->scratch[0] = '\0';
}

/*
 * mkdtemp(), but the parent knows the name before the directory exists: a run killed at any
 * moment leaves nothing the parent does not remove (an empty directory is removed unmarked).
 */
static int scratch_mkdir(char *dir, const char *copy_name, const char *shown_root)
{
	static const char letters[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	size_t len = strlen(dir);
	unsigned char bytes[6];

	if (len < 6 || strcmp(dir + len - 6, "XXXXXX") != 0) {
		errno = EINVAL;
		return -1;
	}
	for (int attempt = 0; attempt < 100; attempt++) {
		if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
			return -1;
		for (size_t i = 0; i < 6; i++)
			dir[len - 6 + i] = letters[bytes[i] % (sizeof(letters) - 1)];
		scratch_register(dir, copy_name, shown_root);
		if (mkdir(dir, 0700) == 0)
			return 0;
		scratch_register(NULL, NULL, NULL);
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

int po_isolate_scratch_make(char *dir, const char *copy_name, const char *shown_root)
{
	int saved;

	if (scratch_mkdir(dir, copy_name, shown_root) != 0)
		return -1;
	if (po_scratch_mark(dir, PO_SCRATCH_MARK) != 0) {
		saved = errno;
		(void)rmdir(dir);
		scratch_register(NULL, NULL, NULL);
		errno = saved;
		return -1;
	}
	return 0;
}

void po_isolate_scratch_remove(const char *dir)
{
	po_scratch_remove(dir, PO_SCRATCH_MARK);
	if (isolate_shared && strcmp(isolate_shared->scratch, dir) == 0)
		scratch_register(NULL, NULL, NULL);
}

void po_isolate_detach(void)
{
	isolate_shared = NULL;
}

/* The parent's part of po_isolate_scratch_make(): the scratch directory goes with the child. */
static void remove_scratch(void)
{
	if (!isolate_shared->scratch[0])
		return;
	po_scratch_remove(isolate_shared->scratch, PO_SCRATCH_MARK);
	(void)rmdir(isolate_shared->scratch); /* made, not yet marked: empty */
}

void po_isolate_time_range(int64_t begin_ns, int64_t end_ns)
{
	if (!isolate_shared)
		return;
	__atomic_store_n(&isolate_shared->begin_ns, begin_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&isolate_shared->end_ns, end_ns, __ATOMIC_RELAXED);
}

void po_isolate_count(int64_t events, int64_t time_ns)
{
	if (!isolate_shared)
		return;
	__atomic_store_n(&isolate_shared->events, events, __ATOMIC_RELAXED);
	__atomic_store_n(&isolate_shared->time_ns, time_ns, __ATOMIC_RELAXED);
}

/* 1234567 -> "1.23M": the progress line's counts. */
static void format_count(char *out, size_t size, double value)
{
	if (value >= 1e9)
		snprintf(out, size, "%.2fG", value / 1e9);
	else if (value >= 1e6)
		snprintf(out, size, "%.2fM", value / 1e6);
	else if (value >= 1e3)
		snprintf(out, size, "%.1fk", value / 1e3);
	else
		snprintf(out, size, "%.0f", value);
}

/*
 * One progress line on stderr, redrawn in place: phase, events, share of the trace's time,
 * rate, time left. The share is by time because events are decoded in time order.
 */
static void draw_progress(int64_t elapsed_ns)
{
	int64_t events = __atomic_load_n(&isolate_shared->events, __ATOMIC_RELAXED);
	int64_t time_ns = __atomic_load_n(&isolate_shared->time_ns, __ATOMIC_RELAXED);
	int64_t begin_ns = __atomic_load_n(&isolate_shared->begin_ns, __ATOMIC_RELAXED);
	int64_t end_ns = __atomic_load_n(&isolate_shared->end_ns, __ATOMIC_RELAXED);
	char phase[64], count[32], rate[32], line[256];
	double seconds = (double)elapsed_ns / 1e9, share = -1;
	int used;

	snprintf(phase, sizeof(phase), "%s",
		 isolate_shared->phase[0] ? isolate_shared->phase : "starting");
	format_count(count, sizeof(count), (double)events);
	format_count(rate, sizeof(rate), seconds > 0 ? (double)events / seconds : 0);
	if (end_ns > begin_ns && time_ns >= begin_ns)
		share = (double)(time_ns - begin_ns) / (double)(end_ns - begin_ns);
	used = snprintf(line, sizeof(line), "profopt-analyze: %s, %s events", phase, count);
	if (strcmp(phase, "decoding") == 0 && share > 0.001 && share <= 1) {
		char total[32];

		format_count(total, sizeof(total), (double)events / share);
		used += snprintf(line + used, sizeof(line) - (size_t)used,
				 " of about %s (%.0f%%), %s/s, %.0f s left", total, 100 * share,
				 rate, seconds * (1 - share) / share);
	}
	(void)used;
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
}

static bool write_all(int fd, const void *buf, size_t len)
{
	const char *cursor = buf;

	while (len > 0) {
		ssize_t written = write(fd, cursor, len);

		if (written < 0 && errno == EINTR)
			continue;
		if (written <= 0)
			return false;
		cursor += written;
		len -= (size_t)written;
	}
	return true;
}

static void child_set_limits(const struct po_isolate_limits *limits)
{
	struct rlimit limit;

	if (limits->cpu_seconds) {
		/* SIGXCPU at the soft limit, SIGKILL one second later if it is caught. */
		limit.rlim_cur = limits->cpu_seconds;
		limit.rlim_max = (rlim_t)limits->cpu_seconds + 1;
		setrlimit(RLIMIT_CPU, &limit);
	}
#if !defined(__SANITIZE_ADDRESS__)
	/* AddressSanitizer reserves terabytes of address space: no RLIMIT_AS under it. */
	if (limits->memory_bytes) {
		limit.rlim_cur = limits->memory_bytes;
		limit.rlim_max = limits->memory_bytes;
		setrlimit(RLIMIT_AS, &limit);
	}
#endif
}

/* A status whose analysis completed: its output text is handed to the parent. */
static bool keeps_output(enum po_status status)
{
	return po_status_completed(status);
}

/* Sends the header, the error message and (on success only) the output text. */
static bool child_send(int fd, enum po_status status, const struct po_error *err, FILE *output)
{
	struct po_isolate_header header = {.status = status};
	char chunk[65536];
	size_t got;
	long size = 0;

	header.message_len = (uint32_t)strnlen(err->message, sizeof(err->message));
	if (keeps_output(status) && output && fflush(output) == 0 &&
	    fseek(output, 0, SEEK_END) == 0)
		size = ftell(output);
	header.output_len = size > 0 ? (uint64_t)size : 0;
	if (!write_all(fd, &header, sizeof(header)) ||
	    !write_all(fd, err->message, header.message_len))
		return false;
	if (header.output_len == 0)
		return true;
	rewind(output);
	while ((got = fread(chunk, 1, sizeof(chunk), output)) > 0) {
		if (!write_all(fd, chunk, got))
			return false;
	}
	return true;
}

/*
 * The child takes the default action of every terminating signal again (an ignored one stays
 * ignored), and dies with its
 * parent: PR_SET_PDEATHSIG covers a parent that dies from now on, the getppid() check one
 * that died since fork().
 */
static void child_bind_to_parent(pid_t parent)
{
	sigset_t set;

	for (int i = 0; i < PO_TERMINATING_SIGNAL_COUNT; i++)
		signal(terminating_signals[i],
		       signals_previous[i].sa_handler == SIG_IGN ? SIG_IGN : SIG_DFL);
	terminating_set(&set);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(3);
}

static void child_main(po_isolated_fn fn, void *ctx, const struct po_isolate_limits *limits, int fd,
		       int capture, pid_t parent)
{
	struct po_error err = {{0}};
	enum po_status status;
	FILE *output; /* owned */

	child_bind_to_parent(parent);
	if (capture >= 0)
		dup2(capture, STDERR_FILENO);
	child_set_limits(limits);
	output = tmpfile();
	if (!output) {
		po_error_set(&err, "Failed to create a temporary file for the output: %s",
			     strerror(errno));
		status = PO_STATUS_INTERNAL;
	} else {
		status = fn(ctx, output, &err);
	}
	fflush(NULL);
	if (!child_send(fd, status, &err, output))
		_exit(2);
	_exit(0);
}

/* Bytes received from the child, grown as they come. */
struct po_isolate_buffer {
	char *bytes; /* owned */
	size_t len;
	size_t cap;
};

static bool buffer_read(struct po_isolate_buffer *buf, int fd, bool *eof)
{
	ssize_t got;

	if (buf->cap - buf->len < 65536) {
		size_t cap = buf->cap ? buf->cap * 2 : 131072;
		char *bytes = realloc(buf->bytes, cap);

		if (!bytes)
			return false;
		buf->bytes = bytes;
		buf->cap = cap;
	}
	got = read(fd, buf->bytes + buf->len, buf->cap - buf->len);
	if (got < 0)
		return errno == EINTR || errno == EAGAIN;
	if (got == 0)
		*eof = true;
	buf->len += (size_t)got;
	return true;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

enum po_isolate_end { PO_END_EOF, PO_END_TIMEOUT, PO_END_INTERRUPTED, PO_END_NOMEM };

/*
 * Reads the child's pipe until EOF, the wall-clock limit or a terminating signal (one that
 * came since signals_before was taken).
 */
static enum po_isolate_end collect(int fd, const struct po_isolate_limits *limits,
				   unsigned signals_before, struct po_isolate_buffer *buf,
				   bool *drawn)
{
	int64_t started = now_ns();
	int64_t deadline =
	    limits->wall_seconds ? started + (int64_t)limits->wall_seconds * 1000000000 : 0;
	bool eof = false;

	while (!eof) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int64_t now = now_ns();

		if (po_signals_count() != signals_before)
			return PO_END_INTERRUPTED;
		if (deadline && now >= deadline)
			return PO_END_TIMEOUT;
		if (limits->progress &&
		    now - started >= (int64_t)limits->progress_after_ms * 1000000) {
			draw_progress(now - started);
			*drawn = true;
		}
		if (poll(&pfd, 1, 100) > 0 && !buffer_read(buf, fd, &eof))
			return PO_END_NOMEM;
	}
	/* Ctrl-C reaches the whole process group: the child may die of it first. */
	return po_signals_count() != signals_before ? PO_END_INTERRUPTED : PO_END_EOF;
}

/* Reads the child's pipe (collect()); the progress line, if drawn, is erased after. */
static enum po_isolate_end parent_collect(int fd, const struct po_isolate_limits *limits,
					  unsigned signals_before, struct po_isolate_buffer *buf)
{
	bool drawn = false;
	enum po_isolate_end end = collect(fd, limits, signals_before, buf, &drawn);

	if (drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	return end;
}

static const char *where_text(char *out, size_t size)
{
	const char *phase = isolate_shared->phase;
	const char *file = isolate_shared->file;

	if (!phase[0] || strcmp(phase, "decoding") == 0)
		phase = "reading";
	if (file[0])
		snprintf(out, size, "while %s %s", phase, file);
	else
		snprintf(out, size, "while %s the trace", phase);
	return out;
}

static double cpu_seconds_used(const struct rusage *usage)
{
	return (double)usage->ru_utime.tv_sec + usage->ru_utime.tv_usec / 1e6 +
	       (double)usage->ru_stime.tv_sec + usage->ru_stime.tv_usec / 1e6;
}

/*
 * Whether the child was reading the trace (or the baseline's) when it stopped: then a
 * crash or a limit is the input's doing. Afterwards (analysing, writing the outputs) it is
 * profopt's own failure, and is not blamed on the trace.
 */
static bool reading_input(void)
{
	const char *phase = isolate_shared->phase;

	return !phase[0] || strncmp(phase, "decoding", 8) == 0 || strncmp(phase, "reading", 7) == 0;
}

/*
 * Describes a child that died of a signal: a limit it ran into, or a crash. Returns the
 * status: the trace's (DECODE) while it was being read, profopt's own (INTERNAL) after.
 */
static enum po_status describe_death(int signo, const struct rusage *usage,
				     const struct po_isolate_limits *limits, const char *reason,
				     struct po_error *err)
{
	char where[1200], because[420] = "";
	uint64_t peak_bytes = (uint64_t)usage->ru_maxrss * 1024;
	/* Running into RLIMIT_AS makes allocations fail, which libraries turn into an abort or
	 * a crash; GLib says so, and a peak near the limit tells the others from a bug. */
	bool out_of_memory = limits->memory_bytes && (peak_bytes >= limits->memory_bytes / 2 ||
						      strstr(reason, "GLib failed to allocate"));

	where_text(where, sizeof(where));
	if (reason[0])
		snprintf(because, sizeof(because), " (%s)", reason);
	if (!reading_input()) {
		if (out_of_memory)
			po_error_set(
			    err,
			    "the analysis exceeded its memory limit (%zu MiB) %s, after "
			    "the trace was read%s; raise it with PROFOPT_DECODE_LIMITS=mem=MiB",
			    (size_t)(limits->memory_bytes / PO_MIB), where, because);
		else
			po_error_set(err,
				     "profopt-analyze crashed (%s) %s, after the trace was read: a "
				     "bug in profopt, not damage in the trace; please report it",
				     po_signal_name(signo), where);
		return PO_STATUS_INTERNAL;
	}
	if (limits->cpu_seconds &&
	    (signo == SIGXCPU || cpu_seconds_used(usage) >= limits->cpu_seconds)) {
		po_error_set(err, "the trace decoder ran for more than %u s of CPU time %s",
			     limits->cpu_seconds, where);
	} else if (out_of_memory) {
		po_error_set(
		    err,
		    "the trace decoder exceeded its memory limit (%zu MiB) %s%s; the trace "
		    "is damaged, or PROFOPT_DECODE_LIMITS=mem=MiB raises the limit",
		    (size_t)(limits->memory_bytes / PO_MIB), where, because);
	} else {
		po_error_set(err, "the trace decoder crashed (%s%s%s) %s; the trace is malformed",
			     po_signal_name(signo), reason[0] ? ": " : "", reason, where);
	}
	return PO_STATUS_DECODE;
}

/* ---- what the child writes on stderr ----
 * The child's stderr is an anonymous file, not the terminal: libbabeltrace2 prints its own
 * log lines there before it aborts on some damaged traces (a precondition it checks in
 * itself fails), which would break the one-line error. When the child ends with a result,
 * what it wrote is passed on as it is; when it crashed, the library's log lines become the
 * reason in the error, and any other line is passed on.
 */

/* Reads the capture: all of it, or its first and last PO_STDERR_KEPT bytes. */
static char *capture_read(int fd, size_t *len)
{
	off_t size = lseek(fd, 0, SEEK_END);
	size_t head, tail;
	char *text;

	*len = 0;
	if (size <= 0)
		return NULL;
	head = (size_t)size <= 2 * PO_STDERR_KEPT ? (size_t)size : PO_STDERR_KEPT;
	tail = (size_t)size - head <= PO_STDERR_KEPT ? (size_t)size - head : PO_STDERR_KEPT;
	text = malloc(head + tail + 1);
	if (!text)
		return NULL;
	if (pread(fd, text, head, 0) != (ssize_t)head ||
	    (tail && pread(fd, text + head, tail, size - (off_t)tail) != (ssize_t)tail)) {
		free(text);
		return NULL;
	}
	*len = head + tail;
	text[*len] = '\0';
	return text;
}

/*
 * Whether a line is libbabeltrace2's log format: "MM-DD HH:MM:SS.mmm PID TID L TAG ...",
 * L one of T D I W E F.
 */
static bool is_library_log_line(const char *line, size_t len)
{
	size_t i = 18;

	if (len < 24 || line[2] != '-' || line[5] != ' ' || line[8] != ':' || line[11] != ':' ||
	    line[14] != '.')
		return false;
	for (int field = 0; field < 2; field++) {
		while (i < len && line[i] == ' ')
			i++;
		if (i >= len || line[i] < '0' || line[i] > '9')
			return false;
		while (i < len && line[i] >= '0' && line[i] <= '9')
			i++;
	}
	return i + 2 < len && line[i] == ' ' && strchr("TDIWEF", line[i + 1]) && line[i + 2] == ' ';
}

/*
 * Whether a line is GLib's, saying it could not allocate memory (what libbabeltrace2's
 * allocations print before GLib aborts: "***MEMORY-ERROR***: [PID]: GSlice: failed to
 * allocate 240 bytes (alignment: 256): Cannot allocate memory", or g_malloc()'s
 * "(process:PID): GLib-ERROR **: ...: failed to allocate N bytes"). Its size goes into what.
 */
static bool is_glib_memory_line(const char *line, size_t len, char *what, size_t what_size)
{
	const char *failed = memmem(line, len, "failed to allocate ", 19);
	unsigned long long bytes;

	if (!failed || (!memmem(line, len, "***MEMORY-ERROR***", 18) &&
			!memmem(line, len, "GLib-ERROR **", 13)))
		return false;
	if (sscanf(failed + 19, "%llu", &bytes) == 1)
		snprintf(what, what_size, "GLib failed to allocate %llu bytes", bytes);
	else
		snprintf(what, what_size, "GLib failed to allocate memory");
	return true;
}

/* Appends "what" of the library's lines to reason, once. */
static void reason_add(char *reason, size_t size, const char *what)
{
	size_t used = strlen(reason);

	if (strstr(reason, what) || used + 3 >= size)
		return;
	snprintf(reason + used, size - used, "%s%s", used ? ", " : "", what);
}

/*
 * Passes the child's lines on to stderr, leaving out libbabeltrace2's log lines, GLib's
 * allocation failures and empty lines when the child crashed (all_lines false); what those
 * say becomes reason.
 */
static void capture_relay(const char *text, size_t len, bool all_lines, char *reason,
			  size_t reason_size)
{
	const char *line = text, *end = text + len;

	reason[0] = '\0';
	if (all_lines) {
		(void)!write(STDERR_FILENO, text, len);
		return;
	}
	while (line < end) {
		const char *next = memchr(line, '\n', (size_t)(end - line));
		size_t line_len = next ? (size_t)(next - line) : (size_t)(end - line);
		const char *function;
		char what[160];

		if (line_len == 0) {
			/* GLib puts one before its message */
		} else if (is_glib_memory_line(line, line_len, what, sizeof(what))) {
			reason_add(reason, reason_size, what);
		} else if (!is_library_log_line(line, line_len)) {
			(void)!write(STDERR_FILENO, line, next ? line_len + 1 : line_len);
		} else if (memmem(line, line_len, "precondition not satisfied", 26)) {
			reason_add(reason, reason_size, "a libbabeltrace2 precondition failed");
		} else if ((function = memmem(line, line_len, "function=", 9)) != NULL) {
			size_t n = strcspn(function + 9, " ,:\n");

			snprintf(what, sizeof(what), "in %.*s", (int)(n < 100 ? n : 100),
				 function + 9);
			reason_add(reason, reason_size, what);
		}
		line = next ? next + 1 : end;
	}
}

/* Turns the bytes the child sent into the status, error and output of po_isolate_run(). */
static enum po_status parse_reply(const struct po_isolate_buffer *buf, char **output_text,
				  struct po_error *err)
{
	struct po_isolate_header header;
	size_t message_len;

	if (buf->len < sizeof(header)) {
		po_error_set(err, "the trace decoder ended without a result");
		return PO_STATUS_DECODE;
	}
	memcpy(&header, buf->bytes, sizeof(header));
	if ((unsigned)header.status >= PO_STATUS_COUNT ||
	    sizeof(header) + header.message_len + header.output_len != buf->len) {
		po_error_set(err, "the trace decoder sent a truncated result");
		return PO_STATUS_DECODE;
	}
	message_len = header.message_len < PO_ERROR_MAX ? header.message_len : PO_ERROR_MAX - 1;
	memcpy(err->message, buf->bytes + sizeof(header), message_len);
	err->message[message_len] = '\0';
	if (keeps_output((enum po_status)header.status) && output_text) {
		*output_text = malloc(header.output_len + 1);
		if (!*output_text) {
			po_error_set(err, "Failed to hold the output of the analysis");
			return PO_STATUS_NOMEM;
		}
		memcpy(*output_text, buf->bytes + sizeof(header) + header.message_len,
		       header.output_len);
		(*output_text)[header.output_len] = '\0';
	}
	return (enum po_status)header.status;
}

static enum po_status parent_finish(pid_t child, enum po_isolate_end end,
				    const struct po_isolate_buffer *buf,
				    const struct po_isolate_limits *limits, int capture,
				    char **output_text, struct po_error *err)
{
	struct rusage usage;
	int wstatus = 0;
	char reason[400] = "";
	size_t captured_len;
	char *captured; /* owned */

	if (end != PO_END_EOF)
		kill(child, SIGKILL);
	while (wait4(child, &wstatus, 0, &usage) < 0 && errno == EINTR)
		;
	captured = capture < 0 ? NULL : capture_read(capture, &captured_len);
	if (captured)
		capture_relay(captured, captured_len,
			      end == PO_END_EOF && WIFEXITED(wstatus) && buf->len > 0, reason,
			      sizeof(reason));
	free(captured);
	switch (end) {
	case PO_END_INTERRUPTED:
		po_error_set(err, "interrupted by %s", po_signal_name(po_signals_caught()));
		return PO_STATUS_INTERRUPTED;
	case PO_END_NOMEM:
		po_error_set(err, "Failed to hold the result of the trace decoder");
		return PO_STATUS_NOMEM;
	case PO_END_TIMEOUT: {
		char where[1200];

		po_error_set(err, "the trace decoder ran for more than %u s %s",
			     limits->wall_seconds, where_text(where, sizeof(where)));
		return PO_STATUS_DECODE;
	}
	case PO_END_EOF:
		break;
	}
	if (WIFSIGNALED(wstatus) && is_terminating(WTERMSIG(wstatus))) {
		/* Sent by someone to stop the analysis (the parent's was handled above). */
		po_error_set(err, "interrupted: the analysis process got %s",
			     po_signal_name(WTERMSIG(wstatus)));
		return PO_STATUS_INTERRUPTED;
	}
	if (WIFSIGNALED(wstatus))
		return describe_death(WTERMSIG(wstatus), &usage, limits, reason, err);
	if (buf->len == 0 && WIFEXITED(wstatus)) {
		char where[1200];

		/* A library that calls exit() itself, or a sanitizer that stops the process. */
		po_error_set(err,
			     "the trace decoder stopped (exit status %d%s%s) %s, without a result",
			     WEXITSTATUS(wstatus), reason[0] ? ": " : "", reason,
			     where_text(where, sizeof(where)));
		return PO_STATUS_DECODE;
	}
	return parse_reply(buf, output_text, err);
}

enum po_status po_isolate_run(po_isolated_fn fn, void *ctx, const struct po_isolate_limits *limits,
			      char **output_text, struct po_error *err)
{
	struct po_isolate_buffer buf = {0};
	unsigned signals_before;
	enum po_isolate_end end;
	enum po_status status;
	int fds[2], capture = -1;
	pid_t child, parent = getpid();

	if (output_text)
		*output_text = NULL;
	isolate_shared = mmap(NULL, sizeof(*isolate_shared), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (isolate_shared == MAP_FAILED) {
		isolate_shared = NULL;
		po_error_set(err, "Failed to map the progress area: %s", strerror(errno));
		return PO_STATUS_INTERNAL;
	}
	memset(isolate_shared, 0, sizeof(*isolate_shared));
	if (pipe(fds) != 0) {
		po_error_set(err, "Failed to create a pipe: %s", strerror(errno));
		status = PO_STATUS_INTERNAL;
		goto end_unmap;
	}
	/* Without an anonymous file, the child writes to stderr as it is. */
	capture = memfd_create("profopt-decoder-stderr", MFD_CLOEXEC);
	/* Caught before the count is taken: a signal from now on stops the run. */
	po_signals_catch();
	signals_before = po_signals_count();
	fflush(NULL);
	child = fork();
	if (child < 0) {
		po_error_set(err, "Failed to start the trace decoder: fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		status = PO_STATUS_INTERNAL;
		goto end_handlers;
	}
	if (child == 0) {
		close(fds[0]);
		child_main(fn, ctx, limits, fds[1], capture, parent);
	}
	close(fds[1]);
	end = parent_collect(fds[0], limits, signals_before, &buf);
	close(fds[0]);
	status = parent_finish(child, end, &buf, limits, capture, output_text, err);
	remove_scratch();
	free(buf.bytes);
end_handlers:
	po_signals_release();
	if (capture >= 0)
		close(capture);
end_unmap:
	munmap(isolate_shared, sizeof(*isolate_shared));
	isolate_shared = NULL;
	return status;
}
