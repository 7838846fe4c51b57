/*
 * pyframes_described.h: what the tests of the reader of Python stacks (pyframes_use.c,
 * pyframes_probe.c) give po_pyframes_walk as its describe: descriptions kept in a table,
 * newest last, and a describe that refuses, as a process that records nothing yet does.
 */
#ifndef PROFOPT_TEST_PYFRAMES_DESCRIBED_H
#define PROFOPT_TEST_PYFRAMES_DESCRIBED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct described {
	uint32_t id;
	char function[256], file[256];
	int32_t first_line;
};

static struct described described[8192];
static size_t described_count;

static bool describe(uint32_t code_id, const char *function, const char *file, int32_t first_line)
{
	if (described_count >= sizeof(described) / sizeof(described[0]))
		return true;
	described[described_count].id = code_id;
	snprintf(described[described_count].function, sizeof(described[0].function), "%s",
		 function);
	snprintf(described[described_count].file, sizeof(described[0].file), "%s", file);
	described[described_count++].first_line = first_line;
	return true;
}

/* A process that records nothing yet (before its announcement): no description emitted. */
static bool refuse(uint32_t code_id, const char *function, const char *file, int32_t first_line)
{
	(void)code_id;
	(void)function;
	(void)file;
	(void)first_line;
	return false;
}

/* The latest description of code id, or NULL. */
static const struct described *find(uint32_t id)
{
	for (size_t i = described_count; i-- > 0;)
		if (described[i].id == id)
			return &described[i];
	return NULL;
}

#endif /* PROFOPT_TEST_PYFRAMES_DESCRIBED_H */
