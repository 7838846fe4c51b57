/*
 * pyframes_probe.c: libprofopt's reader of Python stacks (tracepoints/pyframes.c) as a small
 * shared object that any CPython loads with ctypes.PyDLL (pyframes_probe.py), to compare
 * what it reads with the interpreter's own view on every version present. It neither links
 * with libpython nor includes its headers, as libprofopt does not.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "pyframes.h"
#include "pyframes_described.h"

#define PROBE_EXPORT __attribute__((visibility("default")))

/* po_pyframes_init's status (0, or a negative errno) and reason. */
PROBE_EXPORT int probe_init(void);
PROBE_EXPORT int probe_init(void)
{
	return po_pyframes_init();
}

PROBE_EXPORT const char *probe_reason(void);
PROBE_EXPORT const char *probe_reason(void)
{
	return po_pyframes_reason();
}

/* The line of the instruction at index (code units) of a code object. */
PROBE_EXPORT int probe_line(const void *code, int index);
PROBE_EXPORT int probe_line(const void *code, int index)
{
	return po_pyframes_line(code, index);
}

/* The calling thread's frames; how 0: described, 1: descriptions refused, 2: none asked. */
PROBE_EXPORT uint32_t probe_walk(int how, uint32_t *ids, uint32_t *lines, uint32_t max);
PROBE_EXPORT uint32_t probe_walk(int how, uint32_t *ids, uint32_t *lines, uint32_t max)
{
	return po_pyframes_walk(ids, lines, max, how == 0 ? describe : how == 1 ? refuse : NULL);
}

/* The latest description of code id: 1 with its fields copied out, 0 when none. */
PROBE_EXPORT int probe_described(uint32_t id, char *function, char *file, int32_t *first_line);
PROBE_EXPORT int probe_described(uint32_t id, char *function, char *file, int32_t *first_line)
{
	const struct described *code = find(id);

	if (!code)
		return 0;
	snprintf(function, sizeof(code->function), "%s", code->function);
	snprintf(file, sizeof(code->file), "%s", code->file);
	*first_line = code->first_line;
	return 1;
}

/* The nanoseconds repeat walks of the calling thread's stack took, each described. */
PROBE_EXPORT int64_t probe_walk_ns(uint32_t repeat);
PROBE_EXPORT int64_t probe_walk_ns(uint32_t repeat)
{
	uint32_t ids[128], lines[128];
	struct timespec start, end;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (uint32_t i = 0; i < repeat; i++)
		po_pyframes_walk(ids, lines, 128, describe);
	clock_gettime(CLOCK_MONOTONIC, &end);
	return (int64_t)(end.tv_sec - start.tv_sec) * 1000000000 + (end.tv_nsec - start.tv_nsec);
}
