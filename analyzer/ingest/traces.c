/*
 * traces.c: finds the CTF traces (directories holding a "metadata" file) below a path, and
 * the directories that should hold one but cannot be decoded, and checks the files of a
 * trace directory without opening anything that could block.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/outdir.h"
#include "ingest_internal.h"
#include "kineto_read.h"

/* Deeper trees are not what LTTng writes (ust/pid/NAME-PID-DATE/64-bit is four levels). */
#define PO_TRACE_MAX_DEPTH 12

static bool join(char *out, size_t size, const char *dir, const char *name)
{
	return snprintf(out, size, "%s/%s", dir, name) < (int)size;
}

bool po_trace_is_stream_name(const char *name)
{
	const char *underscore = strrchr(name, '_');

	return underscore && underscore != name && underscore[1] &&
	       strspn(underscore + 1, "0123456789") == strlen(underscore + 1);
}

int po_trace_file_open(const char *path, struct po_error *err)
{
	struct stat st;
	int fd;

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) != 0 &&
	    errno == ENOENT) {
		po_error_set(err, "%s: a dangling symbolic link where a trace file should be",
			     path);
		return -1;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		po_error_set(err, "%s: %s where a trace file should be", path,
			     po_file_type_text(st.st_mode));
		return -1;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			po_error_set(err, "%s: missing", path);
		else
			po_error_set(err, "%s: cannot be read: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		po_error_set(err, "%s: %s where a trace file should be", path,
			     po_file_type_text(st.st_mode));
		close(fd);
		return -1;
	}
	/* A regular file: reads go back to blocking, as the callers expect. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* The file opens as a regular file; it is closed again. */
static enum po_status check_openable(const char *path, struct po_error *err)
{
	int fd = po_trace_file_open(path, err);

	if (fd < 0)
		return PO_STATUS_INPUT;
	close(fd);
	return PO_STATUS_OK;
}

static enum po_status check_metadata_file(const char *trace, struct po_error *err)
{
	char path[4096];
	struct stat st;

	if (!join(path, sizeof(path), trace, "metadata")) {
		po_error_set(err, "%s: path too long", trace);
		return PO_STATUS_INPUT;
	}
	if (lstat(path, &st) != 0 && errno != ENOENT && access(trace, R_OK | X_OK) != 0) {
		po_error_set(err, "%s: cannot be read: %s", trace, strerror(errno));
		return PO_STATUS_INPUT;
	}
	if (lstat(path, &st) != 0 && errno == ENOENT) {
		po_error_set(err,
			     "%s: missing, so the trace in this directory cannot be decoded (the "
			     "recording was cut short or the file was removed)",
			     path);
		return PO_STATUS_INPUT;
	}
	return check_openable(path, err);
}

/* Every visible entry of index/ is an index file the decoder may open. */
static enum po_status check_index_dir(const char *index, struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;
	struct dirent *entry;
	DIR *handle = opendir(index); /* owned */

	if (!handle) {
		po_error_set(err, "%s: cannot be read: %s", index, strerror(errno));
		return PO_STATUS_INPUT;
	}
	while (status == PO_STATUS_OK && (entry = readdir(handle))) {
		char path[4096];

		if (entry->d_name[0] == '.')
			continue;
		status = join(path, sizeof(path), index, entry->d_name) ? check_openable(path, err)
									: PO_STATUS_OK;
	}
	closedir(handle);
	return status;
}

/* One visible entry of a trace directory other than metadata. */
static enum po_status check_trace_entry(const char *path, const char *name, struct po_error *err)
{
	struct stat st;

	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return check_openable(path, err);
	if (strcmp(name, "index") == 0)
		return check_index_dir(path, err);
	if (po_trace_is_stream_name(name)) {
		po_error_set(err, "%s: a directory where a stream file should be", path);
		return PO_STATUS_INPUT;
	}
	return PO_STATUS_OK; /* a trace of its own, maybe: the walk looks into it */
}

bool po_trace_is_kineto(const char *path)
{
	struct stat st;
	const char *slash = strrchr(path, '/');

	return po_kineto_file_name(slash ? slash + 1 : path) && stat(path, &st) == 0 &&
	       !S_ISDIR(st.st_mode);
}

enum po_status po_trace_dir_check_files(const char *trace, struct po_error *err)
{
	enum po_status status =
	    po_trace_is_kineto(trace) ? PO_STATUS_OK : check_metadata_file(trace, err);
	size_t data_streams = 0;
	struct dirent *entry;
	DIR *handle; /* owned */

