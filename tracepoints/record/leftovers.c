/*
 * leftovers.c: what a profopt-record leaves when it is killed (SIGKILL, a crash, a power
 * cut), and how the next one cleans it up.
 *
 * A recorder ended that way leaves its sessions in the session daemon (still tracing), its
 * scratch directory (the processes' notes, the --live relay's files), and the daemon it
 * started. So everything it makes carries its owner: the tag PID-START-PIDNS, its pid, its
 * start time in clock ticks since boot (/proc/PID/stat), so that a pid used again by
 * another process is not taken for it, and its PID namespace, since a recorder in another
 * namespace (a container sharing /tmp or the daemon) has pids this one cannot see:
 *  - its sessions are named profopt-record-TAG-YYYYMMDD-HHMMSS, profopt-live-TAG and
 *    profopt-check-TAG;
 *  - its scratch directory is TMPDIR/profopt-record-TAG-XXXXXX (mode 0700), holding a mark,
 *    .profopt-record, whose text is the tag;
 *  - the session daemon it starts has REC_SESSIOND_OWNER_ENV=TAG in its environment.
 * The next recorder destroys the sessions and removes the scratch directories of owners of
 * its namespace that are gone, and stops such a daemon at its own end when no session lives
 * in it (sessiond.c). Nothing else is touched: sessions named otherwise, of an owner that
 * lives or of another namespace; a directory that is not a real directory owned by this
 * user, writable by no one else and holding the mark, whose entries are removed as names,
 * never followed (openat/unlinkat from descriptors opened O_NOFOLLOW).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lttng/lttng.h>

#include "record.h"

#define SCRATCH_PREFIX "profopt-record-"
#define SCRATCH_MARK ".profopt-record"
#define SESSIONS_MAX 64
#define SCRATCH_DEPTH_MAX 16

static const char *const session_prefixes[] = {"profopt-record-", "profopt-live-",
					       "profopt-check-"};

struct owner {
	long pid;
	unsigned long long start; /* clock ticks since boot */
	unsigned long long pid_ns;
};

static struct {
	char tag[96];
	struct owner self;
	char scratch[600];
} leftovers;

/* Process pid's start time; *gone when there is none, or it is a zombie (it acts no more). */
static unsigned long long process_start(long pid, bool *gone)
{
	char path[64], text[1024], *after_name, state;
	unsigned long long start = 0;
	FILE *file;
	size_t length;

	*gone = true;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	file = fopen(path, "re");
	if (!file)
		return 0;
	length = fread(text, 1, sizeof(text) - 1, file);
	fclose(file);
	text[length] = '\0';
	after_name = strrchr(text, ')'); /* the name may hold spaces and parentheses */
	/* state, then 18 fields to the start time (field 22) */
	if (!after_name || sscanf(after_name + 1,
				  " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
				  "%*d %*d %*d %llu",
				  &state, &start) != 2)
		return 0;
	*gone = state == 'Z' || state == 'X';
	return start;
}

bool rec_process_runs(pid_t pid)
{
	bool gone;

	process_start(pid, &gone);
	return !gone;
}

