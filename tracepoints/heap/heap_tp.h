/*
 * heap_tp.h: the LTTng-UST provider "profopt_heap" (private to libprofopt-heap).
 *
 * One event, alloc_callers: the return addresses on the stack of an allocation that
 * liblttng-ust-libc-wrapper also records (docs/trace-format.md, "Heap events"). A change
 * here is a change of the trace format and must be made there too.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER profopt_heap

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./heap_tp.h"

#if !defined(PROFOPT_HEAP_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define PROFOPT_HEAP_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

/* The LTTng-UST macro language is laid out by hand. */
/* clang-format off */

LTTNG_UST_TRACEPOINT_EVENT(profopt_heap, alloc_callers,
	LTTNG_UST_TP_ARGS(uint64_t, ptr, const uint64_t *, callers, uint8_t, count),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer_hex(uint64_t, ptr, ptr)
		lttng_ust_field_sequence_hex(uint64_t, callers, callers, uint8_t, count)
	)
)

/* clang-format on */

#endif /* PROFOPT_HEAP_TP_H */

#include <lttng/tracepoint-event.h>
