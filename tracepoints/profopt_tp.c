/* profopt_tp.c: instantiates the "profopt" LTTng-UST provider inside libprofopt. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "profopt_tp.h"
