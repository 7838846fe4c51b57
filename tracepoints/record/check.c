/*
 * check.c: profopt-record --check. Looks at what a recording needs and says for each thing
 * whether it is there and, when it is not, what to do: a session daemon that answers a
 * question within the deadline (ctl.c) or can be started, lttng-ust and the wrappers
 * profopt-record preloads, room for the ring buffers in a writable /dev/shm, the rights to
 * trace, room on the disk where the trace would go, then a recording in miniature (a private
 * session, a process that emits a few events, its trace read back), and the Python module
 * with its library. Exit 0 only when a recording would work; the Python module counts only
 * when it is installed (a C program records without it).
 *
 * Only the recording in miniature proves that the pieces work together: a read-only
 * /dev/shm, a /run/lttng where no daemon can start, or a consumer daemon that cannot run
 * each passed every other check.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record.h"

/* Less room than this where the trace goes fails the check; less than ROOM_LOW warns. */
#define ROOM_MIN_BYTES (64LL << 20)
#define ROOM_LOW_BYTES (1LL << 30)

enum verdict { CHECK_OK, CHECK_WARN, CHECK_FAIL, CHECK_SKIP };

struct checker {
	int failed;
	int warned;
};

static void report(struct checker *checker, enum verdict verdict, const char *what,
		   const char *detail, const char *advice)
{
	static const char *const marks[] = {"ok  ", "warn", "FAIL", "skip"};

	printf("%s  %-22s %s\n", marks[verdict], what, detail);
	if (verdict != CHECK_OK && advice && *advice)
		printf("      %-22s -> %s\n", "", advice);
	checker->failed += verdict == CHECK_FAIL;
	checker->warned += verdict == CHECK_WARN;
}

/* A shared library file: a regular file that starts with the ELF magic. */
static bool is_elf_file(const char *path, char *why, size_t size)
{
	unsigned char magic[4];
	struct stat info;
	ssize_t got;
	int fd;

	if (stat(path, &info) != 0) {
		snprintf(why, size, "%s", strerror(errno));
		return false;
	}
	if (!S_ISREG(info.st_mode)) {
		snprintf(why, size, "not a regular file");
		return false;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	got = fd >= 0 ? read(fd, magic, sizeof(magic)) : -1;
	if (fd >= 0)
		close(fd);
	if (got != 4 || memcmp(magic, "\177ELF", 4) != 0) {
		snprintf(why, size, "%s", got < 0 ? strerror(errno) : "not a shared library");
		return false;
	}
	return true;
}

/* NAME (a bare soname) in the library directories the dynamic linker searches here. */
static bool find_library(const char *name, char *path, size_t size)
{
	static const char *const dirs[] = {"/lib/x86_64-linux-gnu",
					   "/usr/lib/x86_64-linux-gnu",
					   "/lib64",
					   "/usr/lib64",
					   "/lib",
					   "/usr/lib",
					   "/usr/local/lib"};
	const char *extra = getenv("LD_LIBRARY_PATH");
	char why[128];

	if (strchr(name, '/')) {
		snprintf(path, size, "%s", name);
		return true;
	}
	for (const char *start = extra; start && *start;) {
		const char *end = strchrnul(start, ':');

		snprintf(path, size, "%.*s/%s", (int)(end - start), start, name);
		if (is_elf_file(path, why, sizeof(why)))
			return true;
		start = *end ? end + 1 : end;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, size, "%s/%s", dirs[i], name);
		if (is_elf_file(path, why, sizeof(why)))
			return true;
	}
	snprintf(path, size, "%s", name);
	return false;
}

static void check_library(struct checker *checker, const char *what, const char *name, bool needed,
			  const char *advice)
{
	char path[PATH_MAX + 64], why[128] = "not found", detail[PATH_MAX + 200];

	if (find_library(name, path, sizeof(path)) && is_elf_file(path, why, sizeof(why))) {
		report(checker, CHECK_OK, what, path, NULL);
		return;
	}
	snprintf(detail, sizeof(detail), "%s: %s", path, why);
	report(checker, needed ? CHECK_FAIL : CHECK_WARN, what, detail, advice);
}