	if (status == PO_STATUS_OK && po_trace_is_kineto(trace))
		return check_openable(trace, err); /* the reader says what else is wrong */
	if (status != PO_STATUS_OK)
		return status;
	handle = opendir(trace);
	if (!handle) {
		po_error_set(err, "%s: cannot be read: %s", trace, strerror(errno));
		return PO_STATUS_INPUT;
	}
	while (status == PO_STATUS_OK && (entry = readdir(handle))) {
		char path[4096];
		struct stat st;

		if (entry->d_name[0] == '.' || strcmp(entry->d_name, "metadata") == 0 ||
		    !join(path, sizeof(path), trace, entry->d_name))
			continue;
		status = check_trace_entry(path, entry->d_name, err);
		if (status == PO_STATUS_OK && po_trace_is_stream_name(entry->d_name) &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
			data_streams++;
	}
	closedir(handle);
	return status == PO_STATUS_OK ? po_trace_metadata_check(trace, data_streams, err) : status;
}

const char *po_trace_relative_path(const char *path, const char *root)
{
	size_t root_len = strlen(root);

	while (root_len > 1 && root[root_len - 1] == '/')
		root_len--;
	if (strncmp(path, root, root_len) != 0 || (path[root_len] && path[root_len] != '/'))
		return path;
	path += root_len;
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

static enum po_status list_add(struct po_trace_list *list, const char *path, struct po_error *err)
{
	if (list->count == list->capacity) {
		size_t capacity = list->capacity ? list->capacity * 2 : 16;
		char **paths = realloc(list->paths, capacity * sizeof(*paths));

		if (!paths) {
			po_error_set(err, "Failed to list the traces: out of memory");
			return PO_STATUS_NOMEM;
		}
		list->paths = paths;
		list->capacity = capacity;
	}
	list->paths[list->count] = strdup(path);
	if (!list->paths[list->count]) {
		po_error_set(err, "Failed to list the traces: out of memory");
		return PO_STATUS_NOMEM;
	}
	list->count++;
	return PO_STATUS_OK;
}

static const char *last_component(const char *path, size_t end, size_t *len)
{
	size_t start = end;

	while (start > 0 && path[start - 1] != '/')
		start--;
	*len = end - start;
	return path + start;
}

/* Whether the components of dir, from the last one back, are names[0], names[1]... */
static bool ends_with_components(const char *dir, const char *const *names, size_t count)
{
	size_t end = strlen(dir);

	for (size_t i = 0; i < count; i++) {
		size_t len;
		const char *component = last_component(dir, end, &len);

		if (names[i] && (strlen(names[i]) != len || strncmp(component, names[i], len) != 0))
			return false;
		if (component == dir)
			return i + 1 == count;
		end = (size_t)(component - dir) - 1;
	}
	return true;
}

/* A directory LTTng makes for one process (ust/pid/NAME) or one user (ust/uid/UID/NN-bit). */
static bool is_buffer_dir(const char *dir)
{
	static const char *const per_pid[] = {NULL, "pid", "ust"};
	static const char *const per_uid[] = {NULL, NULL, "uid", "ust"};
	size_t len;
	const char *base = last_component(dir, strlen(dir), &len);

	if (ends_with_components(dir, per_pid, 3))
		return true;
	return ends_with_components(dir, per_uid, 4) && len > 4 &&
	       strncmp(base + len - 4, "-bit", 4) == 0;
}

/* Whether dir has a subdirectory other than index/ (where a trace may sit deeper). */
static bool has_subdirectory(const char *dir)
{
	struct dirent *entry;
	DIR *handle = opendir(dir); /* owned */
	bool found = false;

	while (handle && !found && (entry = readdir(handle))) {
		char path[4096];
		struct stat st;

		found = entry->d_name[0] != '.' && strcmp(entry->d_name, "index") != 0 &&
			join(path, sizeof(path), dir, entry->d_name) && lstat(path, &st) == 0 &&
			S_ISDIR(st.st_mode);
	}
	if (handle)
		closedir(handle);
	return found;
}

/* Whether dir holds a trace, or should and cannot be read (see po_trace_list_find_all()). */
static bool is_trace_dir(const char *dir)
{
	char path[4096];
	struct stat st;

	if (!join(path, sizeof(path), dir, "metadata"))
		return false;
	if (lstat(path, &st) == 0 || errno != ENOENT)
		return true;
	if (join(path, sizeof(path), dir, "index") && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return true;
	return is_buffer_dir(dir) && !has_subdirectory(dir);
}

/* The directories a walk entered, so that one reached twice (a link to it) is read once. */
struct visited {
	dev_t *devices;
	ino_t *inodes;
	size_t count;
	size_t capacity;
};

/* Whether dir was entered before; notes it when not. Out of memory: treated as new. */
static bool visited_before(struct visited *visited, const char *dir)
{
	struct stat st;

	if (stat(dir, &st) != 0)
		return false;
	for (size_t i = 0; i < visited->count; i++) {
		if (visited->devices[i] == st.st_dev && visited->inodes[i] == st.st_ino)
			return true;
	}
	if (visited->count == visited->capacity) {
		size_t capacity = visited->capacity ? visited->capacity * 2 : 64;
		dev_t *devices = realloc(visited->devices, capacity * sizeof(*devices));
		ino_t *inodes;

		if (!devices)
			return false;
		visited->devices = devices;
		inodes = realloc(visited->inodes, capacity * sizeof(*inodes));
		if (!inodes)
			return false;
		visited->inodes = inodes;
		visited->capacity = capacity;
	}
	visited->devices[visited->count] = st.st_dev;
	visited->inodes[visited->count++] = st.st_ino;
	return false;
}

/*
 * Whether to walk into child: a directory, or at the top of the walk a symbolic link to
 * one (the hosts' recordings gathered under one directory by links, or the job directory
 * of several TRACE_DIRs); deeper links are not followed.
 */
static bool walks_into(const char *child, int depth)
{
	struct stat st;

	if (lstat(child, &st) != 0)
		return false;
	if (S_ISLNK(st.st_mode) && depth == 0)
		return stat(child, &st) == 0 && S_ISDIR(st.st_mode);
	return S_ISDIR(st.st_mode);
}

static enum po_status walk(const char *dir, int depth, struct po_trace_list *list,
			   struct visited *visited, struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;
	struct dirent *entry;
	DIR *handle;

	if (visited_before(visited, dir))
		return PO_STATUS_OK;
	handle = opendir(dir); /* owned */

	if (!handle || is_trace_dir(dir))
		status = list_add(list, dir, err);
	if (!handle || status != PO_STATUS_OK || depth >= PO_TRACE_MAX_DEPTH) {
		if (handle)
			closedir(handle);
		return status;
	}
	while (status == PO_STATUS_OK && (entry = readdir(handle))) {
		char child[4096];

		/* Dot entries and LTTng's index folders hold no trace. */
		if (entry->d_name[0] == '.' || strcmp(entry->d_name, "index") == 0 ||
		    !join(child, sizeof(child), dir, entry->d_name))
			continue;
		if (walks_into(child, depth))
			status = walk(child, depth + 1, list, visited, err);
	}
	closedir(handle);
	return status;
}

static int compare_paths(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The torch.profiler traces (*.json, *.json.gz) directly in dir, as the traces to decode;
 * none in a profopt report (its summary.json and timeline.json are no traces).
 */
static enum po_status list_kineto(const char *dir, struct po_trace_list *list, struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;
	struct dirent *entry;
	char manifest[4096];
	DIR *handle; /* owned */

	if (join(manifest, sizeof(manifest), dir, PO_OUTDIR_MANIFEST) &&
	    access(manifest, F_OK) == 0)
		return PO_STATUS_OK;
	handle = opendir(dir);

	while (handle && status == PO_STATUS_OK && (entry = readdir(handle))) {
		char path[4096];

		if (entry->d_name[0] != '.' && po_kineto_file_name(entry->d_name) &&
		    join(path, sizeof(path), dir, entry->d_name) && po_trace_is_kineto(path))
			status = list_add(list, path, err);
	}
	if (handle)
		closedir(handle);
	return status;
}

enum po_status po_trace_list_find_all(const char *root, struct po_trace_list *list,
				      struct po_error *err)
{
	struct visited visited = {0};
	enum po_status status;

	if (po_trace_is_kineto(root))
		return list_add(list, root, err);
	status = walk(root, 0, list, &visited, err);
	free(visited.devices);
	free(visited.inodes);
	/* A directory with no CTF trace: torch.profiler's files, one per rank, if any. */
	if (status == PO_STATUS_OK && list->count == 0)
		status = list_kineto(root, list, err);
	if (status == PO_STATUS_OK && list->count > 1)
		qsort(list->paths, list->count, sizeof(*list->paths), compare_paths);
	return status;
}

enum po_status po_trace_list_find(const char *root, struct po_trace_list *list,
				  struct po_error *err)
{
	enum po_status status = po_trace_list_find_all(root, list, err);
	size_t kept = 0;

	for (size_t i = 0; status == PO_STATUS_OK && i < list->count; i++) {
		struct po_error ignored = {{0}}; /* the input check reported it, or --salvage */

		if (po_trace_dir_check_files(list->paths[i], &ignored) == PO_STATUS_OK)
			list->paths[kept++] = list->paths[i];
		else
			free(list->paths[i]);
	}
	if (status == PO_STATUS_OK)
		list->count = kept;
	return status;
}

void po_trace_list_fini(struct po_trace_list *list)
{
	for (size_t i = 0; i < list->count; i++)
		free(list->paths[i]);
	free(list->paths);
	list->paths = NULL;
	list->count = 0;
	list->capacity = 0;
}