static unsigned long long pid_namespace(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

const char *rec_owner_tag(void)
{
	bool gone;

	if (!leftovers.tag[0]) {
		leftovers.self.pid = getpid();
		leftovers.self.start = process_start(leftovers.self.pid, &gone);
		leftovers.self.pid_ns = pid_namespace();
		snprintf(leftovers.tag, sizeof(leftovers.tag), "%ld-%llu-%llu", leftovers.self.pid,
			 leftovers.self.start, leftovers.self.pid_ns);
	}
	return leftovers.tag;
}

/* Digits at *text, up to a limit; advances *text past them. False when there are none. */
static bool parse_digits(const char **text, unsigned long long *value)
{
	const char *at = *text;

	*value = 0;
	while (isdigit((unsigned char)*at) && at - *text < 19)
		*value = *value * 10 + (unsigned long long)(*at++ - '0');
	if (at == *text || isdigit((unsigned char)*at))
		return false;
	*text = at;
	return true;
}

/* Parses PID-START-PIDNS at text (digits only); the length it took, 0 when it is not one. */
static int parse_tag(const char *text, struct owner *owner)
{
	const char *at = text;
	unsigned long long pid;

	if (!parse_digits(&at, &pid) || *at++ != '-' || !parse_digits(&at, &owner->start) ||
	    *at++ != '-' || !parse_digits(&at, &owner->pid_ns) || pid == 0 || pid > INT32_MAX)
		return 0;
	owner->pid = (long)pid;
	return (int)(at - text);
}

/* Whether the owner is known to be gone: of this namespace, and no process is it now. */
static bool owner_gone(const struct owner *owner)
{
	bool gone;
	unsigned long long start;

	rec_owner_tag();
	if (!leftovers.self.pid_ns || owner->pid_ns != leftovers.self.pid_ns ||
	    !leftovers.self.start)
		return false;
	start = process_start(owner->pid, &gone);
	return gone || start != owner->start;
}

/*
 * The owner of a session profopt-record names (profopt-record-TAG-YYYYMMDD-HHMMSS,
 * profopt-live-TAG, profopt-check-TAG); false for any other name.
 */
static bool session_owner(const char *name, struct owner *owner)
{
	for (size_t i = 0; i < sizeof(session_prefixes) / sizeof(session_prefixes[0]); i++) {
		size_t prefix = strlen(session_prefixes[i]);
		int length;
		unsigned date, time;
		int date_length = 0;

		if (strncmp(name, session_prefixes[i], prefix) != 0 ||
		    !(length = parse_tag(name + prefix, owner)))
			continue;
		if (i > 0)
			return name[prefix + (size_t)length] == '\0';
		return sscanf(name + prefix + (size_t)length, "-%8u-%6u%n", &date, &time,
			      &date_length) == 2 &&
		       date_length == 16 && name[prefix + (size_t)length + 16] == '\0';
	}
	return false;
}

static bool remove_entry_at(int parent_fd, const char *name, int depth);

static const char *tmp_dir(void)
{
	const char *tmp = getenv("TMPDIR");

	return tmp && tmp[0] == '/' && strlen(tmp) < 400 ? tmp : "/tmp";
}

enum rec_status rec_scratch_create(struct po_error *err)
{
	const char *tag = rec_owner_tag();
	char mark[700];
	int fd;

	snprintf(leftovers.scratch, sizeof(leftovers.scratch), "%s/" SCRATCH_PREFIX "%s-XXXXXX",
		 tmp_dir(), tag);
	if (!mkdtemp(leftovers.scratch)) {
		po_error_set(err, "Failed to make a scratch directory in %s: %s", tmp_dir(),
			     strerror(errno));
		leftovers.scratch[0] = '\0';
		return REC_STATUS_TRACING;
	}
	snprintf(mark, sizeof(mark), "%s/" SCRATCH_MARK, leftovers.scratch);
	fd = open(mark, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, tag, strlen(tag)) != (ssize_t)strlen(tag)) {
		po_error_set(err, "Failed to write %s: %s", mark, strerror(errno));
		if (fd >= 0)
			close(fd);
		rec_scratch_remove();
		return REC_STATUS_TRACING;
	}
	close(fd);
	return REC_STATUS_OK;
}

const char *rec_scratch_dir(void)
{
	return leftovers.scratch[0] ? leftovers.scratch : NULL;
}

void rec_scratch_remove_entry(const char *name)
{
	int fd;

	if (!leftovers.scratch[0])
		return;
	fd = open(leftovers.scratch, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		remove_entry_at(fd, name, 0);
		close(fd);
	}
}

/*
 * The mark goes first: a directory that must stay (the log of a relay that failed, named
 * in a message) stays unmarked, so that no later recorder removes it.
 */
void rec_scratch_remove(void)
{
	char mark[700];

	if (!leftovers.scratch[0])
		return;
	snprintf(mark, sizeof(mark), "%s/" SCRATCH_MARK, leftovers.scratch);
	unlink(mark);
	rmdir(leftovers.scratch);
	leftovers.scratch[0] = '\0';
}

/* Removes the entry name of directory parent_fd, a directory with all it holds: no link is
 * followed, each is removed as a name. */