/* The daemon's pid for a detail: "pid N", or what stands for it. */
static void daemon_pid_text(char *text, size_t size)
{
	pid_t pid = rec_sessiond_pid();

	if (pid > 0)
		snprintf(text, size, "pid %ld", (long)pid);
	else
		snprintf(text, size, "no pid file");
}

static void report_no_answer(struct checker *checker)
{
	char pid[64], detail[256], advice[256];

	daemon_pid_text(pid, sizeof(pid));
	snprintf(detail, sizeof(detail),
		 "running (%s), but it does not answer within %g s: "
		 "stopped or hung",
		 pid, rec_ctl_timeout_ms() / 1000.0);
	snprintf(advice, sizeof(advice),
		 "resume it (kill -CONT), or stop it (kill; profopt-record "
		 "then starts one); %s sets the wait",
		 REC_SESSIOND_TIMEOUT_ENV);
	report(checker, CHECK_FAIL, "session daemon", detail, advice);
}

/* A daemon that answers a real question within the deadline, or lttng-sessiond to start. */
static void check_sessiond(struct checker *checker)
{
	struct po_error err = {{0}};
	char *path = NULL;
	char detail[PATH_MAX + 64], pid[64];
	int sessions = -1;
	enum rec_status status = rec_sessiond_probe(&sessions, &err);

	if (status == REC_STATUS_SESSIOND_TIMEOUT) {
		report_no_answer(checker);
		return;
	}
	if (status != REC_STATUS_OK) {
		report(checker, CHECK_FAIL, "session daemon", err.message, NULL);
		return;
	}
	if (sessions >= 0) {
		daemon_pid_text(pid, sizeof(pid));
		snprintf(detail, sizeof(detail), "running (%s), and it answers (%d session(s))",
			 pid, sessions);
		report(checker, CHECK_OK, "session daemon", detail, NULL);
		return;
	}
	if (rec_search_path("lttng-sessiond", &path) == 0) {
		snprintf(detail, sizeof(detail), "none running; %s will be started", path);
		report(checker, CHECK_OK, "session daemon", detail, NULL);
		free(path);
		return;
	}
	report(checker, CHECK_FAIL, "session daemon", "none running, and no lttng-sessiond on PATH",
	       "apt-get install lttng-tools (or put lttng-sessiond on PATH)");
}

/* Tracing rights: root, or the tracing group for a root daemon; else a daemon of one's own. */
static void check_rights(struct checker *checker)
{
	struct group *tracing = getgrnam("tracing");
	gid_t groups[256];
	int count = getgroups(256, groups);
	bool member = false;

	if (geteuid() == 0) {
		report(checker, CHECK_OK, "rights", "root", NULL);
		return;
	}
	for (int i = 0; tracing && i < count; i++)
		member = member || groups[i] == tracing->gr_gid;
	if (member) {
		report(checker, CHECK_OK, "rights", "member of the tracing group", NULL);
		return;
	}
	/* A user's own daemon keeps its sockets and state in $LTTNG_HOME (else $HOME)/.lttng. */
	{
		const char *home = getenv("LTTNG_HOME");
		char detail[PATH_MAX + 128];

		if (!home || !*home)
			home = getenv("HOME");
		if (home && *home && access(home, W_OK | X_OK) == 0) {
			snprintf(detail, sizeof(detail),
				 "a session daemon of this user's own, in %s/.lttng", home);
			report(checker, CHECK_OK, "rights", detail, NULL);
			return;
		}
		snprintf(detail, sizeof(detail),
			 "not root, not in the tracing group, and %s is not writable for a "
			 "session daemon of this user's own",
			 home && *home ? home : "no HOME");
		report(checker, CHECK_FAIL, "rights", detail,
		       "add the user to the tracing group (a root session daemon), or set "
		       "LTTNG_HOME to a writable directory");
	}
}

