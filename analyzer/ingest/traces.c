/* traces.c: finds the CTF traces (directories holding a "metadata" file) below a path. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ingest_internal.h"

/* Deeper trees are not what LTTng writes (ust/pid/NAME-PID-DATE/64-bit is four levels). */
#define PO_TRACE_MAX_DEPTH 12

static bool is_regular(const char *dir, const char *name)
{
	char path[4096];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return false;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
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

static enum po_status walk(const char *dir, int depth, struct po_trace_list *list,
			   struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;
	struct dirent *entry;
	DIR *handle; /* owned */

	if (is_regular(dir, "metadata")) {
		status = list_add(list, dir, err);
		if (status != PO_STATUS_OK)
			return status;
	}
	if (depth >= PO_TRACE_MAX_DEPTH)
		return PO_STATUS_OK;
	handle = opendir(dir);
	if (!handle)
		return PO_STATUS_OK;
	while (status == PO_STATUS_OK && (entry = readdir(handle))) {
		char child[4096];
		struct stat st;

		/* Dot entries and LTTng's index folders hold no trace. */
		if (entry->d_name[0] == '.' || strcmp(entry->d_name, "index") == 0)
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", dir, entry->d_name) >=
		    (int)sizeof(child))
			continue;
		if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
			status = walk(child, depth + 1, list, err);
	}
	closedir(handle);
	return status;
}

static int compare_paths(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

enum po_status po_trace_list_find(const char *root, struct po_trace_list *list,
				  struct po_error *err)
{
	enum po_status status = walk(root, 0, list, err);

	if (status == PO_STATUS_OK && list->count > 1)
		qsort(list->paths, list->count, sizeof(*list->paths), compare_paths);
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
