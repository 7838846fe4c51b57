/*
 * fuzz_kineto.c: a libFuzzer target over the torch.profiler (Kineto) reader and mapping
 * (analyzer/ingest/kineto_read.c, kineto_map.c): any bytes, as the file a user gives
 * profopt-analyze, must be read and mapped, or refused with a status, without a crash, a
 * leak or undefined behaviour; the events come out in time order, and each stack sample
 * weighs some time and holds frames. The input goes through a memory file, the reader's
 * own path (zlib reads it plain or gzip). Built with clang -fsanitize=fuzzer when
 * PROFOPT_FUZZ is on; otherwise linked with replay_main.c to run the committed corpus
 * (tests/fuzz/corpus-kineto) as a regression test.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kineto_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("kineto-fuzz", MFD_CLOEXEC);
	struct po_kineto_map *map = NULL;
	struct po_kineto_event event;
	struct po_error err = {{0}};
	int64_t previous_ns = INT64_MIN;
	bool ended = false;
	char path[64];

	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (po_kineto_map_create(&map) == PO_STATUS_OK &&
	    po_kineto_map_read(map, path, &err) == PO_STATUS_OK &&
	    po_kineto_map_finish(map) == PO_STATUS_OK) {
		while (po_kineto_map_next(map, &event, &ended) == PO_STATUS_OK && !ended) {
			size_t depth;

			if (event.time_ns < previous_ns)
				abort(); /* the source hands babeltrace2 events in time order */
			previous_ns = event.time_ns;
			/* a sample weighs time that went by and has frames, no more than kept */
			if (event.kind == PO_EV_STACK_SAMPLE &&
			    (event.values[1] <= 0 || !po_kineto_map_borrow_frames(map, &depth) ||
			     depth == 0 || depth > PO_STACK_DEPTH_MAX))
				abort();
		}
	}
	po_kineto_map_destroy(map);
	close(fd);
	return 0;
}