/* The ring buffers (per CPU, twice with --live) in /dev/shm, at most half its free room. */
static void check_shm(struct checker *checker, const struct rec_options *options)
{
	struct statvfs shm;
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	double need = (double)options->subbuf_bytes * (double)options->subbuf_count *
		      (double)(cpus > 0 ? cpus : 1) * (options->live ? 2 : 1);
	char detail[256];

	if (rec_shm_unusable(detail, sizeof(detail)) || statvfs("/dev/shm", &shm) != 0) {
		report(checker, CHECK_FAIL, "buffer memory", detail,
		       "lttng-ust keeps its ring buffers in /dev/shm: nothing would be recorded; "
		       "mount a tmpfs there, read-write (mount -o remount,rw /dev/shm)");
		return;
	}
	snprintf(detail, sizeof(detail), "the buffers need %.0f MiB, /dev/shm has %.0f MiB free",
		 need / 1048576.0, (double)shm.f_bavail * (double)shm.f_frsize / 1048576.0);
	if (need <= (double)shm.f_bavail * (double)shm.f_frsize / 2)
		report(checker, CHECK_OK, "buffer memory", detail, NULL);
	else
		report(checker, CHECK_FAIL, "buffer memory", detail,
		       "smaller buffers (--subbuf-size, --num-subbuf), or a larger /dev/shm "
		       "(mount -o remount,size=... /dev/shm)");
}

/* Where the trace would go: -o's parent directory, or the current one. */
static void check_disk(struct checker *checker, const struct rec_options *options)
{
	char dir[PATH_MAX], detail[PATH_MAX + 128];
	struct statvfs room;
	long long free_bytes;

	snprintf(dir, sizeof(dir), "%s", options->output_dir ? options->output_dir : ".");
	while (access(dir, F_OK) != 0 && strrchr(dir, '/')) {
		*strrchr(dir, '/') = '\0';
		if (!dir[0])
			snprintf(dir, sizeof(dir), "/");
	}
	if (access(dir, F_OK) != 0)
		snprintf(dir, sizeof(dir), ".");
	if (statvfs(dir, &room) != 0) {
		snprintf(detail, sizeof(detail), "%s: %s", dir, strerror(errno));
		report(checker, CHECK_FAIL, "disk room", detail, "record elsewhere (-o DIR)");
		return;
	}
	free_bytes = (long long)room.f_bavail * (long long)room.f_frsize;
	snprintf(detail, sizeof(detail), "%.0f MiB free at %s", (double)free_bytes / 1048576.0,
		 dir);
	if (access(dir, W_OK) != 0)
		report(checker, CHECK_FAIL, "disk room", detail,
		       "the directory is not writable: record elsewhere (-o DIR)");
	else if (free_bytes < ROOM_MIN_BYTES)
		report(checker, CHECK_FAIL, "disk room", detail,
		       "a full disk leaves the trace without its end: record elsewhere (-o DIR)");
	else if (free_bytes < ROOM_LOW_BYTES)
		report(checker, CHECK_WARN, "disk room", detail,
		       "a long run writes tens of MiB a minute: record where there is more room");
	else
		report(checker, CHECK_OK, "disk room", detail, NULL);
}

/*
 * The Python module, as python3 on PATH would import it: absent is a note (C programs
 * record without it); present but unable to load libprofopt fails, since a Python program
 * would then record nothing.
 */
static void check_python(struct checker *checker)
{
	char line[PATH_MAX + 64] = "", *newline;
	FILE *out;
	int status;

	/* The probe's text is in the environment, not in the command line (rec_check()). */
	out = popen("python3 -c \"$PROFOPT_CHECK_PROBE\" 2>/dev/null", "r");
	if (!out) {
		report(checker, CHECK_WARN, "python module", "python3 could not be run", NULL);
		return;
	}
	if (!fgets(line, sizeof(line), out))
		line[0] = '\0';
	status = pclose(out);
	newline = strchr(line, '\n');
	if (newline)
		*newline = '\0';
	if (status != 0 && !line[0]) {
		report(checker, CHECK_WARN, "python module", "python3 is not on PATH",
		       "only needed to record Python programs");
	} else if (strcmp(line, "absent") == 0) {
		report(checker, CHECK_WARN, "python module", "not importable by python3",
		       "only needed to record Python programs: install it (see README, PyTorch)");
	} else if (strncmp(line, "loaded ", 7) == 0) {
		report(checker, CHECK_OK, "python module", line + 7, NULL);
	} else {
		report(checker, CHECK_FAIL, "python module",
		       "imported, but it cannot load libprofopt: Python programs would record "
		       "nothing",
		       "install libprofopt, or set PROFOPT_LIBRARY to its path");
	}
}

