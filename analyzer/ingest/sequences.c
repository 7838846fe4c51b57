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
 * The bound is the largest packet of the traces being decoded, in bits, over the width of
 * one element: a sequence lies inside its packet, and its elements are integers or reals of
 * their declared width (a stack sample's 64-bit addresses: one eighth of the packet's bytes),
 * or at least one byte each (text sequences are decoded as strings and never come here). A
 * program that links po_ingest without the export keeps libbabeltrace2's function and no
 * bound.
 */
#define _GNU_SOURCE
#include <babeltrace2/babeltrace.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>

#include "ingest_internal.h"

typedef bt_field_array_dynamic_set_length_status (*set_length_fn)(bt_field *, uint64_t);

/*
 * The largest packet of the current run in bytes (the most elements of a sequence of bytes);
 * UINT64_MAX: no bound.
 */
static uint64_t sequence_max_elements = UINT64_MAX;

void po_sequence_bound_set(uint64_t max_elements)
{
	__atomic_store_n(&sequence_max_elements, max_elements, __ATOMIC_RELAXED);
}

/* The width of one element of the sequence field, in bits: 8 where it is not a number. */
static uint64_t element_bits(const bt_field *field)
{
	const bt_field_class *element = bt_field_class_array_borrow_element_field_class_const(
	    bt_field_borrow_class_const(field));
	bt_field_class_type type = bt_field_class_get_type(element);

	if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_INTEGER)) {
		uint64_t bits = bt_field_class_integer_get_field_value_range(element);

		return bits >= 8 ? bits : 8;
	}
	if (type == BT_FIELD_CLASS_TYPE_DOUBLE_PRECISION_REAL)
		return 64;
	if (type == BT_FIELD_CLASS_TYPE_SINGLE_PRECISION_REAL)
		return 32;
	return 8;
}

/* The bound as the user reads it: packets are said in bytes, elements in their width. */
static bt_field_array_dynamic_set_length_status refuse(uint64_t length, uint64_t packet_bytes,
						       uint64_t bits)
{
	(void)bt_current_thread_error_append_cause_from_unknown(
	    "profopt", __FILE__, __LINE__,
	    "a sequence of %" PRIu64 " elements of %" PRIu64
	    " bits where the largest packet of the trace holds %" PRIu64
	    " bytes: its length field is damaged",
	    length, bits, packet_bytes);
	return BT_FIELD_DYNAMIC_ARRAY_SET_LENGTH_STATUS_MEMORY_ERROR;
}

bt_field_array_dynamic_set_length_status bt_field_array_dynamic_set_length(bt_field *field,
									   uint64_t length)
{
	static set_length_fn library_set_length; /* libbabeltrace2's; found once */
	uint64_t max_elements = __atomic_load_n(&sequence_max_elements, __ATOMIC_RELAXED);
	set_length_fn next = __atomic_load_n(&library_set_length, __ATOMIC_ACQUIRE);

	if (max_elements != UINT64_MAX && length > max_elements / 8) {
		uint64_t bits = element_bits(field);

		if (length > max_elements / (bits / 8))
			return refuse(length, max_elements, bits);
	}
	if (!next) {
		*(void **)&next = dlsym(RTLD_NEXT, "bt_field_array_dynamic_set_length");
		if (!next)
			return BT_FIELD_DYNAMIC_ARRAY_SET_LENGTH_STATUS_MEMORY_ERROR;
		__atomic_store_n(&library_set_length, next, __ATOMIC_RELEASE);
	}
	return next(field, length);
}
