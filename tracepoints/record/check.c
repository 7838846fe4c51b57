/*
 * check.c: profopt-record --check. Looks at what a recording needs, without recording,
 * and says for each thing whether it is there and, when it is not, what to do: a session
 * daemon that answers a question within the deadline (ctl.c) or can be started, lttng-ust and the
 * wrappers profopt-record preloads, room for the ring buffers in /dev/shm, the rights to trace,
 * room on the disk where the trace would go, and the Python module with its library. Exit 0 only
 * when a recording would work; the Python module counts only when it is installed (a C program
 * records without it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record.h"

/* Less room than this where the trace goes fails the check; less than ROOM_LOW warns. */
#define ROOM_MIN_BYTES (64LL << 20)
#define ROOM_LOW_BYTES (1LL << 30)

enum verdict { CHECK_OK, CHECK_WARN, CHECK_FAIL };

struct checker {
	int failed;
	int warned;
};

static void report(struct checker *checker, enum verdict verdict, const char *what,
		   const char *detail, const char *advice)
{
	static const char *const marks[] = {"ok  ", "warn", "FAIL"};

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

	if (statvfs("/dev/shm", &shm) != 0) {
		snprintf(detail, sizeof(detail), "/dev/shm: %s", strerror(errno));
		report(checker, CHECK_FAIL, "buffer memory", detail,
		       "lttng-ust keeps its ring buffers in /dev/shm: mount a tmpfs there");
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

int rec_check(const struct rec_options *options)
{
	struct checker checker = {0};
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
	check_library(&checker, "fork wrapper", REC_UST_FORK_LIB, true,
		      "apt-get install liblttng-ust1 (without it forked workers are not traced)");
	check_library(&checker, "libc wrapper (--heap)", REC_UST_LIBC_WRAPPER_LIB, options->heap,
		      "apt-get install liblttng-ust1 (only --heap needs it)");
	check_shm(&checker, options);
	check_disk(&checker, options);
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
