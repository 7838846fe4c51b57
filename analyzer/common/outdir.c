/* outdir.c: the report directory: its manifest, the staging directory and the commit. */
/*
 * profopt-analyze runs as root beside directories other users can write (/tmp). Below the
 * directory that holds the report, every removal, creation, move and write is relative to
 * a directory descriptor, and each path component is opened O_NOFOLLOW | O_DIRECTORY
 * (DIR_FLAGS): a symbolic link, FIFO or device met on the way ends the walk rather than
 * lead out of the report directory, even when a component is swapped while profopt runs.
 * Path strings are kept for messages and for the analysis child only.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "isolate.h"
#include "outdir.h"

#define PO_MANIFEST_HEADER "profopt-report/1"
#define PO_MANIFEST_MAX_BYTES (1024 * 1024)
#define PO_MANIFEST_MAX_FILES 4096
#define PO_MANIFEST_MAX_DEPTH 8
#define PO_TREE_MAX_DEPTH 32 /* how deep a staging directory is removed */
#define PO_STAGING_ATTEMPTS 100
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* The names profopt-analyze writes at the top of a report, checked before the analysis. */
static const char *const report_names[] = {
    "summary.json", "timeline.json", "index.html", "report.pdf", "pipeline.svg", "charts",
};

struct po_outdir {
	char *shown;	/* owned: the path as given, for messages */
	char *path;	/* owned: where the report goes (a symbolic link resolved) */
	char *parent;	/* owned: the directory that holds path */
	char *base;	/* owned: path's last component */
	char *staging;	/* owned: NULL before po_outdir_stage() */
	char *notes;	/* owned: what was left alone, one line each; NULL when nothing was */
	int parent_fd;	/* owned: parent, -1 while it does not exist */
	int staging_fd; /* owned: the staging directory, -1 before po_outdir_stage() */
	bool force;	/* an earlier report may be replaced */
	bool committed; /* the staging directory is in place, or holds the earlier report */
};

/* The files an earlier report lists, relative to its directory. */
struct manifest {
	char **files; /* owned, each owned */
	size_t count;
	size_t capacity;
};
/* out = dir/name; false when it does not fit (the caller skips or fails that entry). */
static bool join_path(char *out, size_t size, const char *dir, const char *name)
{
	int len = snprintf(out, size, "%s%s%s", dir, *dir && *name ? "/" : "", name);

	return len >= 0 && (size_t)len < size;
}

static void manifest_fini(struct manifest *manifest)
{
	for (size_t i = 0; i < manifest->count; i++)
		free(manifest->files[i]);
	free(manifest->files);
	memset(manifest, 0, sizeof(*manifest));
}

static enum po_status manifest_add(struct manifest *manifest, const char *file,
				   struct po_error *err)
{
	if (manifest->count == manifest->capacity) {
		size_t capacity = manifest->capacity ? manifest->capacity * 2 : 32;
		char **files = realloc(manifest->files, capacity * sizeof(*files));

		if (!files) {
			po_error_set(err, "out of memory");
			return PO_STATUS_NOMEM;
		}
		manifest->files = files;
		manifest->capacity = capacity;
	}
	manifest->files[manifest->count] = strdup(file);
	if (!manifest->files[manifest->count]) {
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	manifest->count++;
	return PO_STATUS_OK;
}

/* A path inside the report: relative, no empty, "." or ".." component, not too deep. */
static bool is_safe_relative(const char *path)
{
	int depth = 0;

	if (!*path || *path == '/' || strlen(path) >= 1024)
		return false;
	for (const char *at = path; *at; depth++) {
		size_t len = strcspn(at, "/");

		if (len == 0 || (len == 1 && at[0] == '.') ||
		    (len == 2 && at[0] == '.' && at[1] == '.') || depth >= PO_MANIFEST_MAX_DEPTH)
			return false;
		at += len;
		if (*at == '/' && !*++at)
			return false;
	}
	return true;
}

static bool manifest_lists(const struct manifest *manifest, const char *file)
{
	for (size_t i = 0; i < manifest->count; i++) {
		if (strcmp(manifest->files[i], file) == 0)
			return true;
	}
	return false;
}

/* Whether dir is a directory the report made: one that holds a listed file. */
static bool manifest_implies_dir(const struct manifest *manifest, const char *dir)
{
	size_t len = strlen(dir);

	for (size_t i = 0; i < manifest->count; i++) {
		if (strncmp(manifest->files[i], dir, len) == 0 && manifest->files[i][len] == '/')
			return true;
	}
	return false;
}

static enum po_status manifest_parse(char *text, const char *path, struct manifest *manifest,
				     struct po_error *err)
{
	size_t line_number = 1;
	char *line = strtok(text, "\n");

