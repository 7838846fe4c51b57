/* outdir.c: the report directory: its manifest, the staging directory and the commit. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "isolate.h"
#include "outdir.h"

#define PO_MANIFEST_HEADER "profopt-report/1"
#define PO_MANIFEST_MAX_BYTES (1024 * 1024)
#define PO_MANIFEST_MAX_FILES 4096
#define PO_MANIFEST_MAX_DEPTH 8

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

/* Reads the whole of a regular file of at most max_bytes without blocking on a FIFO. */
static enum po_status read_small_file(const char *path, size_t max_bytes, char **text,
				      struct po_error *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	ssize_t got = 0;

	*text = NULL;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size > max_bytes) {
		po_error_set(err, "%s: %s", path,
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
	if (got != st.st_size) {
		po_error_set(err, "%s: cannot be read: %s", path,
			     got < 0 ? strerror(errno) : "it changed while it was read");
		close(fd);
		free(*text);
		*text = NULL;
		return PO_STATUS_USAGE;
	}
	close(fd);
	(*text)[got] = '\0';
	return PO_STATUS_OK;
}

/* Reads dir's manifest; *found is false (and OK returned) when there is none. */
static enum po_status manifest_read(const char *dir, struct manifest *manifest, bool *found,
				    struct po_error *err)
{
	char path[PATH_MAX];
	struct stat st;
	char *text = NULL; /* owned */
	enum po_status status;

	if (!join_path(path, sizeof(path), dir, PO_OUTDIR_MANIFEST)) {
		po_error_set(err, "%s: path too long", dir);
		return PO_STATUS_USAGE;
	}
	*found = lstat(path, &st) == 0;
	if (!*found)
		return PO_STATUS_OK;
	status = read_small_file(path, PO_MANIFEST_MAX_BYTES, &text, err);
	if (status == PO_STATUS_OK && memchr(text, '\0', (size_t)st.st_size)) {
		po_error_set(err, "%s: not a profopt report manifest (binary data)", path);
		status = PO_STATUS_USAGE;
	}
	if (status == PO_STATUS_OK)
		status = manifest_parse(text, path, manifest, err);
	free(text);
	if (status != PO_STATUS_OK)
		manifest_fini(manifest);
	return status;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Removes a tree that profopt wrote, without following symbolic links. */
static void remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static bool directory_is_empty(const char *path)
{
	DIR *dir = opendir(path); /* owned */
	struct dirent *entry;
	bool empty = true;

	if (!dir)
		return false;
	while (empty && (entry = readdir(dir)))
		empty = strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0;
	closedir(dir);
	return empty;
}

static bool is_dot(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

/* rename() that fails rather than replace an existing destination. */
static int rename_noreplace(const char *from, const char *to)
{
	struct stat st;

	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* A file system without RENAME_NOREPLACE: checked, then renamed. */
	if (lstat(to, &st) == 0) {
		errno = EEXIST;
		return -1;
	}
	return rename(from, to);
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

/*
 * Every entry of a directory the report made (charts/) must be the report's, since the
 * directory goes with the report.
 */
static enum po_status check_report_subdir(const char *path, const char *shown, const char *rel,
					  const struct manifest *manifest, int depth,
					  struct po_error *err)
{
	char dir_path[PATH_MAX];
	enum po_status status = PO_STATUS_OK;
	struct dirent *entry;
	DIR *dir; /* owned */

	dir = join_path(dir_path, sizeof(dir_path), path, rel) ? opendir(dir_path) : NULL;
	if (!dir) {
		po_error_set(err, "%s/%s: cannot be read: %s", shown, rel, strerror(errno));
		return PO_STATUS_USAGE;
	}
	while (status == PO_STATUS_OK && (entry = readdir(dir))) {
		char child[PATH_MAX], child_path[PATH_MAX];
		struct stat st;

		if (is_dot(entry->d_name))
			continue;
		if (!join_path(child, sizeof(child), rel, entry->d_name) ||
		    !join_path(child_path, sizeof(child_path), path, child)) {
			status = not_in_report(shown, entry->d_name, err);
			continue;
		}
		if (lstat(child_path, &st) != 0)
			continue; /* gone meanwhile */
		if (S_ISREG(st.st_mode) && manifest_lists(manifest, child))
			continue;
		if (S_ISDIR(st.st_mode) && manifest_implies_dir(manifest, child) &&
		    depth < PO_MANIFEST_MAX_DEPTH)
			status = check_report_subdir(path, shown, child, manifest, depth + 1, err);
		else
			status = not_in_report(shown, child, err);
	}
	closedir(dir);
	return status;
}

/*
 * The top of a report directory: what the manifest lists is the report's, the rest the
 * user's, which stays; none of the user's entries may be named like one the new report
 * writes (names).
 */
static enum po_status check_report_entries(const char *path, const char *shown,
					   const struct manifest *manifest,
					   const char *const *names, size_t name_count,
					   struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;
	struct dirent *entry;
	DIR *dir = opendir(path); /* owned */

	if (!dir) {
		po_error_set(err, "%s: cannot be read: %s", shown, strerror(errno));
		return PO_STATUS_USAGE;
	}
	while (status == PO_STATUS_OK && (entry = readdir(dir))) {
		const char *name = entry->d_name;
		char child_path[PATH_MAX];
		struct stat st;

		if (is_dot(name) || strcmp(name, PO_OUTDIR_MANIFEST) == 0 ||
		    !join_path(child_path, sizeof(child_path), path, name) ||
		    lstat(child_path, &st) != 0)
			continue;
		if (manifest_lists(manifest, name) && !S_ISREG(st.st_mode))
			status = not_in_report(shown, name, err);
		else if (manifest_lists(manifest, name))
			continue;
		else if (manifest_implies_dir(manifest, name) && S_ISDIR(st.st_mode))
			status = check_report_subdir(path, shown, name, manifest, 1, err);
		else if (name_in(name, names, name_count))
			status = not_in_report(shown, name, err);
	}
	closedir(dir);
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
	struct manifest manifest = {0};
	enum po_status status;
	struct stat st;
	bool found;

	if (lstat(outdir->path, &st) != 0)
		return PO_STATUS_OK; /* absent; creating it tells why it cannot be */
	if (!S_ISDIR(st.st_mode)) {
		po_error_set(err, "the output path %s exists and is not a directory",
			     outdir->shown);
		return PO_STATUS_USAGE;
	}
	status = manifest_read(outdir->path, &manifest, &found, err);
	if (status != PO_STATUS_OK) {
		po_error_prepend(err, "the output directory %s holds a damaged report",
				 outdir->shown);
		return status;
	}
	if (!found && !directory_is_empty(outdir->path)) {
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
		status = check_report_entries(outdir->path, outdir->shown, &manifest, names,
					      name_count, err);
	}
	manifest_fini(&manifest);
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

/* Moves the entries of old_dir that the manifest does not list back into path. */
static void move_user_entries_back(const char *old_dir, const char *path,
				   const struct manifest *manifest)
{
	struct dirent *entry;
	DIR *dir = opendir(old_dir); /* owned */

	while (dir && (entry = readdir(dir))) {
		char from[PATH_MAX], to[PATH_MAX];

		if (is_dot(entry->d_name) || strcmp(entry->d_name, PO_OUTDIR_MANIFEST) == 0 ||
		    manifest_lists(manifest, entry->d_name) ||
		    manifest_implies_dir(manifest, entry->d_name))
			continue;
		if (join_path(from, sizeof(from), old_dir, entry->d_name) &&
		    join_path(to, sizeof(to), path, entry->d_name))
			(void)rename_noreplace(from, to); /* what stays is named by the caller */
	}
	if (dir)
		closedir(dir);
}

/* Removes the listed regular files of dir, then the directories that held them. */
static void remove_listed(const char *dir, const struct manifest *manifest)
{
	char path[PATH_MAX];
	struct stat st;

	for (size_t i = 0; i < manifest->count; i++) {
		if (join_path(path, sizeof(path), dir, manifest->files[i]) &&
		    lstat(path, &st) == 0 && S_ISREG(st.st_mode))
			unlink(path);
	}
	for (size_t i = 0; i < manifest->count; i++) {
		char *slash;

		if (!join_path(path, sizeof(path), dir, manifest->files[i]))
			continue;
		while ((slash = strrchr(path, '/')) && slash > path + strlen(dir)) {
			*slash = '\0';
			if (rmdir(path) != 0)
				break;
		}
	}
}

/*
 * An earlier report moved out of the way into old_dir: the user's entries in it go back
 * into path, the report's files go, then old_dir. What cannot be moved back stays in
 * old_dir, which is then kept and named in the error.
 */
static enum po_status dispose_old_report(const char *old_dir, const char *path,
					 struct po_error *err)
{
	struct manifest manifest = {0};
	char manifest_path[PATH_MAX];
	enum po_status status;
	bool found;

	status = manifest_read(old_dir, &manifest, &found, err);
	if (status == PO_STATUS_OK && !found) {
		po_error_set(err, "%s: no manifest", old_dir);
		status = PO_STATUS_OUTPUT;
	}
	if (status != PO_STATUS_OK) {
		po_error_prepend(err, "the earlier report was left in %s", old_dir);
		return status == PO_STATUS_NOMEM ? status : PO_STATUS_OUTPUT;
	}
	move_user_entries_back(old_dir, path, &manifest);
	remove_listed(old_dir, &manifest);
	manifest_fini(&manifest);
	if (join_path(manifest_path, sizeof(manifest_path), old_dir, PO_OUTDIR_MANIFEST))
		unlink(manifest_path);
	if (rmdir(old_dir) != 0) {
		po_error_set(err,
			     "the new report is in place, but %s keeps what could not be moved "
			     "back into %s: %s",
			     old_dir, path, strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	return PO_STATUS_OK;
}

/*
 * Finishes what a dead run left in staging directory `name`: an incomplete report (it still
 * has the staging mark) is removed; a complete one, or an earlier report it had moved out
 * of the way, is disposed of as the commit would have (or put back, when nothing is in
 * place). Anything else is not provably profopt's and stays.
 */
static void recover_one(const struct po_outdir *outdir, const char *name)
{
	struct manifest manifest = {0};
	struct po_error ignored = {{0}};
	char full[PATH_MAX], mark[PATH_MAX];
	struct stat st;
	bool found;

	if (!join_path(full, sizeof(full), outdir->parent, name) ||
	    !join_path(mark, sizeof(mark), full, PO_OUTDIR_STAGING_MARK) || lstat(full, &st) != 0 ||
	    !S_ISDIR(st.st_mode))
		return;
	if (lstat(mark, &st) == 0) {
		remove_tree(full);
		return;
	}
	if (manifest_read(full, &manifest, &found, &ignored) != PO_STATUS_OK || !found)
		return;
	manifest_fini(&manifest);
	if (lstat(outdir->path, &st) != 0 && errno == ENOENT)
		(void)rename_noreplace(full, outdir->path);
	else
		(void)dispose_old_report(full, outdir->path, &ignored);
}

/*
 * Recovers the staging directories beside the report directory whose run is gone. Best
 * effort: what cannot be recovered now is left for the next run, and does not stop this
 * one.
 */
static void recover_dead_runs(const struct po_outdir *outdir)
{
	struct manifest names = {0}; /* the candidates, collected before any is moved */
	struct po_error ignored = {{0}};
	struct dirent *entry;
	DIR *dir = opendir(outdir->parent); /* owned */

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
	if (outdir && (outdir->shown = strdup(path))) {
		outdir->force = force;
		status = resolve_path(outdir, err);
	} else {
		po_error_set(err, "out of memory");
	}
	if (status == PO_STATUS_OK)
		status = split_path(outdir, err);
	if (status == PO_STATUS_OK) {
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

/* mkdir -p: creates dir and its missing ancestors. */
static int make_directories(const char *dir)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s", dir) >= sizeof(path))
		return -1;
	for (char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return -1;
		*slash = '/';
	}
	return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

enum po_status po_outdir_stage(struct po_outdir *outdir, struct po_error *err)
{
	unsigned long long start = 0;
	char mark[PATH_MAX];
	int fd;

	if (make_directories(outdir->parent) != 0) {
		po_error_set(err, "Failed to create the parent directories of %s: %s",
			     outdir->shown, strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	(void)start_time_of(getpid(), &start);
	if (asprintf(&outdir->staging, "%s/.%s.profopt-%d-%llu-XXXXXX", outdir->parent,
		     outdir->base, (int)getpid(), start) < 0) {
		outdir->staging = NULL;
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	if (!mkdtemp(outdir->staging)) {
		po_error_set(err, "Failed to create a temporary directory beside %s: %s",
			     outdir->shown, strerror(errno));
		free(outdir->staging);
		outdir->staging = NULL;
		return PO_STATUS_OUTPUT;
	}
	fd = join_path(mark, sizeof(mark), outdir->staging, PO_OUTDIR_STAGING_MARK)
		 ? open(mark, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)
		 : -1;
	if (fd < 0) {
		po_error_set(err, "Failed to create %s: %s", mark, strerror(errno));
		return PO_STATUS_OUTPUT; /* po_outdir_destroy() removes the directory */
	}
	close(fd);
	return PO_STATUS_OK;
}

const char *po_outdir_borrow_staging(const struct po_outdir *outdir)
{
	return outdir->staging;
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the regular files below dir/rel to list, as paths relative to dir. */
static enum po_status list_files(const char *dir, const char *rel, int depth, struct manifest *list,
				 struct po_error *err)
{
	char dir_path[PATH_MAX];
	enum po_status status = PO_STATUS_OK;
	struct dirent *entry;
	DIR *handle; /* owned */

	handle = join_path(dir_path, sizeof(dir_path), dir, rel) ? opendir(dir_path) : NULL;
	if (!handle) {
		po_error_set(err, "Failed to list %s: %s", dir_path, strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	while (status == PO_STATUS_OK && (entry = readdir(handle))) {
		char child[PATH_MAX], child_path[PATH_MAX];
		struct stat st;

		if (is_dot(entry->d_name) ||
		    (!*rel && (strcmp(entry->d_name, PO_OUTDIR_STAGING_MARK) == 0 ||
			       strcmp(entry->d_name, PO_OUTDIR_MANIFEST) == 0)))
			continue;
		if (!join_path(child, sizeof(child), rel, entry->d_name) ||
		    !join_path(child_path, sizeof(child_path), dir, child) ||
		    lstat(child_path, &st) != 0)
			continue;
		if (S_ISREG(st.st_mode))
			status = manifest_add(list, child, err);
		else if (S_ISDIR(st.st_mode) && depth + 1 < PO_MANIFEST_MAX_DEPTH)
			status = list_files(dir, child, depth + 1, list, err);
	}
	closedir(handle);
	return status;
}

static enum po_status write_manifest(const char *dir, struct manifest *files, struct po_error *err)
{
	char path[PATH_MAX];
	FILE *file; /* owned */
	bool ok;

	qsort(files->files, files->count, sizeof(*files->files), compare_strings);
	file = join_path(path, sizeof(path), dir, PO_OUTDIR_MANIFEST) ? fopen(path, "wx") : NULL;
	if (!file) {
		po_error_set(err, "Failed to write %s: %s", path, strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	ok = fprintf(file, "%s\n", PO_MANIFEST_HEADER) > 0;
	for (size_t i = 0; ok && i < files->count; i++)
		ok = fprintf(file, "%s\n", files->files[i]) > 0;
	ok = fflush(file) == 0 && ok;
	if (fclose(file) != 0 || !ok) {
		po_error_set(err, "Failed to write %s: %s", path, strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	return PO_STATUS_OK;
}

/* The top-level names of the staging directory (what the new report brings). */
static enum po_status list_top_names(const char *dir, struct manifest *names, struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;
	struct dirent *entry;
	DIR *handle = opendir(dir); /* owned */

	if (!handle) {
		po_error_set(err, "Failed to list %s: %s", dir, strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	while (status == PO_STATUS_OK && (entry = readdir(handle))) {
		if (!is_dot(entry->d_name) && strcmp(entry->d_name, PO_OUTDIR_STAGING_MARK) != 0)
			status = manifest_add(names, entry->d_name, err);
	}
	closedir(handle);
	return status;
}

/* Swaps in two renames, where the file system has no RENAME_EXCHANGE. */
static enum po_status swap_by_renames(struct po_outdir *outdir, struct po_error *err)
{
	enum po_status status;
	char *aside = NULL; /* owned */

	if (asprintf(&aside, "%s-old", outdir->staging) < 0) {
		po_error_set(err, "out of memory");
		return PO_STATUS_NOMEM;
	}
	if (rename(outdir->path, aside) != 0) {
		po_error_set(err, "Failed to move the earlier report %s aside: %s", outdir->shown,
			     strerror(errno));
		free(aside);
		return PO_STATUS_OUTPUT;
	}
	if (rename(outdir->staging, outdir->path) != 0) {
		po_error_set(err, "Failed to move the report into %s: %s", outdir->shown,
			     strerror(errno));
		(void)rename(aside, outdir->path);
		free(aside);
		return PO_STATUS_OUTPUT;
	}
	outdir->committed = true;
	status = dispose_old_report(aside, outdir->path, err);
	free(aside);
	return status;
}

/* The rename(s) of the commit; the terminating signals are held back. */
static enum po_status move_into_place(struct po_outdir *outdir, struct po_error *err)
{
	struct stat st;

	if (lstat(outdir->path, &st) == 0 && directory_is_empty(outdir->path) &&
	    rmdir(outdir->path) != 0) {
		po_error_set(err, "Failed to replace the empty directory %s: %s", outdir->shown,
			     strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	if (lstat(outdir->path, &st) != 0) {
		if (rename_noreplace(outdir->staging, outdir->path) != 0) {
			po_error_set(err, "Failed to move the report into %s: %s", outdir->shown,
				     strerror(errno));
			return PO_STATUS_OUTPUT;
		}
		outdir->committed = true;
		return PO_STATUS_OK;
	}
	if (renameat2(AT_FDCWD, outdir->staging, AT_FDCWD, outdir->path, RENAME_EXCHANGE) == 0) {
		/* The staging path now holds the earlier report. */
		outdir->committed = true;
		return dispose_old_report(outdir->staging, outdir->path, err);
	}
	if (errno != EINVAL && errno != ENOSYS) {
		po_error_set(err, "Failed to move the report into %s: %s", outdir->shown,
			     strerror(errno));
		return PO_STATUS_OUTPUT;
	}
	return swap_by_renames(outdir, err);
}

enum po_status po_outdir_commit(struct po_outdir *outdir, struct po_error *err)
{
	struct manifest files = {0}, names = {0};
	char mark[PATH_MAX];
	enum po_status status;
	struct stat st;

	status = list_files(outdir->staging, "", 0, &files, err);
	if (status == PO_STATUS_OK)
		status = write_manifest(outdir->staging, &files, err);
	if (status == PO_STATUS_OK)
		status = list_top_names(outdir->staging, &names, err);
	if (status == PO_STATUS_OK)
		status = check_existing(outdir, outdir->force, (const char *const *)names.files,
					names.count, err);
	manifest_fini(&files);
	manifest_fini(&names);
	if (status != PO_STATUS_OK)
		return status;
	if (join_path(mark, sizeof(mark), outdir->staging, PO_OUTDIR_STAGING_MARK))
		unlink(mark);
	chmod(outdir->staging, stat(outdir->path, &st) == 0 ? st.st_mode & 07777 : 0755);
	po_signals_block();
	status = move_into_place(outdir, err);
	po_signals_unblock();
	return status;
}

void po_outdir_destroy(struct po_outdir *outdir)
{
	if (!outdir)
		return;
	if (outdir->staging && !outdir->committed)
		remove_tree(outdir->staging);
	free(outdir->shown);
	free(outdir->path);
	free(outdir->parent);
	free(outdir->base);
	free(outdir->staging);
	free(outdir);
}