/*
 * The recording in miniature: a child of this process loads libprofopt, the library every
 * instrumented program uses, and once the session daemon registered it emits its process
 * announcement, run_begin with a token (the framework name) and run_end; the token must then
 * be read back from the trace's streams. Each call to the daemon has the deadline (ctl.c),
 * and so has the child's registration (LTTNG_UST_REGISTER_TIMEOUT).
 */
#define CHILD_NO_LIBRARY 2
#define CHILD_UNREGISTERED 3
/* The traced process may take the registration's deadline and this much more. */
#define CHILD_EXTRA_MS 5000

/* Where an instrumented program would find libprofopt, or beside this program. */
static void *load_libprofopt(void)
{
	const char *named = getenv("PROFOPT_LIBRARY");
	char self[PATH_MAX], beside[PATH_MAX + 32];
	ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
	void *library = named && *named ? dlopen(named, RTLD_NOW) : NULL;

	if (!library && length > 0) {
		self[length] = '\0';
		*strrchr(self, '/') = '\0';
		snprintf(beside, sizeof(beside), "%s/../lib/%s", self,
			 strrchr(REC_PROFOPT_LIB, '/') + 1);
		library = dlopen(beside, RTLD_NOW);
	}
	if (!library)
		library = dlopen(REC_PROFOPT_LIB, RTLD_NOW);
	if (!library)
		library = dlopen(strrchr(REC_PROFOPT_LIB, '/') + 1, RTLD_NOW);
	return library;
}

/* In the child: its exit status says how far it got. */
static void emit_events(const char *token, int register_ms)
{
	char wait_ms[32];
	void *library;
	int (*enabled)(void);
	void (*run_begin)(const char *);
	void (*run_end)(void);

	snprintf(wait_ms, sizeof(wait_ms), "%d", register_ms);
	setenv("LTTNG_UST_REGISTER_TIMEOUT", wait_ms, 1);
	setenv("PROFOPT_SAMPLE_MS", "0", 1);
	unsetenv("PROFOPT_RECORD_NOTES");
	library = load_libprofopt();
	if (!library)
		_exit(CHILD_NO_LIBRARY);
	*(void **)&enabled = dlsym(library, "profopt_tracing_enabled");
	*(void **)&run_begin = dlsym(library, "profopt_run_begin");
	*(void **)&run_end = dlsym(library, "profopt_run_end");
	if (!enabled || !run_begin || !run_end)
		_exit(CHILD_NO_LIBRARY);
	if (!enabled())
		_exit(CHILD_UNREGISTERED);
	run_begin(token);
	run_end();
	exit(0); /* lttng-ust's destructors run */
}

static enum rec_status child_failed(int wait_status, struct po_error *err)
{
	const char *signal_name;

	if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == CHILD_NO_LIBRARY) {
		po_error_set(err, "libprofopt could not be loaded to emit the check's events (set "
				  "PROFOPT_LIBRARY to the path of libprofopt.so.0)");
	} else if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == CHILD_UNREGISTERED) {
		po_error_set(err,
			     "the session daemon did not register the check's process within %g s, "
			     "so none of its events was recorded",
			     rec_ctl_timeout_ms() / 1000.0);
	} else if (WIFSIGNALED(wait_status)) {
		signal_name = sigabbrev_np(WTERMSIG(wait_status));
		po_error_set(err, "the check's traced process was killed by SIG%s",
			     signal_name ? signal_name : "?");
	} else {
		po_error_set(err, "the check's traced process exited with status %d",
			     WEXITSTATUS(wait_status));
	}
	return REC_STATUS_TRACING;
}

static enum rec_status run_traced_child(const char *token, struct po_error *err)
{
	int wait_status = 0;
	enum rec_status status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		po_error_set(err, "fork: %s", strerror(errno));
		return REC_STATUS_TRACING;
	}
	if (pid == 0)
		emit_events(token, rec_ctl_timeout_ms());
	status = rec_ctl_wait_child(pid, rec_ctl_timeout_ms() + CHILD_EXTRA_MS, &wait_status, err);
	if (status != REC_STATUS_OK) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR) {
		}
		if (status == REC_STATUS_SESSIOND_TIMEOUT)
			po_error_set(err, "the check's traced process did not end within %g s",
				     (rec_ctl_timeout_ms() + CHILD_EXTRA_MS) / 1000.0);
		return status;
	}
	if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0)
		return REC_STATUS_OK;
	return child_failed(wait_status, err);
}