static bool remove_entry_at(int parent_fd, const char *name, int depth)
{
	struct stat st;
	struct dirent *entry;
	bool removed_one, whole = true;
	DIR *dir;
	int fd;

	if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT;
	fd = depth < SCRATCH_DEPTH_MAX
		 ? openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
		 : -1;
	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	do { /* entries removed while reading may hide others: read again until none is */
		removed_one = false;
		rewinddir(dir);
		while ((entry = readdir(dir))) {
			if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
				continue;
			if (remove_entry_at(dirfd(dir), entry->d_name, depth + 1))
				removed_one = true;
			else
				whole = false;
		}
	} while (removed_one && whole);
	closedir(dir);
	return whole && unlinkat(parent_fd, name, AT_REMOVEDIR) == 0;
}

/*
 * The proof that a directory named like a scratch directory is one: a real directory owned
 * by this user and writable by no one else, holding the mark, a regular file of this user
 * with one link whose text is the owner's tag.
 */
static bool scratch_proved(int tmp_fd, const char *name, const char *tag)
{
	char text[sizeof(leftovers.tag)] = "";
	struct stat st;
	int dir_fd = openat(tmp_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int mark_fd;
	ssize_t got = -1;
	bool proved = false;

	if (dir_fd < 0)
		return false;
	if (fstat(dir_fd, &st) == 0 && st.st_uid == geteuid() && !(st.st_mode & 022)) {
		mark_fd =
		    openat(dir_fd, SCRATCH_MARK, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (mark_fd >= 0 && fstat(mark_fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_nlink == 1 && st.st_uid == geteuid())
			got = read(mark_fd, text, sizeof(text) - 1);
		if (mark_fd >= 0)
			close(mark_fd);
		proved = got == (ssize_t)strlen(tag) && !memcmp(text, tag, (size_t)got);
	}
	close(dir_fd);
	return proved;
}

/* The dead owners whose leftovers were found, and what was done with each. */
#define OWNERS_MAX 8
struct dead_owner {
	struct owner owner;
	int sessions_destroyed;
	char trace[512];   /* what its recording session wrote to */
	char scratch[600]; /* its scratch directory, removed */
	char failure[300]; /* what could not be cleaned, and why */
	pid_t daemon_pid;  /* the session daemon it started, which runs */
};

struct cleanup {
	struct dead_owner owners[OWNERS_MAX];
	int owner_count;
};

static struct dead_owner *dead_owner_of(struct cleanup *cleanup, const struct owner *owner)
{
	struct dead_owner *dead;

	for (int i = 0; i < cleanup->owner_count; i++)
		if (cleanup->owners[i].owner.pid == owner->pid &&
		    cleanup->owners[i].owner.start == owner->start)
			return &cleanup->owners[i];
	if (cleanup->owner_count == OWNERS_MAX)
		return NULL;
	dead = &cleanup->owners[cleanup->owner_count++];
	*dead = (struct dead_owner){.owner = *owner};
	return dead;
}

/* TMPDIR/profopt-record-TAG-XXXXXX of owners that are gone, proved to be scratch dirs. */
static void clean_scratch_dirs(struct cleanup *cleanup)
{
	int tmp_fd = open(tmp_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *entry;
	DIR *dir;

	if (tmp_fd < 0 || !(dir = fdopendir(tmp_fd))) {
		if (tmp_fd >= 0)
			close(tmp_fd);
		return;
	}
	while ((entry = readdir(dir))) {
		const char *name = entry->d_name;
		struct owner owner;
		struct dead_owner *dead;
		char tag[sizeof(leftovers.tag)];
		int length;

		if (strncmp(name, SCRATCH_PREFIX, strlen(SCRATCH_PREFIX)) != 0 ||
		    !(length = parse_tag(name + strlen(SCRATCH_PREFIX), &owner)) ||
		    strlen(name + strlen(SCRATCH_PREFIX) + length) != 7 ||
		    name[strlen(SCRATCH_PREFIX) + (size_t)length] != '-' || !owner_gone(&owner))
			continue;
		snprintf(tag, sizeof(tag), "%.*s", length, name + strlen(SCRATCH_PREFIX));
		if (!scratch_proved(dirfd(dir), name, tag) ||
		    !(dead = dead_owner_of(cleanup, &owner)))
			continue;
		if (remove_entry_at(dirfd(dir), name, 0))
			snprintf(dead->scratch, sizeof(dead->scratch), "%.400s/%.150s", tmp_dir(),
				 name);
		else
			snprintf(dead->failure, sizeof(dead->failure),
				 "could not remove all of its scratch directory %.150s/%.100s",
				 tmp_dir(), name);
	}
	closedir(dir);
}

/* The daemon's sessions that profopt-record named, with their output paths. */
struct session_list {
	int count;
	struct {
		char name[128];
		char path[512];
	} sessions[SESSIONS_MAX];
};

/* In the call's child (ctl.c). */
static enum rec_status list_run(void *context, struct po_error *err)
{
	struct session_list *list = context;
	struct lttng_session *sessions = NULL;
	int count = lttng_list_sessions(&sessions);

	list->count = 0;
	if (count < 0) {
		po_error_set(err, "Failed to list the daemon's sessions: %s",
			     lttng_strerror(count));
		return REC_STATUS_TRACING;
	}
	for (int i = 0; i < count && list->count < SESSIONS_MAX; i++) {
		struct owner owner;

		if (strlen(sessions[i].name) >= sizeof(list->sessions[0].name) ||
		    !session_owner(sessions[i].name, &owner))
			continue;
		snprintf(list->sessions[list->count].name, sizeof(list->sessions[0].name), "%.127s",
			 sessions[i].name);
		snprintf(list->sessions[list->count].path, sizeof(list->sessions[0].path), "%.511s",
			 sessions[i].path);
		list->count++;
	}
	free(sessions);
	return REC_STATUS_OK;
}

static enum rec_status list_sessions(struct session_list *list, struct po_error *err)
{
	const struct rec_ctl_call call = {.what = "list its sessions",
					  .run = list_run,
					  .context = list,
					  .context_size = sizeof(*list)};

	return rec_ctl_call(&call, err);
}

static bool listed(const struct session_list *list, const char *name)
{
	for (int i = 0; i < list->count; i++)
		if (!strcmp(list->sessions[i].name, name))
			return true;
	return false;
}

/*
 * Destroys a session of an owner that is gone. The daemon may report a failure of a
 * session it destroyed all the same (a live session whose relay is gone: "Rotation
 * failure on consumer"), so a failure is one only when the session is still listed.
 */
static enum rec_status destroy_leftover(const char *name, struct dead_owner *dead,
					struct po_error *err)
{
	static struct session_list relisted;
	struct po_error destroy_err = {{0}};
	bool timed_out;
	enum rec_status status = rec_destroy_session(name, &timed_out, &destroy_err);

	if (status == REC_STATUS_TRACING) {
		status = list_sessions(&relisted, err);
		if (status == REC_STATUS_OK && listed(&relisted, name)) {
			snprintf(dead->failure, sizeof(dead->failure),
				 "could not destroy its session %.127s: %.120s", name,
				 destroy_err.message);
			return REC_STATUS_OK;
		}
	} else if (status != REC_STATUS_OK) {
		*err = destroy_err;
	}
	dead->sessions_destroyed += status == REC_STATUS_OK;
	return status;
}

/* Destroys the sessions of owners that are gone; only a daemon that fails to answer fails. */
static enum rec_status clean_sessions(struct cleanup *cleanup, struct po_error *err)
{
	static struct session_list list;
	enum rec_status status = list_sessions(&list, err);

	for (int i = 0; status == REC_STATUS_OK && i < list.count; i++) {
		const char *name = list.sessions[i].name;
		struct dead_owner *dead;
		struct owner owner;
		int destroyed;

		if (!session_owner(name, &owner) || !owner_gone(&owner) ||
		    !(dead = dead_owner_of(cleanup, &owner)))
			continue;
		destroyed = dead->sessions_destroyed;
		status = destroy_leftover(name, dead, err);
		if (dead->sessions_destroyed > destroyed &&
		    !strncmp(name, session_prefixes[0], strlen(session_prefixes[0])))
			snprintf(dead->trace, sizeof(dead->trace), "%s", list.sessions[i].path);
	}
	return status;
}

/* The value of variable name in process pid's first environment, or "" (into value). */
static void process_environ(pid_t pid, const char *name, char *value, size_t size)
{
	char path[64], environ_text[16384];
	size_t length, name_length = strlen(name);
	FILE *file;

	value[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
	file = fopen(path, "re");
	if (!file)
		return;
	length = fread(environ_text, 1, sizeof(environ_text) - 1, file);
	fclose(file);
	environ_text[length] = '\0';
	for (size_t at = 0; at < length; at += strlen(environ_text + at) + 1)
		if (!strncmp(environ_text + at, name, name_length) &&
		    environ_text[at + name_length] == '=')
			snprintf(value, size, "%s", environ_text + at + name_length + 1);
}

/* The running session daemon, when a profopt-record that is gone started it: its pid. */
static pid_t orphaned_sessiond(struct owner *starter)
{
	pid_t pid = rec_sessiond_pid();
	char path[64], comm[32] = "", tag[sizeof(leftovers.tag)];
	FILE *file;
	int length;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
	file = fopen(path, "re");
	if (file) {
		if (!fgets(comm, sizeof(comm), file))
			comm[0] = '\0';
		fclose(file);
	}
	if (strcmp(comm, "lttng-sessiond\n") != 0)
		return 0;
	process_environ(pid, REC_SESSIOND_OWNER_ENV, tag, sizeof(tag));
	length = parse_tag(tag, starter);
	return length && !tag[length] && owner_gone(starter) ? pid : 0;
}

pid_t rec_sessiond_orphaned(void)
{
	struct owner starter;

	return orphaned_sessiond(&starter);
}

static void append(char *line, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends "; TEXT" to line, or " TEXT" to its first part (after the colon). */
static void append(char *line, size_t size, const char *fmt, ...)
{
	size_t used = strlen(line);
	va_list args;

	if (used + 2 >= size)
		return;
	used += (size_t)snprintf(line + used, size - used, "%s ", line[used - 1] == ':' ? "" : ";");
	va_start(args, fmt);
	vsnprintf(line + used, size - used, fmt, args);
	va_end(args);
}

/* One line for what was cleaned after one owner. */
static void describe(const struct dead_owner *dead, char *line, size_t size)
{
	snprintf(line, size,
		 "cleaned up after profopt-record pid %ld, which ended without doing so:",
		 dead->owner.pid);
	if (dead->sessions_destroyed)
		append(line, size, "destroyed its %d session(s)%s%s%s", dead->sessions_destroyed,
		       dead->trace[0] ? " (its trace " : "", dead->trace,
		       dead->trace[0] ? " is closed now)" : "");
	if (dead->scratch[0])
		append(line, size, "removed its scratch directory %s", dead->scratch);
	if (dead->failure[0])
		append(line, size, "%s", dead->failure);
	if (dead->daemon_pid > 0)
		append(line, size,
		       "the session daemon it started (pid %ld) stops when this recording ends, "
		       "unless another session lives in it",
		       (long)dead->daemon_pid);
}

enum rec_status rec_leftovers_clean(struct rec_leftovers *result, struct po_error *err)
{
	static struct cleanup cleanup;
	struct owner starter;
	pid_t daemon_pid;
	enum rec_status status;

	memset(&cleanup, 0, sizeof(cleanup));
	result->line_count = 0;
	status = clean_sessions(&cleanup, err);
	if (status != REC_STATUS_OK)
		return status;
	clean_scratch_dirs(&cleanup);
	daemon_pid = orphaned_sessiond(&starter);
	if (daemon_pid > 0) {
		struct dead_owner *dead = dead_owner_of(&cleanup, &starter);

		if (dead)
			dead->daemon_pid = daemon_pid;
	}
	for (int i = 0; i < cleanup.owner_count && result->line_count < REC_LEFTOVER_LINES; i++)
		describe(&cleanup.owners[i], result->lines[result->line_count++],
			 sizeof(result->lines[0]));
	return REC_STATUS_OK;
}
