/*
 * clock_shift.c: an LTTng-UST clock plugin that runs the trace clock of a process ahead of
 * the host's by PROFOPT_TEST_CLOCK_SHIFT_NS nanoseconds (default 50 ms), as another host's
 * clock would be. Loaded by liblttng-ust from LTTNG_UST_CLOCK_PLUGIN=PATH (lttng-ust's
 * clock-override example); the clock keeps the default clock's name, UUID, frequency and
 * description, so its traces merge with the host's own.
 */
#include <stdint.h>
#include <stdlib.h>

#include <lttng/ust-clock.h>

static lttng_ust_clock_read64_function host_read64; /* the default clock */
static int64_t shift_ns = 50 * 1000 * 1000;

static uint64_t shifted_read64(void)
{
	return host_read64() + (uint64_t)shift_ns;
}

void lttng_ust_clock_plugin_init(void);

void lttng_ust_clock_plugin_init(void)
{
	lttng_ust_clock_freq_function freq;
	lttng_ust_clock_uuid_function uuid;
	lttng_ust_clock_name_function name;
	lttng_ust_clock_description_function description;
	const char *text = getenv("PROFOPT_TEST_CLOCK_SHIFT_NS");

	if (text && *text)
		shift_ns = strtoll(text, NULL, 10);
	if (lttng_ust_trace_clock_get_read64_cb(&host_read64) ||
	    lttng_ust_trace_clock_get_freq_cb(&freq) || lttng_ust_trace_clock_get_uuid_cb(&uuid) ||
	    lttng_ust_trace_clock_get_name_cb(&name) ||
	    lttng_ust_trace_clock_get_description_cb(&description))
		abort();
	if (lttng_ust_trace_clock_set_read64_cb(shifted_read64) ||
	    lttng_ust_trace_clock_set_freq_cb(freq) || lttng_ust_trace_clock_set_uuid_cb(uuid) ||
	    lttng_ust_trace_clock_set_name_cb(name) ||
	    lttng_ust_trace_clock_set_description_cb(description) ||
	    lttng_ust_enable_trace_clock_override())
		abort();
}