static const char *wanted_token;

/* nftw: whether a stream file (not metadata, not an index) holds the token. */
static int holds_token(const char *path, const struct stat *st, int type, struct FTW *walk)
{
	const char *name = path + walk->base;
	size_t length = strlen(name);
	bool found = false;
	void *bytes;
	int fd;

	if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size <= 0 ||
	    !strcmp(name, "metadata") || (length > 4 && !strcmp(name + length - 4, ".idx")))
		return 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	bytes = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (bytes == MAP_FAILED)
		return 0;
	found = memmem(bytes, (size_t)st->st_size, wanted_token, strlen(wanted_token)) != NULL;
	munmap(bytes, (size_t)st->st_size);
	return found;
}

/* The trace is whole (verify.c), and its streams hold the token. */
static enum rec_status read_back(const char *trace_dir, const char *token, struct po_error *err)
{
	const struct rec_verify_input input = {.trace_dir = trace_dir};
	struct rec_verification result;

	rec_verify(&input, &result);
	if (result.problems) {
		po_error_set(err, "the check's trace lost data: %s", result.lines[0]);
		return REC_STATUS_TRACING;
	}
	wanted_token = token;
	if (nftw(trace_dir, holds_token, 16, FTW_PHYS) != 1) {
		po_error_set(err,
			     "the check's process emitted its events, but its trace holds none "
			     "of them: the consumer daemon did not write them");
		return REC_STATUS_TRACING;
	}
	return REC_STATUS_OK;
}

enum recording_stage { STAGE_DAEMON, STAGE_SESSION, STAGE_PROCESS, STAGE_TRACE };

/* What to do when a stage of the recording in miniature failed. */
static const char *recording_advice(enum rec_status status, enum recording_stage stage)
{
	static const char *const advice[] = {
	    "the session daemon could not start: is its directory (/run/lttng as root, "
	    "$LTTNG_HOME/.lttng otherwise) writable, and held by no other daemon?",
	    "the session daemon could not set up a session: is its consumer daemon "
	    "(lttng-consumerd) installed and working? restart lttng-sessiond",
	    "the process was not recorded: is /dev/shm writable? restart lttng-sessiond",
	    "the consumer daemon did not write the trace: restart lttng-sessiond"};

	if (status == REC_STATUS_SESSIOND_TIMEOUT && stage == STAGE_SESSION)
		return "the session daemon waits for its consumer daemon (lttng-consumerd) to set "
		       "up a session: is it installed and working? restart lttng-sessiond";
	if (status == REC_STATUS_SESSIOND_TIMEOUT)
		return "the session daemon is stopped or hung: resume or restart "
		       "it; " REC_SESSIOND_TIMEOUT_ENV " sets the wait";
	return advice[stage];
}

/* Stops and destroys the check's session; the first failure is the one said. */
static enum rec_status end_session(struct rec_session *session, enum rec_status status,
				   struct po_error *err)
{
	struct po_error end_err = {{0}};
	enum rec_status stopped = rec_session_stop(session, &end_err);
	enum rec_status destroyed = rec_session_destroy(session, &end_err);

	if (status == REC_STATUS_OK && (stopped != REC_STATUS_OK || destroyed != REC_STATUS_OK)) {
		*err = end_err;
		return stopped != REC_STATUS_OK ? stopped : destroyed;
	}
	return status;
}

/* The check's session, named for its owner, writing into the scratch directory. */
static enum rec_status start_session(struct rec_session *session, const struct rec_options *options,
				     char *trace, size_t size, struct po_error *err)
{
	struct rec_options check_options = *options;
	char name[128];
	enum rec_status status = rec_scratch_create(err);

	if (status != REC_STATUS_OK)
		return status;
	snprintf(name, sizeof(name), "profopt-check-%s", rec_owner_tag());
	snprintf(trace, size, "%s/trace", rec_scratch_dir());
	check_options.output_dir = trace;
	status = rec_session_create_named(session, &check_options, name, err);
	if (status == REC_STATUS_OK)
		status = rec_session_start(session, err);
	return status;
}

