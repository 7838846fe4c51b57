/*
 * corpus_ingest.c: runs po_ingest_check() and po_ingest_run() inside po_isolate_run() over
 * every trace of a corpus (CATEGORY/NAME entries below a root) and prints one line per trace,
 * "CATEGORY/NAME STATUS", for a diff against a golden file. Exits non-zero when a trace
 * ends in a status other than OK, INPUT or DECODE, when an error is not one line, or when
 * a trace that decodes yields profopt events (the corpus holds none).
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/isolate.h"
#include "ingest/ingest.h"

struct corpus_case {
	const char *path; /* weak */
};

static enum po_status count_event(void *ctx, const struct po_event *event)
{
	(void)ctx;
	(void)event;
	return PO_STATUS_OK;
}

static enum po_status decode_case(void *ctx, FILE *output, struct po_error *err)
{
	const struct corpus_case *c = ctx;
	struct po_ingest_options options = {.salvage = false};
	struct po_ingest_stats stats;
	enum po_status status = po_ingest_check(c->path, err);

	if (status != PO_STATUS_OK)
		return status;
	status = po_ingest_run(c->path, &options, count_event, NULL, &stats, err);
	if (status == PO_STATUS_OK)
		fprintf(output, "events=%" PRId64 " profopt_events=%" PRId64 "\n", stats.events,
			stats.profopt_events);
	return status;
}

static bool is_one_line(const char *text)
{
	return text[0] && !strchr(text, '\n');
}

/* Runs one trace; false when its outcome breaks the rules above. */
static bool run_case(const char *root, const char *name)
{
	char path[4096];
	struct corpus_case c = {path};
	struct po_isolate_limits limits;
	struct po_error err = {{0}};
	char *output = NULL;
	enum po_status status;
	bool ok;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	if (po_isolate_limits_init(&limits, &err) != PO_STATUS_OK) {
		printf("FAIL %s: %s\n", name, err.message);
		return false;
	}
	if (!getenv("PROFOPT_DECODE_LIMITS")) {
		limits.cpu_seconds = 60;
		limits.wall_seconds = 120;
		limits.memory_bytes = (size_t)2 << 30;
	}
	status = po_isolate_run(decode_case, &c, &limits, &output, &err);
	printf("%s %s\n", name, po_status_name(status));
	if (status == PO_STATUS_OK) {
		ok = output && strstr(output, " profopt_events=0\n");
		fprintf(stderr, "%s: %s", name, output ? output : "(no output)\n");
	} else {
		ok = (status == PO_STATUS_INPUT || status == PO_STATUS_DECODE) &&
		     is_one_line(err.message);
		fprintf(stderr, "%s: %s\n", name, err.message);
	}
	if (!ok)
		fprintf(stderr, "%s: UNEXPECTED OUTCOME\n", name);
	free(output);
	return ok;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists "CATEGORY/NAME" for every entry two levels below root, sorted. */
static size_t list_cases(const char *root, char ***names)
{
	size_t count = 0, capacity = 0;
	DIR *top = opendir(root);
	struct dirent *category;

	*names = NULL;
	while (top && (category = readdir(top))) {
		char dir[4096];
		DIR *inner;
		struct dirent *entry;

		if (category->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", root, category->d_name);
		inner = opendir(dir);
		while (inner && (entry = readdir(inner))) {
			if (entry->d_name[0] == '.')
				continue;
			if (count == capacity) {
				capacity = capacity ? capacity * 2 : 64;
				*names = realloc(*names, capacity * sizeof(**names));
			}
			(*names)[count] =
			    malloc(strlen(category->d_name) + strlen(entry->d_name) + 2);
			sprintf((*names)[count++], "%s/%s", category->d_name, entry->d_name);
		}
		if (inner)
			closedir(inner);
	}
	if (top)
		closedir(top);
	if (count)
		qsort(*names, count, sizeof(**names), compare_names);
	return count;
}

int main(int argc, char **argv)
{
	char **names;
	size_t count;
	int failures = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_ROOT\n", argv[0]);
		return 2;
	}
	count = list_cases(argv[1], &names);
	if (count == 0) {
		fprintf(stderr, "%s: no trace found\n", argv[1]);
		return 1;
	}
	for (size_t i = 0; i < count; i++) {
		failures += !run_case(argv[1], names[i]);
		free(names[i]);
	}
	free(names);
	return failures ? 1 : 0;
}
