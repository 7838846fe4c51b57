/* status.c: names, exit codes and the error chain of status.h. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/status.h"

static const struct {
	const char *name;
	const char *description;
	int exit_code;
} status_table[PO_STATUS_COUNT] = {
#define PO_X(name, text, exit_status) [PO_STATUS_##name] = {#name, text, exit_status},
    PO_STATUSES(PO_X)
#undef PO_X
};

const char *po_status_name(enum po_status status)
{
	return (unsigned)status < PO_STATUS_COUNT ? status_table[status].name : "UNKNOWN";
}

const char *po_status_description(enum po_status status)
{
	return (unsigned)status < PO_STATUS_COUNT ? status_table[status].description : "unknown";
}

int po_status_exit_code(enum po_status status)
{
	return (unsigned)status < PO_STATUS_COUNT ? status_table[status].exit_code : 1;
}

void po_error_set(struct po_error *err, const char *fmt, ...)
{
	va_list args;

	if (!err)
		return;
	va_start(args, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, args);
	va_end(args);
}

void po_error_prepend(struct po_error *err, const char *fmt, ...)
{
	char context[PO_ERROR_MAX];
	char previous[PO_ERROR_MAX];
	va_list args;

	if (!err)
		return;
	va_start(args, fmt);
	vsnprintf(context, sizeof(context), fmt, args);
	va_end(args);
	if (!err->message[0]) {
		memcpy(err->message, context, sizeof(err->message));
		return;
	}
	memcpy(previous, err->message, sizeof(previous));
	/* Truncation keeps the outer context, which names the action that failed. */
	if (snprintf(err->message, sizeof(err->message), "%s: %s", context, previous) < 0)
		memcpy(err->message, previous, sizeof(err->message));
}

void po_outcome_add(struct po_outcome *outcome, enum po_status status, const struct po_error *cause,
		    struct po_error *err)
{
	outcome->tried++;
	if (status == PO_STATUS_OK)
		return;
	if (outcome->failures++ == 0) {
		outcome->first = status;
		*err = *cause;
	} else {
		po_error_append(err, "; %s", cause->message);
	}
}

void po_error_clear(struct po_error *err)
{
	if (err)
		err->message[0] = '\0';
}

const char *po_file_type_text(unsigned int st_mode)
{
	switch (st_mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO (named pipe)";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFLNK:
		return "a symbolic link";
	default:
		return "an unknown kind of file";
	}
}

void po_error_append(struct po_error *err, const char *fmt, ...)
{
	size_t length;
	va_list args;

	if (!err)
		return;
	length = strnlen(err->message, sizeof(err->message));
	if (length >= sizeof(err->message) - 1)
		return;
	va_start(args, fmt);
	vsnprintf(err->message + length, sizeof(err->message) - length, fmt, args);
	va_end(args);
}
