/*
 * sequences.c: refuses a CTF sequence (a dynamic array) longer than any packet of the trace
 * could hold, before libbabeltrace2 allocates it.
 *
 * babeltrace2 2.0.4's CTF decoder creates a field for every element of a dynamic array as
 * soon as it reads the length, bt_field_array_dynamic_set_length(), before it reads one
 * element: one flipped bit in a stack sample's length field (24 code ids read as
 * 134,217,752) made the decoder grow to 7.2 GB in 21 s and die at the memory limit. No sink
 * or filter sees the event before that. So profopt-analyze defines that function itself and
 * exports it (the link option of po_ingest): the ctf plugin, which libbabeltrace2 loads
 * with dlopen(), finds the executable's definition first in the global symbol scope. It
 * refuses a length over the bound, adding the cause to the thread's babeltrace2 error, and
 * hands every other one to libbabeltrace2's own definition (dlsym(RTLD_NEXT)).
 *
 * The bound is the largest packet of the traces being decoded, in bytes: every sequence
 * LTTng writes holds integers of at least 8 bits (text sequences are decoded as strings and
 * never come here), and a sequence lies inside its packet. A program that links po_ingest
 * without the export keeps libbabeltrace2's function and no bound.
 */
#define _GNU_SOURCE
#include <babeltrace2/babeltrace.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>

#include "ingest_internal.h"

typedef bt_field_array_dynamic_set_length_status (*set_length_fn)(bt_field *, uint64_t);

/* The most elements a sequence may have in the current run; UINT64_MAX: no bound. */
static uint64_t sequence_max_elements = UINT64_MAX;

void po_sequence_bound_set(uint64_t max_elements)
{
	__atomic_store_n(&sequence_max_elements, max_elements, __ATOMIC_RELAXED);
}

/* The bound as the user reads it: packets are said in bytes, elements are at least one. */
static bt_field_array_dynamic_set_length_status refuse(uint64_t length, uint64_t max_elements)
{
	(void)bt_current_thread_error_append_cause_from_unknown(
	    "profopt", __FILE__, __LINE__,
	    "a sequence of %" PRIu64
	    " elements where the largest packet of the trace holds %" PRIu64
	    " bytes: its length field is damaged",
	    length, max_elements);
	return BT_FIELD_DYNAMIC_ARRAY_SET_LENGTH_STATUS_MEMORY_ERROR;
}

bt_field_array_dynamic_set_length_status bt_field_array_dynamic_set_length(bt_field *field,
									   uint64_t length)
{
	static set_length_fn library_set_length; /* libbabeltrace2's; found once */
	uint64_t max_elements = __atomic_load_n(&sequence_max_elements, __ATOMIC_RELAXED);
	set_length_fn next = __atomic_load_n(&library_set_length, __ATOMIC_ACQUIRE);

	if (length > max_elements)
		return refuse(length, max_elements);
	if (!next) {
		*(void **)&next = dlsym(RTLD_NEXT, "bt_field_array_dynamic_set_length");
		if (!next)
			return BT_FIELD_DYNAMIC_ARRAY_SET_LENGTH_STATUS_MEMORY_ERROR;
		__atomic_store_n(&library_set_length, next, __ATOMIC_RELEASE);
	}
	return next(field, length);
}