/* Records and reads back; the stage it got to, and the status there. */
static enum rec_status record_in_miniature(const struct rec_options *options,
					   enum recording_stage *stage, bool *daemon_started,
					   struct po_error *err)
{
	struct rec_sessiond sessiond = {0};
	struct rec_session session = {0};
	char token[128], trace[700] = "";
	enum rec_status status = rec_sessiond_ensure_quietly(&sessiond, err);
	int others;

	*stage = STAGE_DAEMON;
	*daemon_started = sessiond.started_here;
	snprintf(token, sizeof(token), "profopt-record --check %s", rec_owner_tag());
	if (status == REC_STATUS_OK) {
		*stage = STAGE_SESSION;
		status = start_session(&session, options, trace, sizeof(trace), err);
	}
	if (status == REC_STATUS_OK) {
		*stage = STAGE_PROCESS;
		status = run_traced_child(token, err);
	}
	status = end_session(&session, status, err);
	if (status == REC_STATUS_OK) {
		*stage = STAGE_TRACE;
		status = read_back(trace, token, err);
	}
	rec_session_fini(&session);
	rec_scratch_remove_entry("trace");
	rec_scratch_remove();
	/* one started for the check that does not answer is this check's to end */
	if (sessiond.started_here &&
	    rec_sessiond_stop(&sessiond, &others) == REC_SESSIOND_UNANSWERED)
		rec_sessiond_terminate(&sessiond);
	return status;
}

static void check_recording(struct checker *checker, const struct rec_options *options)
{
	struct po_error err = {{0}};
	char detail[PO_ERROR_MAX + 100];
	int64_t start_ns = rec_monotonic_ns();
	enum recording_stage stage;
	bool daemon_started;
	enum rec_status status;

	if (checker->failed) {
		report(checker, CHECK_SKIP, "recording", "not tried: a check above failed", NULL);
		return;
	}
	status = record_in_miniature(options, &stage, &daemon_started, &err);
	if (status != REC_STATUS_OK) {
		report(checker, CHECK_FAIL, "recording", err.message,
		       recording_advice(status, stage));
		return;
	}
	snprintf(detail, sizeof(detail),
		 "a private session recorded a process's events, read back from its trace "
		 "(%.1f s%s)",
		 (double)(rec_monotonic_ns() - start_ns) / 1e9,
		 daemon_started ? ", with a session daemon started for it and stopped" : "");
	report(checker, CHECK_OK, "recording", detail, NULL);
}

int rec_check(const struct rec_options *options)
{
	struct checker checker = {0};
	char fork_hooks[4096];
	static const char probe[] = "import sys\n"
				    "try:\n"
				    "    import profopt\n"
				    "except ImportError:\n"
				    "    print('absent'); sys.exit(0)\n"
				    "path = profopt.library_path()\n"
				    "print(('loaded ' + path) if path else 'no-library')\n";

	setenv("PROFOPT_CHECK_PROBE", probe, 1);
	check_sessiond(&checker);
	check_rights(&checker);
	check_library(&checker, "lttng-ust", "liblttng-ust.so.1", true,
		      "apt-get install liblttng-ust1");
	rec_fork_library(fork_hooks, sizeof(fork_hooks));
	check_library(
	    &checker, "fork hooks", fork_hooks, true,
	    "install profopt's libprofopt-fork, or apt-get install liblttng-ust1 (without "
	    "either forked workers are not traced)");
	check_library(&checker, "libc wrapper (--heap)", REC_UST_LIBC_WRAPPER_LIB, options->heap,
		      "apt-get install liblttng-ust1 (only --heap needs it)");
	if (options->heap) {
		char heap[4096];

		rec_heap_library(heap, sizeof(heap));
		check_library(
		    &checker, "allocation callers (--heap)", heap, false,
		    "install profopt's libprofopt-heap (without it an allocation site is "
		    "named by its immediate caller, an allocator such as c10::alloc_cpu)");
	}
	check_shm(&checker, options);
	check_disk(&checker, options);
	check_recording(&checker, options);
	check_python(&checker);
	unsetenv("PROFOPT_CHECK_PROBE");
	if (checker.failed)
		printf("profopt-record: %d check(s) failed: a recording would not work\n",
		       checker.failed);
	else
		printf("profopt-record: a recording would work%s\n",
		       checker.warned ? " (see the warnings)" : "");
	fflush(stdout);
	return checker.failed ? rec_status_exit_code(REC_STATUS_TRACING) : 0;
}
