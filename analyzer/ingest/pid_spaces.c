/*
 * pid_spaces.c: a directory holding several recordings (one per host of a distributed
 * job, each profopt-record's output directory) holds several pid spaces, and the same pid
 * in two of them is two processes. Each trace's recording is the nearest directory above
 * it, up to the root, that holds profopt-recording.txt; with two recordings or more, the
 * k-th of them (in path order) has its pids moved by k << PO_RECORDING_PID_SHIFT
 * (model/event.h). One recording, or none, leaves every pid as it is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest.h"
#include "ingest_internal.h"

#define RECORDING_FILE "profopt-recording.txt"

/* The length of the nearest directory of path, up to root, holding the recording file; 0. */
static size_t recording_of(const char *path, size_t root_length)
{
	char candidate[4096];
	size_t length = strlen(path);

	while (length >= root_length) {
		if ((size_t)snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)length, path,
				     RECORDING_FILE) < sizeof(candidate) &&
		    access(candidate, F_OK) == 0)
			return length;
		while (length > root_length && path[length - 1] != '/')
			length--;
		if (length <= root_length)
			break;
		length--; /* the slash */
	}
	return 0;
}

/*
 * Each trace's recording group (0, 1, ... in path order) into group_of, and the length of
 * its recording's directory (0: none) into recording; the number of groups less one.
 */
static int32_t recording_groups(const char *root, const struct po_trace_list *traces,
				int32_t *group_of, size_t *recording)
{
	size_t root_length = strlen(root);
	int32_t group = 0;

	while (root_length > 1 && root[root_length - 1] == '/')
		root_length--;
	for (size_t i = 0; i < traces->count; i++)
		recording[i] = recording_of(traces->paths[i], root_length);
	/* paths are sorted: a recording's traces follow each other */
	for (size_t i = 0; i < traces->count; i++) {
		if (i > 0 && (recording[i] != recording[i - 1] ||
			      strncmp(traces->paths[i], traces->paths[i - 1], recording[i]) != 0))
			group++;
		group_of[i] = group;
	}
	return group;
}

enum po_status po_trace_list_pid_bases(const char *root, const struct po_trace_list *traces,
				       int32_t *bases, struct po_error *err)
{
	size_t *recording = calloc(traces->count + 1, sizeof(size_t));
	int32_t group;

	if (!recording) {
		po_error_set(err, "Failed to find the recordings of %s: out of memory", root);
		return PO_STATUS_NOMEM;
	}
	group = recording_groups(root, traces, bases, recording);
	free(recording);
	if (traces->count > 1 && po_trace_is_kineto(traces->paths[0])) {
		/* torch.profiler writes a file per rank, from hosts of their own */
		group = (int32_t)(traces->count - 1);
		for (size_t i = 0; i < traces->count; i++)
			bases[i] = (int32_t)i;
	}
	if (group >= (INT32_C(1) << (31 - PO_RECORDING_PID_SHIFT))) {
		po_error_set(err, "%s holds %d recordings: at most %d are analysed together", root,
			     (int)group + 1, (int)(INT32_C(1) << (31 - PO_RECORDING_PID_SHIFT)));
		return PO_STATUS_INPUT;
	}
	for (size_t i = 0; i < traces->count; i++)
		bases[i] = group ? bases[i] << PO_RECORDING_PID_SHIFT : 0;
	return PO_STATUS_OK;
}

enum po_status po_recordings_list(const char *root, struct po_recording **out, size_t *count,
				  struct po_error *err)
{
	struct po_trace_list traces = {0};
	size_t *recording = NULL;
	int32_t *group_of = NULL, groups;
	enum po_status status = po_trace_list_find(root, &traces, err);

	*out = NULL;
	*count = 0;
	if (status != PO_STATUS_OK || traces.count == 0)
		goto done;
	recording = calloc(traces.count, sizeof(size_t));
	group_of = calloc(traces.count, sizeof(int32_t));
	if (!recording || !group_of) {
		status = PO_STATUS_NOMEM;
		goto done;
	}
	groups = recording_groups(root, &traces, group_of, recording) + 1;
	if (groups < 2 || groups > (INT32_C(1) << (31 - PO_RECORDING_PID_SHIFT)))
		goto done; /* one recording: the root's own file says it; too many: refused later */
	*out = calloc((size_t)groups, sizeof(**out));
	if (!*out) {
		status = PO_STATUS_NOMEM;
		goto done;
	}
	for (int32_t g = 0; g < groups; g++)
		(*out)[g] = (struct po_recording){
		    .command_pid = -1, .exit_status = -1, .recorder_cpu_ns = -1};
	for (size_t i = 0; status == PO_STATUS_OK && i < traces.count; i++) {
		char dir[4096];

		if ((i > 0 && group_of[i] == group_of[i - 1]) || !recording[i])
			continue;
		snprintf(dir, sizeof(dir), "%.*s", (int)recording[i], traces.paths[i]);
		status = po_recording_read(dir, &(*out)[group_of[i]], err);
	}
	*count = (size_t)groups;
	if (status != PO_STATUS_OK) {
		free(*out);
		*out = NULL;
		*count = 0;
	}
done:
	if (status == PO_STATUS_NOMEM)
		po_error_set(err, "Failed to find the recordings of %s: out of memory", root);
	free(recording);
	free(group_of);
	po_trace_list_fini(&traces);
	return status;
}
