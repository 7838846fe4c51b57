/*
 * recording.c: reads profopt-recording.txt, which profopt-record writes at the top of the
 * trace directory (docs/trace-format.md). Opens nothing that could block, reads at most
 * 4 KiB, and accepts only the lines it knows, each once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ingest.h"

#define RECORDING_MAX 4096

static bool parse_int(const char *text, int64_t low, int64_t high, int64_t *out)
{
	char *end;
	long long value;

	errno = 0;
	value = strtoll(text, &end, 10);
	if (errno || end == text || *end != '\0' || value < low || value > high)
		return false;
	*out = value;
	return true;
}

static bool id_valid(const char *text)
{
	size_t length = strlen(text);

	if (length == 0 || length > PO_RECORDING_TEXT_MAX)
		return false;
	for (size_t i = 0; i < length; i++)
		if (!strchr("0123456789abcdef", text[i]))
			return false;
	return true;
}

/* One "key value" line into recording; false when it is not one of the known lines. */
static bool take_line(char *line, struct po_recording *recording)
{
	char *value = strchr(line, ' ');
	int64_t number;

	if (!value)
		return false;
	*value++ = '\0';
	if (strcmp(line, "recording") == 0 && !recording->id[0] && id_valid(value)) {
		snprintf(recording->id, sizeof(recording->id), "%s", value);
		return true;
	}
	if (strcmp(line, "command_pid") == 0 && parse_int(value, 1, INT32_MAX, &number)) {
		recording->command_pid = (int32_t)number;
		return true;
	}
	if (strcmp(line, "command_start_ns") == 0 && parse_int(value, 0, INT64_MAX, &number)) {
		recording->start_ns = number;
		return true;
	}
	if (strcmp(line, "command_end_ns") == 0 && parse_int(value, 1, INT64_MAX, &number)) {
		recording->end_ns = number;
		return true;
	}
	if (strcmp(line, "recorder_cpu_ns") == 0 && recording->recorder_cpu_ns < 0 &&
	    parse_int(value, 0, INT64_MAX, &number)) {
		recording->recorder_cpu_ns = number;
		return true;
	}
	if (strcmp(line, "command_exit") == 0 && parse_int(value, 0, 255, &number)) {
		recording->exit_status = (int)number;
		return true;
	}
	return false;
}

enum po_status po_recording_read(const char *trace_dir, struct po_recording *recording,
				 struct po_error *err)
{
	char path[PATH_MAX], text[RECORDING_MAX + 1], *line, *next;
	struct stat info;
	ssize_t length;
	int fd, line_number = 0;

	*recording =
	    (struct po_recording){.command_pid = -1, .exit_status = -1, .recorder_cpu_ns = -1};
	if ((size_t)snprintf(path, sizeof(path), "%s/" PO_RECORDING_FILE, trace_dir) >=
	    sizeof(path))
		return PO_STATUS_OK;
	if (lstat(path, &info) != 0)
		return PO_STATUS_OK; /* not recorded by profopt-record, or an older one */
	if (!S_ISREG(info.st_mode)) {
		po_error_set(err, "%s: not a regular file", path);
		return PO_STATUS_INPUT;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		po_error_set(err, "%s: %s", path, strerror(errno));
		return PO_STATUS_INPUT;
	}
	length = fstat(fd, &info) == 0 && S_ISREG(info.st_mode) ? read(fd, text, sizeof(text)) : -1;
	close(fd);
	if (length < 0 || length > RECORDING_MAX) {
		po_error_set(err, "%s: %s", path,
			     length < 0 ? "cannot be read" : "larger than 4 KiB");
		return PO_STATUS_INPUT;
	}
	text[length] = '\0';
	if (memchr(text, '\0', (size_t)length)) {
		po_error_set(err, "%s: holds binary data", path);
		return PO_STATUS_INPUT;
	}
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		line_number++;
		if (line_number == 1 ? strcmp(line, "profopt-recording/1") != 0
				     : !take_line(line, recording)) {
			po_error_set(err, "%s: line %d is not one profopt-record writes", path,
				     line_number);
			*recording = (struct po_recording){
			    .command_pid = -1, .exit_status = -1, .recorder_cpu_ns = -1};
			return PO_STATUS_INPUT;
		}
	}
	if (!recording->id[0]) {
		po_error_set(err, "%s: names no recording", path);
		*recording = (struct po_recording){
		    .command_pid = -1, .exit_status = -1, .recorder_cpu_ns = -1};
		return PO_STATUS_INPUT;
	}
	recording->present = true;
	return PO_STATUS_OK;
}