	if (!line || strcmp(line, PO_MANIFEST_HEADER) != 0) {
		po_error_set(err, "%s: not a profopt report manifest (no \"%s\" first line)", path,
			     PO_MANIFEST_HEADER);
		return PO_STATUS_USAGE;
	}
	while ((line = strtok(NULL, "\n"))) {
		enum po_status status;

		line_number++;
		if (!is_safe_relative(line) || manifest->count >= PO_MANIFEST_MAX_FILES) {
			po_error_set(err,
				     "%s: line %zu is not the relative path of a report file; "
				     "the manifest is damaged",
				     path, line_number);
			return PO_STATUS_USAGE;
		}
		status = manifest_add(manifest, line, err);
		if (status != PO_STATUS_OK)
			return status;
	}
	return PO_STATUS_OK;
}

static bool is_dot(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

/* A directory stream over name in dir_fd ("." for dir_fd itself), not through a link. */
static DIR *opendir_at(int dir_fd, const char *name)
{
	int fd = openat(dir_fd, name, DIR_FLAGS);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;

	if (fd >= 0 && !dir)
		close(fd);
	return dir;
}

/*
 * Opens the directory that holds rel's last component, walking down from root_fd one
 * component at a time (DIR_FLAGS): a link, FIFO or device on the way fails with ELOOP or
 * ENOTDIR. *leaf points into rel. The descriptor is the caller's to close.
 */
static int open_parent_of(int root_fd, const char *rel, const char **leaf)
{
	int fd = openat(root_fd, ".", DIR_FLAGS);
	const char *slash;

	while (fd >= 0 && (slash = strchr(rel, '/'))) {
		char name[NAME_MAX + 1];
		size_t len = (size_t)(slash - rel);
		int next = -1;

		if (len < sizeof(name)) {
			memcpy(name, rel, len);
			name[len] = '\0';
			next = openat(fd, name, DIR_FLAGS);
		}
		close(fd);
		fd = next;
		rel = slash + 1;
	}
	*leaf = rel;
	return fd;
}

/* What an entry is, for messages: "a symbolic link where ... has a directory". */
static const char *kind_of(mode_t mode)
{
	if (S_ISLNK(mode))
		return "symbolic link";
	if (S_ISFIFO(mode))
		return "FIFO (named pipe)";
	if (S_ISSOCK(mode))
		return "socket";
	if (S_ISCHR(mode))
		return "character device";
	if (S_ISBLK(mode))
		return "block device";
	return S_ISDIR(mode) ? "directory" : S_ISREG(mode) ? "regular file" : "special file";
}

/*
 * Whether name in dir_fd is a mark of this user's: a regular file with one link owned by
 * the effective uid. Only that user (or root) can make one; a hard link to a file of
 * theirs has two links.
 */
static bool mark_is_ours(int dir_fd, const char *name)
{
	struct stat st;

	return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	       st.st_uid == geteuid() && st.st_nlink == 1;
}

static void mark_remove(int dir_fd, const char *name)
{
	if (mark_is_ours(dir_fd, name))
		(void)unlinkat(dir_fd, name, 0);
}

/* Creates mark name in dir_fd (replacing one of ours that a killed run left). */
static int mark_create(int dir_fd, const char *name)
{
	int fd;

	mark_remove(dir_fd, name);
	fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* renameat() that fails rather than replace an existing destination. */
static int rename_noreplace_at(int from_fd, const char *from, int to_fd, const char *to)
{
	struct stat st;

	if (renameat2(from_fd, from, to_fd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* A file system without RENAME_NOREPLACE: checked, then renamed. */
	if (fstatat(to_fd, to, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		return -1;
	}
	return renameat(from_fd, from, to_fd, to);
}

/* Removes the empty directory name of parent_fd if it is still the one fd holds. */
static int remove_dir_at(int parent_fd, const char *name, int fd)
{
	struct stat named, held;

	if (fstatat(parent_fd, name, &named, AT_SYMLINK_NOFOLLOW) != 0 || fstat(fd, &held) != 0)
		return -1;
	if (named.st_dev != held.st_dev || named.st_ino != held.st_ino) {
		errno = EBUSY; /* another directory took its name */
		return -1;
	}
	return unlinkat(parent_fd, name, AT_REMOVEDIR);
}

/*
 * Empties directory name of at_fd, which profopt made: directories are walked (DIR_FLAGS),
 * every other entry (a link, a FIFO, a device too) is unlinked as a name, never opened or
 * followed. What lies deeper than PO_TREE_MAX_DEPTH stays.
 */
static void empty_tree(int at_fd, const char *name, int depth)
{
	DIR *dir = opendir_at(at_fd, name); /* owned */
	struct dirent *entry;

	while (dir && (entry = readdir(dir))) {
		struct stat st;

		if (is_dot(entry->d_name) ||
		    fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISDIR(st.st_mode) && depth < PO_TREE_MAX_DEPTH)
			empty_tree(dirfd(dir), entry->d_name, depth + 1);
		(void)unlinkat(dirfd(dir), entry->d_name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0);
	}
	if (dir)
		closedir(dir);
}

/* Removes a staging directory profopt made: name in parent_fd, held open as fd. */
static void remove_tree_at(int parent_fd, const char *name, int fd)
{
	empty_tree(fd, ".", 0);
	(void)remove_dir_at(parent_fd, name, fd);
}

static bool directory_is_empty(int dir_fd)
{
	DIR *dir = opendir_at(dir_fd, "."); /* owned */
	struct dirent *entry;
	bool empty = true;

	if (!dir)
		return false;
	while (empty && (entry = readdir(dir)))
		empty = is_dot(entry->d_name);
	closedir(dir);
	return empty;
}

/*
 * Reads the whole of name in dir_fd, a regular file of at most max_bytes, without
 * following a link or blocking on a FIFO; *found is false (and OK returned) when there is
 * none. label names the file in messages.
 */
static enum po_status read_small_file_at(int dir_fd, const char *name, const char *label,
					 size_t max_bytes, char **text, size_t *size, bool *found,
					 struct po_error *err)
{
	int fd = openat(dir_fd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	ssize_t got = 0;

	*text = NULL;
	*found = fd >= 0 || errno != ENOENT;
	if (!*found)
		return PO_STATUS_OK;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size > max_bytes) {
		po_error_set(err, "%s: %s", label,
			     fd < 0 || errno == ELOOP ? strerror(errno)
			     : !S_ISREG(st.st_mode)   ? "not a regular file"
						      : "too large for a report manifest");
		if (fd >= 0)
			close(fd);
		return PO_STATUS_USAGE;
	}
	*text = malloc((size_t)st.st_size + 1);
	if (!*text) {
		close(fd);
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	got = read(fd, *text, (size_t)st.st_size);
	close(fd);
	if (got != st.st_size) {
		po_error_set(err, "%s: cannot be read: %s", label,
			     got < 0 ? strerror(errno) : "it changed while it was read");
		free(*text);
		*text = NULL;
		return PO_STATUS_USAGE;
	}
	(*text)[got] = '\0';
	*size = (size_t)got;
	return PO_STATUS_OK;
}

/*
 * Reads the manifest of dir_fd (dir names it in messages); *found is false (and OK
 * returned) when there is none.
 */
static enum po_status manifest_read(int dir_fd, const char *dir, struct manifest *manifest,
				    bool *found, struct po_error *err)
{
	char label[PATH_MAX];
	char *text = NULL; /* owned */
	enum po_status status;
	size_t size = 0;

	if (!join_path(label, sizeof(label), dir, PO_OUTDIR_MANIFEST)) {
		po_error_set(err, "%s: path too long", dir);
		return PO_STATUS_USAGE;
	}
	status = read_small_file_at(dir_fd, PO_OUTDIR_MANIFEST, label, PO_MANIFEST_MAX_BYTES, &text,
				    &size, found, err);
	if (status == PO_STATUS_OK && *found && memchr(text, '\0', size)) {
		po_error_set(err, "%s: not a profopt report manifest (binary data)", label);
		status = PO_STATUS_USAGE;
	}
	if (status == PO_STATUS_OK && *found)
		status = manifest_parse(text, label, manifest, err);
	free(text);
	if (status != PO_STATUS_OK)
		manifest_fini(manifest);
	return status;
}

static bool name_in(const char *name, const char *const *names, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		if (strcmp(name, names[i]) == 0)
			return true;
	}
	return false;
}

/* "DIR/REL is not part of the earlier report ..." */
static enum po_status not_in_report(const char *shown, const char *rel, struct po_error *err)
{
	po_error_set(err,
		     "%s/%s is not part of the earlier report (its %s does not list it) and the "
		     "new report would replace it; move it out of %s first",
		     shown, rel, PO_OUTDIR_MANIFEST, shown);
	return PO_STATUS_USAGE;
}

/* "DIR/REL is a symbolic link where the earlier report has a directory ..." */
static enum po_status not_plain(const char *shown, const char *rel, mode_t mode,
				const char *expected, struct po_error *err)
{
	po_error_set(err,
		     "%s/%s is a %s where the earlier report has a %s; --force replaces only the "
		     "report's own files and directories and goes through no link: move it out "
		     "of %s first",
		     shown, rel, kind_of(mode), expected, shown);
	return PO_STATUS_USAGE;
}

/* What the entries of an earlier report are checked against. */
struct report_check {
	const char *shown;		 /* weak: the report directory, for messages */
	const struct manifest *manifest; /* weak: the earlier report's */
	const char *const *names;	 /* weak: the top-level names the new report writes */
	size_t name_count;
};

static enum po_status check_report_dir(int at_fd, const char *name, const char *rel, int depth,
				       const struct report_check *check, struct po_error *err);

/*
 * One entry (name in dir_fd, rel from the top) of an earlier report: a file the manifest
 * lists must be a regular file, a directory its files imply a directory, walked in turn
 * (anything else there, a link above all, is refused: --force would remove through it).
 * Inside a directory the report made every entry must be the report's; at the top the
 * user's entries stay, but none may have a name the new report writes.
 */
static enum po_status check_report_entry(int dir_fd, const char *name, const char *rel, int depth,
					 const struct report_check *check, struct po_error *err)
{
	struct stat st;

	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return PO_STATUS_OK; /* gone meanwhile */
	if (manifest_lists(check->manifest, rel)) {
		return S_ISREG(st.st_mode) ? PO_STATUS_OK
					   : not_plain(check->shown, rel, st.st_mode, "file", err);
	}
	if (manifest_implies_dir(check->manifest, rel) && !S_ISDIR(st.st_mode))
		return not_plain(check->shown, rel, st.st_mode, "directory", err);
	if (manifest_implies_dir(check->manifest, rel) && depth + 1 < PO_MANIFEST_MAX_DEPTH)
		return check_report_dir(dir_fd, name, rel, depth + 1, check, err);
	if (depth > 0 || name_in(name, check->names, check->name_count))
		return not_in_report(check->shown, rel, err);
	return PO_STATUS_OK;
}

/* The entries of the earlier report's directory rel (name in at_fd; "" is the top). */
static enum po_status check_report_dir(int at_fd, const char *name, const char *rel, int depth,
				       const struct report_check *check, struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;
	DIR *dir = opendir_at(at_fd, name); /* owned */
	struct dirent *entry;

	if (!dir) {
		po_error_set(err, "%s%s%s: cannot be read: %s", check->shown, *rel ? "/" : "", rel,
			     strerror(errno));
		return PO_STATUS_USAGE;
	}
	while (status == PO_STATUS_OK && (entry = readdir(dir))) {
		char child[PATH_MAX];

		if (is_dot(entry->d_name) ||
		    (depth == 0 && strcmp(entry->d_name, PO_OUTDIR_MANIFEST) == 0))
			continue;
		if (!join_path(child, sizeof(child), rel, entry->d_name))
			status = not_in_report(check->shown, entry->d_name, err);
		else
			status =
			    check_report_entry(dirfd(dir), entry->d_name, child, depth, check, err);
	}
	closedir(dir);
	return status;
}

/*
 * The report directory dir_fd exists: it can take the new report when it is empty, or
 * holds a valid earlier report (with force) none of whose entries the new report would
 * replace without its manifest's leave.
 */
static enum po_status check_existing_at(const struct po_outdir *outdir, int dir_fd, bool force,
					const char *const *names, size_t name_count,
					struct po_error *err)
{
	struct manifest manifest = {0};
	enum po_status status;
	bool found;

	status = manifest_read(dir_fd, outdir->path, &manifest, &found, err);
	if (status != PO_STATUS_OK) {
		po_error_prepend(err, "the output directory %s holds a damaged report",
				 outdir->shown);
		return status;
	}
	if (!found && !directory_is_empty(dir_fd)) {
		po_error_set(err,
			     "%s is not empty and holds no profopt report (no %s manifest); "
			     "choose another -o: profopt replaces only what it wrote",
			     outdir->shown, PO_OUTDIR_MANIFEST);
		status = PO_STATUS_USAGE;
	} else if (found && !force) {
		po_error_set(err, "%s holds an earlier report; pass --force to replace it",
			     outdir->shown);
		status = PO_STATUS_USAGE;
	} else if (found) {
		struct report_check check = {outdir->shown, &manifest, names, name_count};

		status = check_report_dir(dir_fd, ".", "", 0, &check, err);
	}
	manifest_fini(&manifest);
	return status;
}

/*
 * Whether the report directory can take the new report, whose top-level entries are
 * names: absent, empty, or a valid earlier report (with force) none of whose other
 * entries the new report would replace.
 */
static enum po_status check_existing(const struct po_outdir *outdir, bool force,
				     const char *const *names, size_t name_count,
				     struct po_error *err)
{
	enum po_status status;
	struct stat st;
	int dir_fd;

	if (outdir->parent_fd < 0 ||
	    fstatat(outdir->parent_fd, outdir->base, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return PO_STATUS_OK; /* absent; creating it tells why it cannot be */
	if (!S_ISDIR(st.st_mode)) {
		po_error_set(err, "the output path %s exists and is not a directory",
			     outdir->shown);
		return PO_STATUS_USAGE;
	}
	dir_fd = openat(outdir->parent_fd, outdir->base, DIR_FLAGS);
	if (dir_fd < 0) {
		po_error_set(err, "%s: cannot be read: %s", outdir->shown, strerror(errno));
		return PO_STATUS_USAGE;
	}
	status = check_existing_at(outdir, dir_fd, force, names, name_count, err);
	close(dir_fd);
	return status;
}

/* The start time of process pid (clock ticks after boot, field 22 of /proc/PID/stat). */
static bool start_time_of(pid_t pid, unsigned long long *start)
{
	char path[64], text[1024];
	const char *at;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	got = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (got <= 0)
		return false;
	text[got] = '\0';
	/* The command name (field 2) may hold spaces and parentheses: count from its end. */
	at = strrchr(text, ')');
	for (int field = 2; at && field < 22; field++) {
		at = strchr(at + 1, ' ');
	}
	if (!at)
		return false;
	*start = strtoull(at + 1, NULL, 10);
	return true;
}

/*
 * Whether the run that made a staging directory is gone: no process has its pid, or the
 * one that has it started at another time. Anything uncertain keeps the directory.
 */
static bool run_is_gone(pid_t pid, unsigned long long start)
{
	unsigned long long current_start;

	if (pid <= 0)
		return false;
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return true;
	return start_time_of(pid, &current_start) && current_start != start;
}

/* Parses ".BASE.profopt-PID-START-XXXXXX", optionally followed by "-old". */
static bool parse_staging_name(const char *name, const char *base, pid_t *pid,
			       unsigned long long *start)
{
	static const char tag[] = ".profopt-";
	size_t base_len = strlen(base);
	const char *rest;
	char *end;
	long pid_value;

	if (name[0] != '.' || strncmp(name + 1, base, base_len) != 0 ||
	    strncmp(name + 1 + base_len, tag, sizeof(tag) - 1) != 0)
		return false;
	rest = name + 1 + base_len + sizeof(tag) - 1;
	if (*rest < '0' || *rest > '9')
		return false;
	pid_value = strtol(rest, &end, 10);
	if (*end != '-' || end[1] < '0' || end[1] > '9' || pid_value <= 0 || pid_value > INT_MAX)
		return false;
	*start = strtoull(end + 1, &end, 10);
	if (*end != '-' || strlen(end + 1) < 6)
		return false;
	rest = end + 1 + 6;
	*pid = (pid_t)pid_value;
	return *rest == '\0' || strcmp(rest, "-old") == 0;
}

/* Appends one line to outdir's notes (best effort: a note lost to memory is not an error). */
static void note(struct po_outdir *outdir, const char *fmt, ...) PO_PRINTF(2, 3);

static void note(struct po_outdir *outdir, const char *fmt, ...)
{
	char *line = NULL, *joined = NULL;
	va_list args;
	int len;

	va_start(args, fmt);
	len = vasprintf(&line, fmt, args);
	va_end(args);
	if (len < 0)
		return;
	if (asprintf(&joined, "%s%s%s", outdir->notes ? outdir->notes : "",
		     outdir->notes ? "\n" : "", line) >= 0) {
		free(outdir->notes);
		outdir->notes = joined;
	}
	free(line);
}

/* profopt's own names at the top of a report directory: its manifest and marks. */
static bool is_own_name(const char *name)
{
	return is_dot(name) || strcmp(name, PO_OUTDIR_MANIFEST) == 0 ||
	       strcmp(name, PO_OUTDIR_STAGING_MARK) == 0 ||
	       strcmp(name, PO_OUTDIR_REPLACED_MARK) == 0;
}

/*
 * Moves the user's entries of the earlier report old_fd back into the report directory
 * new_fd: all but a regular file the manifest lists or a directory its files imply (a
 * link where the report had a directory is the user's, and goes back as a link).
 */
static void move_user_entries_back(int old_fd, int new_fd, const struct manifest *manifest)
{
	DIR *dir = opendir_at(old_fd, "."); /* owned */
	struct dirent *entry;

	while (dir && (entry = readdir(dir))) {
		const char *name = entry->d_name;
		struct stat st;

		if (is_own_name(name) || fstatat(old_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    (S_ISREG(st.st_mode) && manifest_lists(manifest, name)) ||
		    (S_ISDIR(st.st_mode) && manifest_implies_dir(manifest, name)))
			continue;
		(void)rename_noreplace_at(old_fd, name, new_fd,
					  name); /* what stays is named later */
	}
	if (dir)
		closedir(dir);
}

/* Removes the directories that held file below dir_fd, deepest first, while empty. */
static void remove_parents(int dir_fd, const char *file)
{
	char path[PATH_MAX];
	char *slash;

	if (!join_path(path, sizeof(path), file, ""))
		return;
	while ((slash = strrchr(path, '/'))) {
		const char *leaf;
		int fd;
		bool removed;

		*slash = '\0';
		fd = open_parent_of(dir_fd, path, &leaf);
		removed = fd >= 0 && unlinkat(fd, leaf, AT_REMOVEDIR) == 0;
		if (fd >= 0)
			close(fd);
		if (!removed)
			break;
	}
}

/*
 * Removes the listed regular files below dir_fd, then the directories that held them. A
 * listed path that meets a link, FIFO or device is skipped: it stays, and so does the
 * directory, which the caller then names.
 */
static void remove_listed(int dir_fd, const struct manifest *manifest)
{
	for (size_t i = 0; i < manifest->count; i++) {
		const char *leaf;
		int fd = open_parent_of(dir_fd, manifest->files[i], &leaf);
		struct stat st;

		if (fd < 0)
			continue;
		if (fstatat(fd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			(void)unlinkat(fd, leaf, 0);
		close(fd);
	}
	for (size_t i = 0; i < manifest->count; i++)
		remove_parents(dir_fd, manifest->files[i]);
}

/*
 * An earlier report moved out of the way (old_fd, named old_name beside the report
 * directory): the user's entries in it go back into the report directory new_fd, the
 * report's files go, then the directory. What cannot be moved back stays in it, which is
 * then kept and named in the error.
 */
static enum po_status dispose_old_report(const struct po_outdir *outdir, const char *old_name,
					 int old_fd, int new_fd, struct po_error *err)
{
	struct manifest manifest = {0};
	char old_dir[PATH_MAX];
	enum po_status status;
	bool found;

	(void)join_path(old_dir, sizeof(old_dir), outdir->parent, old_name); /* for messages */
	status = manifest_read(old_fd, old_dir, &manifest, &found, err);
	if (status == PO_STATUS_OK && !found) {
		po_error_set(err, "%s: no manifest", old_dir);
		status = PO_STATUS_OUTPUT;
	}
	if (status != PO_STATUS_OK) {
		po_error_prepend(err, "the earlier report was left in %s", old_dir);
		return status == PO_STATUS_NOMEM ? status : PO_STATUS_OUTPUT;
	}
	move_user_entries_back(old_fd, new_fd, &manifest);
	remove_listed(old_fd, &manifest);
	manifest_fini(&manifest);
	(void)unlinkat(old_fd, PO_OUTDIR_MANIFEST, 0);
	mark_remove(old_fd, PO_OUTDIR_REPLACED_MARK);
	mark_remove(old_fd, PO_OUTDIR_STAGING_MARK);
	if (remove_dir_at(outdir->parent_fd, old_name, old_fd) != 0) {
		po_error_set(err,
			     "the new report is in place, but %s keeps what could not be moved "
			     "back into %s: %s",
			     old_dir, outdir->path, strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	return PO_STATUS_OK;
}

/* What a dead run's staging directory holds, by its mark. */
enum staging_kind {
	STAGING_UNMARKED,   /* no mark of ours: not provably profopt's */
	STAGING_INCOMPLETE, /* PO_OUTDIR_STAGING_MARK: a report never moved into place */
	STAGING_REPLACED,   /* PO_OUTDIR_REPLACED_MARK: an earlier report moved aside */
};

/*
 * Opens staging directory name of parent_fd if it carries the proof that profopt made
 * it: a directory (not a link to one) owned by the effective uid and writable by no one
 * else, with a mark of the same owner. Otherwise returns -1 and says why in why (empty
 * when it is gone). Anyone who can write the parent can make the rest of a staging
 * directory, but not these.
 */
static int open_own_staging(int parent_fd, const char *name, enum staging_kind *kind, char *why,
			    size_t why_size)
{
	int fd = openat(parent_fd, name, DIR_FLAGS);
	struct stat st;

	*why = '\0';
	if (fd < 0) {
		if (errno != ENOENT)
			snprintf(why, why_size, "%s",
				 errno == ELOOP || errno == ENOTDIR
				     ? "not a directory (a symbolic link or another kind of file)"
				     : strerror(errno));
		return -1;
	}
	*kind = mark_is_ours(fd, PO_OUTDIR_REPLACED_MARK)  ? STAGING_REPLACED
		: mark_is_ours(fd, PO_OUTDIR_STAGING_MARK) ? STAGING_INCOMPLETE
							   : STAGING_UNMARKED;
	if (fstat(fd, &st) != 0)
		snprintf(why, why_size, "%s", strerror(errno));
	else if (st.st_uid != geteuid())
		snprintf(why, why_size,
			 "not owned by uid %u, which runs profopt-analyze, but by uid %u",
			 (unsigned)geteuid(), (unsigned)st.st_uid);
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		snprintf(why, why_size, "writable by others than its owner (mode %04o)",
			 (unsigned)(st.st_mode & 07777));
	else if (*kind == STAGING_UNMARKED)
		snprintf(why, why_size, "no %s or %s mark of uid %u (a regular file with one link)",
			 PO_OUTDIR_STAGING_MARK, PO_OUTDIR_REPLACED_MARK, (unsigned)geteuid());
	if (!*why)
		return fd;
	close(fd);
	return -1;
}

/*
 * An earlier report that a dead run had moved aside (name, held as fd): put back when
 * nothing is in place, else disposed of as the commit would have, into the report
 * directory, whose staging mark (left there when the run died just after the swap) goes.
 */
static void finish_replaced(const struct po_outdir *outdir, const char *name, int fd)
{
	struct po_error ignored = {{0}};
	int dir_fd;

	if (rename_noreplace_at(outdir->parent_fd, name, outdir->parent_fd, outdir->base) == 0) {
		mark_remove(fd, PO_OUTDIR_REPLACED_MARK);
		return;
	}
	dir_fd = errno == EEXIST ? openat(outdir->parent_fd, outdir->base, DIR_FLAGS) : -1;
	if (dir_fd < 0)
		return;
	mark_remove(dir_fd, PO_OUTDIR_STAGING_MARK);
	(void)dispose_old_report(outdir, name, fd, dir_fd, &ignored);
	close(dir_fd);
}

/*
 * Finishes what a dead run left in staging directory `name`: an incomplete report is
 * removed; an earlier report it had moved aside is disposed of or put back. A directory
 * without profopt's proof stays, and a note says why.
 */
static void recover_one(struct po_outdir *outdir, const char *name)
{
	enum staging_kind kind = STAGING_UNMARKED;
	char why[256];
	int fd = open_own_staging(outdir->parent_fd, name, &kind, why, sizeof(why));

	if (fd < 0 && *why)
		note(outdir,
		     "left alone %s/%s, named like the staging directory of a run that is "
		     "gone: %s",
		     outdir->parent, name, why);
	if (fd < 0)
		return;
	if (kind == STAGING_INCOMPLETE)
		remove_tree_at(outdir->parent_fd, name, fd);
	else
		finish_replaced(outdir, name, fd);
	close(fd);
}

/*
 * Recovers the staging directories beside the report directory whose run is gone. Best
 * effort: what cannot be recovered now is left for the next run, and does not stop this
 * one.
 */
static void recover_dead_runs(struct po_outdir *outdir)
{
	struct manifest names = {0}; /* the candidates, collected before any is moved */
	struct po_error ignored = {{0}};
	struct dirent *entry;
	DIR *dir = outdir->parent_fd >= 0 ? opendir_at(outdir->parent_fd, ".") : NULL; /* owned */

	while (dir && (entry = readdir(dir))) {
		unsigned long long start;
		pid_t pid;

		if (parse_staging_name(entry->d_name, outdir->base, &pid, &start) &&
		    run_is_gone(pid, start) &&
		    manifest_add(&names, entry->d_name, &ignored) != PO_STATUS_OK)
			break;
	}
	if (dir)
		closedir(dir);
	for (size_t i = 0; i < names.count; i++)
		recover_one(outdir, names.files[i]);
	manifest_fini(&names);
}

/* The path to work on: a symbolic link, "." or ".." resolved; no trailing slash. */
static enum po_status resolve_path(struct po_outdir *outdir, struct po_error *err)
{
	char copy[PATH_MAX];
	const char *base;
	struct stat st;
	size_t len;

	if (snprintf(copy, sizeof(copy), "%s", outdir->shown) >= (int)sizeof(copy)) {
		po_error_set(err, "the output path is too long: %s", outdir->shown);
		return PO_STATUS_USAGE;
	}
	len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	base = strrchr(copy, '/') ? strrchr(copy, '/') + 1 : copy;
	if (lstat(copy, &st) == 0 && (S_ISLNK(st.st_mode) || is_dot(base) || !*base)) {
		outdir->path = realpath(copy, NULL);
		if (!outdir->path) {
			po_error_set(err, "the output path %s cannot be resolved: %s",
				     outdir->shown, strerror(errno));
			return errno == ENOMEM ? PO_STATUS_NOMEM : PO_STATUS_USAGE;
		}
	} else {
		outdir->path = strdup(copy);
	}
	return outdir->path ? PO_STATUS_OK : PO_STATUS_NOMEM;
}

static enum po_status split_path(struct po_outdir *outdir, struct po_error *err)
{
	char *parent_copy = strdup(outdir->path);
	char *base_copy = strdup(outdir->path);

	if (parent_copy && base_copy) {
		outdir->parent = strdup(dirname(parent_copy));
		outdir->base = strdup(basename(base_copy));
	}
	free(parent_copy);
	free(base_copy);
	if (!outdir->parent || !outdir->base) {
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	return PO_STATUS_OK;
}

enum po_status po_outdir_open(const char *path, bool force, struct po_outdir **out,
			      struct po_error *err)
{
	struct po_outdir *outdir = calloc(1, sizeof(*outdir));
	enum po_status status = PO_STATUS_NOMEM;

	*out = NULL;
	if (outdir) {
		outdir->parent_fd = -1;
		outdir->staging_fd = -1;
	}
	if (outdir && (outdir->shown = strdup(path))) {
		outdir->force = force;
		status = resolve_path(outdir, err);
	} else {
		po_error_set(err, "out of memory");
	}
	if (status == PO_STATUS_OK)
		status = split_path(outdir, err);
	if (status == PO_STATUS_OK) {
		/* The user's path to it, resolved as any path is; -1 while it does not exist. */
		outdir->parent_fd = open(outdir->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		recover_dead_runs(outdir);
		status = check_existing(outdir, force, report_names,
					sizeof(report_names) / sizeof(report_names[0]), err);
	}
	if (status != PO_STATUS_OK) {
		po_outdir_destroy(outdir);
		return status;
	}
	*out = outdir;
	return PO_STATUS_OK;
}

const char *po_outdir_borrow_notes(const struct po_outdir *outdir)
{
	return outdir->notes;
}

/*
 * Opens directory dir, creating what is missing of it (mkdir -p). The part that exists is
 * the user's path, resolved as any path is; each directory created here is opened without
 * following a link, so a link planted in its place meanwhile is not followed.
 */
static int open_directories(const char *dir)
{
	char path[PATH_MAX];
	char *name, *next;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s", dir) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(*path == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (name = strtok_r(path, "/", &next); fd >= 0 && name;
	     name = strtok_r(NULL, "/", &next)) {
		int child = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (child < 0 && errno == ENOENT &&
		    (mkdirat(fd, name, 0755) == 0 || errno == EEXIST))
			child = openat(fd, name, DIR_FLAGS);
		close(fd);
		fd = child;
	}
	return fd;
}

/* Six characters of [A-Za-z0-9] for a staging directory's name, as mkdtemp() makes. */
static void random_suffix(char suffix[7])
{
	static const char letters[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char bytes[6];
	struct timespec now;

	if (getrandom(bytes, sizeof(bytes), GRND_NONBLOCK) != (ssize_t)sizeof(bytes)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		for (size_t i = 0; i < sizeof(bytes); i++)
			bytes[i] = (unsigned char)((unsigned long)now.tv_nsec >> (i * 5));
	}
	for (size_t i = 0; i < sizeof(bytes); i++)
		suffix[i] = letters[bytes[i] % (sizeof(letters) - 1)];
	suffix[6] = '\0';
}

/*
 * mkdtemp() beside the report directory, relative to parent_fd:
 * ".BASE.profopt-PID-START-XXXXXX", mode 0700, opened as staging_fd.
 */
static enum po_status make_staging(struct po_outdir *outdir, struct po_error *err)
{
	unsigned long long start = 0;
	char name[PATH_MAX];

	(void)start_time_of(getpid(), &start);
	for (int attempt = 0; attempt < PO_STAGING_ATTEMPTS; attempt++) {
		char suffix[7];

		random_suffix(suffix);
		snprintf(name, sizeof(name), ".%s.profopt-%d-%llu-%s", outdir->base, (int)getpid(),
			 start, suffix);
		if (mkdirat(outdir->parent_fd, name, 0700) == 0)
			break;
		if (errno != EEXIST || attempt + 1 == PO_STAGING_ATTEMPTS) {
			po_error_set(err, "Failed to create a temporary directory beside %s: %s",
				     outdir->shown, strerror(errno));
			return PO_STATUS_OUTPUT;
		}
	}
	if (asprintf(&outdir->staging, "%s/%s", outdir->parent, name) < 0) {
		outdir->staging = NULL;
		(void)unlinkat(outdir->parent_fd, name, AT_REMOVEDIR);
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	outdir->staging_fd = openat(outdir->parent_fd, name, DIR_FLAGS);
	return PO_STATUS_OK;
}

static const char *staging_name(const struct po_outdir *outdir)
{
	return strrchr(outdir->staging, '/') + 1;
}

enum po_status po_outdir_stage(struct po_outdir *outdir, struct po_error *err)
{
	enum po_status status;

	if (outdir->parent_fd < 0)
		outdir->parent_fd = open_directories(outdir->parent);
	if (outdir->parent_fd < 0) {
		po_error_set(err, "Failed to create the parent directories of %s: %s",
			     outdir->shown, strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	status = make_staging(outdir, err);
	if (status == PO_STATUS_OK &&
	    (outdir->staging_fd < 0 ||
	     mark_create(outdir->staging_fd, PO_OUTDIR_STAGING_MARK) != 0)) {
		po_error_set(err, "Failed to create %s/%s: %s", outdir->staging,
			     PO_OUTDIR_STAGING_MARK, strerror(errno));
		status = PO_STATUS_OUTPUT; /* po_outdir_destroy() removes the directory */
	}
	return status;
}

bool po_outdir_holds_report(const struct po_outdir *outdir)
{
	struct stat st;

	return outdir->parent_fd >= 0 &&
	       fstatat(outdir->parent_fd, outdir->base, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

const char *po_outdir_borrow_staging(const struct po_outdir *outdir)
{
	return outdir->staging;
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Adds the regular files below directory name of at_fd (rel from the staging directory
 * staging, which names it in messages) to list, as paths relative to the staging directory.
 */
static enum po_status list_files(int at_fd, const char *name, const char *staging, const char *rel,
				 int depth, struct manifest *list, struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;
	DIR *handle = opendir_at(at_fd, name); /* owned */
	struct dirent *entry;

	if (!handle) {
		po_error_set(err, "Failed to list %s%s%s: %s", staging, *rel ? "/" : "", rel,
			     strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	while (status == PO_STATUS_OK && (entry = readdir(handle))) {
		char child[PATH_MAX];
		struct stat st;

		if ((depth == 0 && is_own_name(entry->d_name)) || is_dot(entry->d_name) ||
		    !join_path(child, sizeof(child), rel, entry->d_name) ||
		    fstatat(dirfd(handle), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISREG(st.st_mode))
			status = manifest_add(list, child, err);
		else if (S_ISDIR(st.st_mode) && depth + 1 < PO_MANIFEST_MAX_DEPTH)
			status = list_files(dirfd(handle), entry->d_name, staging, child, depth + 1,
					    list, err);
	}
	closedir(handle);
	return status;
}

static enum po_status write_manifest(const struct po_outdir *outdir, struct manifest *files,
				     struct po_error *err)
{
	int fd = openat(outdir->staging_fd, PO_OUTDIR_MANIFEST,
			O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	FILE *file = fd >= 0 ? fdopen(fd, "w") : NULL; /* owned */
	bool ok;

	qsort(files->files, files->count, sizeof(*files->files), compare_strings);
	if (!file) {
		po_error_set(err, "Failed to write %s/%s: %s", outdir->staging, PO_OUTDIR_MANIFEST,
			     strerror(errno));
		if (fd >= 0)
			close(fd);
		return PO_STATUS_OUTPUT;
	}
	ok = fprintf(file, "%s\n", PO_MANIFEST_HEADER) > 0;
	for (size_t i = 0; ok && i < files->count; i++)
		ok = fprintf(file, "%s\n", files->files[i]) > 0;
	ok = fflush(file) == 0 && ok;
	if (fclose(file) != 0 || !ok) {
		po_error_set(err, "Failed to write %s/%s: %s", outdir->staging, PO_OUTDIR_MANIFEST,
			     strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	return PO_STATUS_OK;
}

/* The top-level names of the staging directory (what the new report brings). */
static enum po_status list_top_names(const struct po_outdir *outdir, struct manifest *names,
				     struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;
	DIR *handle = opendir_at(outdir->staging_fd, "."); /* owned */
	struct dirent *entry;

	if (!handle) {
		po_error_set(err, "Failed to list %s: %s", outdir->staging, strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	while (status == PO_STATUS_OK && (entry = readdir(handle))) {
		if (!is_dot(entry->d_name) && strcmp(entry->d_name, PO_OUTDIR_STAGING_MARK) != 0)
			status = manifest_add(names, entry->d_name, err);
	}
	closedir(handle);
	return status;
}

/*
 * The report is in place and the earlier one is old_name (held as old_fd): the new
 * report's staging mark goes, then the earlier report.
 */
static enum po_status finish_swap(struct po_outdir *outdir, const char *old_name, int old_fd,
				  struct po_error *err)
{
	outdir->committed = true;
	mark_remove(outdir->staging_fd, PO_OUTDIR_STAGING_MARK);
	return dispose_old_report(outdir, old_name, old_fd, outdir->staging_fd, err);
}

/* Swaps in two renames, where the file system has no RENAME_EXCHANGE. */
static enum po_status swap_by_renames(struct po_outdir *outdir, int dir_fd, struct po_error *err)
{
	int parent_fd = outdir->parent_fd;
	char aside[PATH_MAX];

	snprintf(aside, sizeof(aside), "%s-old", staging_name(outdir));
	if (renameat(parent_fd, outdir->base, parent_fd, aside) != 0) {
		po_error_set(err, "Failed to move the earlier report %s aside: %s", outdir->shown,
			     strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	if (rename_noreplace_at(parent_fd, staging_name(outdir), parent_fd, outdir->base) != 0) {
		po_error_set(err, "Failed to move the report into %s: %s", outdir->shown,
			     strerror(errno));
		(void)rename_noreplace_at(parent_fd, aside, parent_fd, outdir->base);
		return PO_STATUS_OUTPUT;
	}
	return finish_swap(outdir, aside, dir_fd, err);
}

/*
 * Swaps the staging directory with the earlier report dir_fd, which is marked as replaced
 * first: whenever the run dies, the directory at the staging name carries a mark that says
 * what it holds.
 */
static enum po_status swap_with_earlier(struct po_outdir *outdir, int dir_fd, struct po_error *err)
{
	enum po_status status;

	if (mark_create(dir_fd, PO_OUTDIR_REPLACED_MARK) != 0) {
		po_error_set(err, "Failed to create %s/%s: %s", outdir->shown,
			     PO_OUTDIR_REPLACED_MARK, strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	if (renameat2(outdir->parent_fd, staging_name(outdir), outdir->parent_fd, outdir->base,
		      RENAME_EXCHANGE) == 0)
		return finish_swap(outdir, staging_name(outdir), dir_fd, err);
	if (errno != EINVAL && errno != ENOSYS) {
		po_error_set(err, "Failed to move the report into %s: %s", outdir->shown,
			     strerror(errno));
		status = PO_STATUS_OUTPUT;
	} else {
		status = swap_by_renames(outdir, dir_fd, err);
	}
	if (!outdir->committed)
		mark_remove(dir_fd, PO_OUTDIR_REPLACED_MARK);
	return status;
}

/* Moves the staging directory where no report directory is. */
static enum po_status move_to_absent(struct po_outdir *outdir, struct po_error *err)
{
	if (rename_noreplace_at(outdir->parent_fd, staging_name(outdir), outdir->parent_fd,
				outdir->base) != 0) {
		po_error_set(err, "Failed to move the report into %s: %s", outdir->shown,
			     strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	outdir->committed = true;
	mark_remove(outdir->staging_fd, PO_OUTDIR_STAGING_MARK);
	return PO_STATUS_OK;
}

/* The rename(s) of the commit; the terminating signals are held back. */
static enum po_status move_into_place(struct po_outdir *outdir, struct po_error *err)
{
	int dir_fd = openat(outdir->parent_fd, outdir->base, DIR_FLAGS);
	enum po_status status;

	if (dir_fd >= 0 && directory_is_empty(dir_fd)) {
		if (unlinkat(outdir->parent_fd, outdir->base, AT_REMOVEDIR) != 0) {
			po_error_set(err, "Failed to replace the empty directory %s: %s",
				     outdir->shown, strerror(errno));
			close(dir_fd);
			return PO_STATUS_OUTPUT;
		}
		close(dir_fd);
		dir_fd = -1;
	}
	if (dir_fd < 0)
		return move_to_absent(outdir, err);
	status = swap_with_earlier(outdir, dir_fd, err);
	close(dir_fd);
	return status;
}

/* The mode the report directory keeps: the earlier one's, else 0755. */
static mode_t report_mode(const struct po_outdir *outdir)
{
	struct stat st;

	if (fstatat(outdir->parent_fd, outdir->base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st.st_mode))
		return st.st_mode & 07777;
	return 0755;
}

enum po_status po_outdir_commit(struct po_outdir *outdir, struct po_error *err)
{
	struct manifest files = {0}, names = {0};
	mode_t mode = report_mode(outdir);
	enum po_status status;

	status = list_files(outdir->staging_fd, ".", outdir->staging, "", 0, &files, err);
	if (status == PO_STATUS_OK)
		status = write_manifest(outdir, &files, err);
	if (status == PO_STATUS_OK)
		status = list_top_names(outdir, &names, err);
	if (status == PO_STATUS_OK)
		status = check_existing(outdir, outdir->force, (const char *const *)names.files,
					names.count, err);
	manifest_fini(&files);
	manifest_fini(&names);
	if (status != PO_STATUS_OK)
		return status;
	/* Writable by others only once its mark is gone: a dead run's would not be recovered. */
	(void)fchmod(outdir->staging_fd, mode & ~(mode_t)(S_IWGRP | S_IWOTH));
	po_signals_block();
	status = move_into_place(outdir, err);
	if (outdir->committed && (mode & (S_IWGRP | S_IWOTH)))
		(void)fchmod(outdir->staging_fd, mode);
	po_signals_unblock();
	return status;
}

void po_outdir_destroy(struct po_outdir *outdir)
{
	if (!outdir)
		return;
	if (outdir->staging_fd >= 0 && !outdir->committed)
		remove_tree_at(outdir->parent_fd, staging_name(outdir), outdir->staging_fd);
	else if (outdir->staging && !outdir->committed)
		(void)unlinkat(outdir->parent_fd, staging_name(outdir), AT_REMOVEDIR);
	if (outdir->staging_fd >= 0)
		close(outdir->staging_fd);
	if (outdir->parent_fd >= 0)
		close(outdir->parent_fd);
	free(outdir->shown);
	free(outdir->path);
	free(outdir->parent);
	free(outdir->base);
	free(outdir->staging);
	free(outdir->notes);
	free(outdir);
}

int po_scratch_mark(const char *dir, const char *mark)
{
	int fd = open(dir, DIR_FLAGS);
	int made;

	if (fd < 0)
		return -1;
	made = mark_create(fd, mark);
	close(fd);
	return made;
}

void po_scratch_remove(const char *dir, const char *mark)
{
	const char *slash = strrchr(dir, '/');
	char parent[PATH_MAX];
	struct stat st;
	int parent_fd, fd;

	if (!slash || !slash[1] || (size_t)(slash - dir) >= sizeof(parent))
		return;
	memcpy(parent, dir, (size_t)(slash - dir));
	parent[slash - dir] = '\0';
	parent_fd = open(parent[0] ? parent : "/", DIR_FLAGS);
	if (parent_fd < 0)
		return;
	fd = openat(parent_fd, slash + 1, DIR_FLAGS);
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
	    !(st.st_mode & (S_IWGRP | S_IWOTH)) && mark_is_ours(fd, mark))
		remove_tree_at(parent_fd, slash + 1, fd);
	if (fd >= 0)
		close(fd);
	close(parent_fd);
}
