/*
 * tracepoint_cost_tp.h: the "profopt_bench" LTTng-UST provider of the tracepoint cost
 * benchmark. Its span events carry exactly the payload of profopt:stage_begin/stage_end,
 * so that recording them raw is the baseline libprofopt's wrappers are compared with.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER profopt_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tracepoint_cost_tp.h"

#if !defined(TRACEPOINT_COST_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TRACEPOINT_COST_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

/* The LTTng-UST macro language is laid out by hand. */
/* clang-format off */

LTTNG_UST_TRACEPOINT_ENUM(profopt_bench, stage,
	LTTNG_UST_TP_ENUM_VALUES(
		lttng_ust_field_enum_value("forward", 5)
		lttng_ust_field_enum_value("preprocess", 2)
	)
)

LTTNG_UST_TRACEPOINT_EVENT_CLASS(profopt_bench, stage_class,
	LTTNG_UST_TP_ARGS(int, stage, const char *, label, int64_t, batch, int64_t, sample,
			  int64_t, cpu_ns),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_enum(profopt_bench, stage, int8_t, stage, stage)
		lttng_ust_field_string(label, label)
		lttng_ust_field_integer(int64_t, batch, batch)
		lttng_ust_field_integer(int64_t, sample, sample)
		lttng_ust_field_integer(int64_t, cpu_ns, cpu_ns)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt_bench, stage_class, profopt_bench, stage_begin,
	LTTNG_UST_TP_ARGS(int, stage, const char *, label, int64_t, batch, int64_t, sample,
			  int64_t, cpu_ns))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt_bench, stage_class, profopt_bench, stage_end,
	LTTNG_UST_TP_ARGS(int, stage, const char *, label, int64_t, batch, int64_t, sample,
			  int64_t, cpu_ns))

#endif /* TRACEPOINT_COST_TP_H */

/* clang-format on */
#include <lttng/tracepoint-event.h>
