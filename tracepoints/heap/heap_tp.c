/* heap_tp.c: instantiates the "profopt_heap" LTTng-UST provider inside libprofopt-heap. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "heap_tp.h"
