/* saturate.h: integer arithmetic of the model that clamps instead of overflowing. */
#ifndef PO_MODEL_SATURATE_H
#define PO_MODEL_SATURATE_H

#include <stdint.h>

/* a + b, clamped to the int64_t range: counts and times in damaged traces may be huge. */
static inline int64_t po_add_sat(int64_t a, int64_t b)
{
	int64_t sum;

	if (__builtin_add_overflow(a, b, &sum))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return sum;
}

#endif /* PO_MODEL_SATURATE_H */
