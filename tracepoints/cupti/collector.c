/*
 * collector.c: libprofopt-cupti.so, the GPU activity collector. Loaded by the CUDA driver
 * through CUDA_INJECTION64_PATH (it calls InitializeInjection) or by the Python module,
 * it records, through CUPTI's Activity API, every kernel, copy and memset with its device,
 * stream and times, and device memory allocations and releases, as profopt events; and,
 * through the Callback API on the calling thread, each kernel launch (profopt_gpu_launch,
 * with the correlation id of its activity record) and each host wait for the device
 * (cudaDeviceSynchronize and the like: profopt_gpu_sync_begin/end).
 *
 * Times: CUPTI stamps records with CLOCK_MONOTONIC, the trace's clock, through the
 * timestamp callback; where CUPTI cannot take one, the offset between the two clocks is
 * measured at start and at every flush (docs/gpu.md states the error).
 *
 * Buffers of PROFOPT_CUPTI_BUFFER_KB (default 8192) are flushed every PROFOPT_CUPTI_FLUSH_MS
 * (default 500) by a thread of the collector, before fork, and at exit, when cuptiFinalize
 * also detaches CUPTI so that nothing keeps costing. Records CUPTI dropped are recorded as a
 * gpu_records_dropped counter, which the analysis reports as trace loss.
 *
 * PROFOPT_CUPTI_CALLBACKS=0 leaves the Callback API off: no launches and host waits are
 * recorded (GPU time is not tied to the stages that launched it), for a lower cost per
 * kernel launched. Each device the program can use is described once (profopt_gpu_device: name,
 * memory, multiprocessors, compute capability), read from the driver by the flush thread once the
 * program has initialised CUDA. PROFOPT_CUPTI_VERBOSE=1 has the collector say at exit what
 * it recorded and which clock it used.
 *
 * It never harms the program: when CUPTI cannot start (no driver, another tool holds the
 * callback subscription, a CUPTI of another major version) it says so once on stderr and
 * records nothing, or only what it can.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>

#include "cupti_convert.h"
#include "profopt.h"

/* Only these are exported: the driver's entry point and the start/stop the Python module calls. */
#define PO_EXPORT __attribute__((visibility("default")))

#define DEFAULT_BUFFER_KB 8192
#define DEFAULT_FLUSH_MS 500
#define BUFFER_ALIGN 8

struct collector {
	pthread_mutex_t lock; /* start and stop */
	bool started;
	bool activities;     /* the Activity API is on */
	bool callbacks;	     /* the Callback API subscription is ours */
	bool clock_is_trace; /* CUPTI stamps with CLOCK_MONOTONIC */
	int64_t offset_ns;   /* else: trace clock - CUPTI clock, measured */
	size_t buffer_bytes;
	unsigned flush_ms;
	CUpti_SubscriberHandle subscriber;
	pthread_t flusher;
	bool flusher_running;
	pthread_mutex_t flush_lock;
	pthread_cond_t flush_wake;
	bool stopping;
	struct po_cupti_counts counts; /* written by CUPTI's buffer thread */
	uint64_t dropped;
	bool devices_described; /* profopt_gpu_device written for every device */
	bool verbose;		/* PROFOPT_CUPTI_VERBOSE: a summary on stderr at stop */
};

static struct collector collector = {.lock = PTHREAD_MUTEX_INITIALIZER,
				     .flush_lock = PTHREAD_MUTEX_INITIALIZER,
				     .flush_wake = PTHREAD_COND_INITIALIZER};

static void say(const char *what, CUptiResult result)
{
	const char *text = NULL;

	if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || !text)
		text = "unknown CUPTI error";
	fprintf(stderr, "profopt-cupti: %s: %s\n", what, text);
}

static uint64_t monotonic_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* The two clocks' offset, read between two reads of the trace clock (the closest pair). */
static void measure_offset(void)
{
	int64_t best_gap = INT64_MAX;

	for (int i = 0; i < 5; i++) {
		uint64_t before = monotonic_ns(), cupti = 0, after;

		if (cuptiGetTimestamp(&cupti) != CUPTI_SUCCESS)
			return;
		after = monotonic_ns();
		if ((int64_t)(after - before) < best_gap) {
			best_gap = (int64_t)(after - before);
			collector.offset_ns =
			    (int64_t)(before + (after - before) / 2) - (int64_t)cupti;
		}
	}
}

static unsigned env_unsigned(const char *name, unsigned fallback, unsigned low, unsigned high)
{
	const char *text = getenv(name);
	char *end;
	unsigned long value;

	if (!text || !*text)
		return fallback;
	errno = 0;
	value = strtoul(text, &end, 10);
	if (errno || *end || value < low || value > high) {
		fprintf(stderr, "profopt-cupti: %s=%s is not a number from %u to %u; using %u\n",
			name, text, low, high, fallback);
		return fallback;
	}
	return (unsigned)value;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(BUFFER_ALIGN, collector.buffer_bytes);
	*size = *buffer ? collector.buffer_bytes : 0;
	*max_records = 0; /* as many as fit */
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	CUpti_Activity *record = NULL;
	uint64_t incomplete_before = collector.counts.incomplete;
	size_t dropped = 0;
	uint64_t lost;

	(void)size;
	if (!collector.clock_is_trace)
		measure_offset();
	while (valid && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
		struct po_cupti_event event;

		po_cupti_emit(po_cupti_convert(record,
					       collector.clock_is_trace ? 0 : collector.offset_ns,
					       &event, &collector.counts),
			      &event);
	}
	if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) != CUPTI_SUCCESS)
		dropped = 0;
	collector.dropped += dropped;
	/* Records of unfinished work (a forced flush) are lost too: the trace says so. */
	lost = dropped + (collector.counts.incomplete - incomplete_before);
	if (lost)
		profopt_counter(PROFOPT_COUNTER_GPU_RECORDS_DROPPED, -1, (int64_t)lost);
	free(buffer);
}

/*
 * On the calling thread. A runtime call goes on into the driver, which calls back too:
 * driver calls are recorded only when the program made them directly (no runtime call is
 * open on the thread).
 */
static __thread int runtime_depth;

static void CUPTIAPI on_callback(void *data, CUpti_CallbackDomain domain, CUpti_CallbackId id,
				 const void *info_pointer)
{
	const CUpti_CallbackData *info = info_pointer;
	enum po_cupti_api api = po_cupti_api_of(domain, id);
	bool enter = info->callbackSite == CUPTI_API_ENTER;

	(void)data;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		runtime_depth += enter ? 1 : -1;
	else if (runtime_depth > 0)
		return;
	/* The kernel's name comes with its activity record: the launch carries none. */
	if (api == PO_CUPTI_API_LAUNCH && enter)
		profopt_gpu_launch(-1, -1, info->correlationId, NULL);
	else if (api == PO_CUPTI_API_SYNC && enter)
		profopt_gpu_sync_begin(-1, -1);
	else if (api == PO_CUPTI_API_SYNC)
		profopt_gpu_sync_end(-1, -1);
}

/* The driver's device queries, looked up in libcuda (the collector does not link it). */
struct driver_api {
	CUresult (*get_count)(int *);
	CUresult (*get)(CUdevice *, int);
	CUresult (*get_name)(char *, int, CUdevice);
	CUresult (*total_mem)(size_t *, CUdevice);
	CUresult (*get_attribute)(int *, CUdevice_attribute, CUdevice);
};

static bool driver_api_load(struct driver_api *api)
{
	void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);

	if (!driver)
		return false;
	*(void **)&api->get_count = dlsym(driver, "cuDeviceGetCount");
	*(void **)&api->get = dlsym(driver, "cuDeviceGet");
	*(void **)&api->get_name = dlsym(driver, "cuDeviceGetName");
	*(void **)&api->total_mem = dlsym(driver, "cuDeviceTotalMem_v2");
	*(void **)&api->get_attribute = dlsym(driver, "cuDeviceGetAttribute");
	dlclose(driver); /* RTLD_NOLOAD: the program's own reference keeps it loaded */
	return api->get_count && api->get && api->get_name && api->total_mem && api->get_attribute;
}

static int device_attribute(const struct driver_api *api, CUdevice device,
			    CUdevice_attribute attribute)
{
	int value = -1;

	return api->get_attribute(&value, attribute, device) == CUDA_SUCCESS ? value : -1;
}

/*
 * Describes every device once the program has initialised CUDA (until then the driver
 * answers CUDA_ERROR_NOT_INITIALIZED and the next flush tries again).
 */
static void describe_devices(void)
{
	struct driver_api api;
	int count = 0;

	if (collector.devices_described || !driver_api_load(&api) ||
	    api.get_count(&count) != CUDA_SUCCESS)
		return;
	for (int ordinal = 0; ordinal < count; ordinal++) {
		CUdevice device;
		char name[256] = "";
		size_t memory = 0;

		if (api.get(&device, ordinal) != CUDA_SUCCESS)
			continue;
		if (api.get_name(name, (int)sizeof(name), device) != CUDA_SUCCESS)
			name[0] = '\0';
		if (api.total_mem(&memory, device) != CUDA_SUCCESS)
			memory = 0;
		profopt_gpu_device(
		    ordinal, name, memory,
		    device_attribute(&api, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
		    device_attribute(&api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
		    device_attribute(&api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
	}
	collector.devices_described = true;
}

/*
 * A default flush returns the buffers whose records are all complete; a forced one also
 * those holding work still running, whose records then have no end and are lost. Only
 * the last flush (at stop) is forced, after a default one.
 */
static void flush_now(bool forced)
{
	CUptiResult result = cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);

	if (result != CUPTI_SUCCESS && result != CUPTI_ERROR_NOT_INITIALIZED)
		say("flushing the activity buffers failed", result);
}

static void *flusher_main(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&collector.flush_lock);
	while (!collector.stopping) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += collector.flush_ms / 1000;
		until.tv_nsec += (long)(collector.flush_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&collector.flush_wake, &collector.flush_lock, &until);
		if (collector.stopping)
			break;
		pthread_mutex_unlock(&collector.flush_lock);
		describe_devices();
		flush_now(false);
		pthread_mutex_lock(&collector.flush_lock);
	}
	pthread_mutex_unlock(&collector.flush_lock);
	return NULL;
}

static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_MEMORY2,
};

/* Whether a CUDA driver is installed: without one CUPTI fails with an unhelpful error. */
static bool have_driver(void)
{
	void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);

	if (!driver) {
		fprintf(stderr,
			"profopt-cupti: no GPU activity recorded: no CUDA driver on this machine "
			"(%s)\n",
			dlerror());
		return false;
	}
	dlclose(driver);
	return true;
}

static bool enable_activities(void)
{
	CUptiResult result;

	result = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (result != CUPTI_SUCCESS) {
		say("no GPU activity recorded: the activity buffers could not be registered",
		    result);
		return false;
	}
	collector.clock_is_trace =
	    cuptiActivityRegisterTimestampCallback(monotonic_ns) == CUPTI_SUCCESS;
	if (!collector.clock_is_trace)
		measure_offset();
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		result = cuptiActivityEnable(kinds[i]);
		if (result != CUPTI_SUCCESS) {
			say("no GPU activity recorded: CUPTI could not start", result);
			for (size_t j = 0; j < i; j++)
				cuptiActivityDisable(kinds[j]);
			return false;
		}
	}
	return true;
}

static void enable_callbacks(void)
{
	CUptiResult result = cuptiSubscribe(&collector.subscriber, on_callback, NULL);
	const struct po_cupti_api_call *calls;
	size_t call_count, failures = 0;

	if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		fprintf(stderr,
			"profopt-cupti: another tool in this program uses CUPTI's callbacks "
			"(a profiler?): kernel launches and host waits are not recorded, "
			"GPU activity is\n");
		return;
	}
	if (result != CUPTI_SUCCESS) {
		say("kernel launches and host waits are not recorded", result);
		return;
	}
	collector.callbacks = true;
	calls = po_cupti_api_calls(&call_count);
	for (size_t i = 0; i < call_count; i++)
		if (cuptiEnableCallback(1, collector.subscriber, calls[i].domain, calls[i].id) !=
		    CUPTI_SUCCESS)
			failures++;
	if (failures)
		fprintf(stderr,
			"profopt-cupti: kernel launches and host waits are only partly "
			"recorded (%zu of %zu callbacks could not be enabled)\n",
			failures, call_count);
}

static void fork_prepare(void)
{
	if (collector.activities)
		flush_now(false);
}

/* A forked child (a data-loader worker) has no CUPTI session and no flush thread. */
static void fork_child(void)
{
	collector.started = collector.activities = collector.callbacks = false;
	collector.flusher_running = false;
}

static void say_what_was_recorded(void)
{
	const struct po_cupti_counts *counts = &collector.counts;

	fprintf(stderr,
		"profopt-cupti: pid %ld recorded %llu kernels, %llu copies, %llu memsets, "
		"%llu allocations, %llu releases; %llu records with impossible times, "
		"%llu of unfinished work (lost), %llu of other kinds, %llu dropped by CUPTI; "
		"clock: %s; launches and waits: %s\n",
		(long)getpid(), (unsigned long long)counts->kernels,
		(unsigned long long)counts->copies, (unsigned long long)counts->memsets,
		(unsigned long long)counts->allocations, (unsigned long long)counts->releases,
		(unsigned long long)counts->bad_times, (unsigned long long)counts->incomplete,
		(unsigned long long)counts->skipped, (unsigned long long)collector.dropped,
		collector.clock_is_trace ? "CUPTI stamps CLOCK_MONOTONIC (timestamp callback)"
					 : "offset to CUPTI's clock measured at each flush",
		collector.callbacks ? "recorded" : "not recorded");
}

static void stop(void)
{
	pthread_mutex_lock(&collector.lock);
	if (!collector.started) {
		pthread_mutex_unlock(&collector.lock);
		return;
	}
	if (collector.flusher_running) {
		pthread_mutex_lock(&collector.flush_lock);
		collector.stopping = true;
		pthread_cond_signal(&collector.flush_wake);
		pthread_mutex_unlock(&collector.flush_lock);
		pthread_join(collector.flusher, NULL);
		collector.flusher_running = false;
	}
	if (collector.activities) {
		describe_devices();
		flush_now(false);
		flush_now(true);
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			cuptiActivityDisable(kinds[i]);
	}
	if (collector.callbacks)
		cuptiUnsubscribe(collector.subscriber);
	if (collector.activities || collector.callbacks)
		cuptiFinalize();
	if (collector.verbose)
		say_what_was_recorded();
	collector.activities = collector.callbacks = false;
	collector.started = false;
	pthread_mutex_unlock(&collector.lock);
}

static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

static void install_hooks(void)
{
	pthread_atfork(fork_prepare, NULL, fork_child);
	atexit(stop);
}

/*
 * Starts the collector once per process; 0 when it records GPU activity, else -1. Whoever
 * starts it (the driver through InitializeInjection, or the Python module), the buffers
 * are flushed before fork and at exit.
 */
PO_EXPORT int profopt_cupti_start(void)
{
	uint32_t version = 0;
	int status = -1;

	pthread_once(&hooks_once, install_hooks);
	pthread_mutex_lock(&collector.lock);
	if (collector.started) {
		status = collector.activities ? 0 : -1;
		goto out;
	}
	collector.started = true;
	collector.buffer_bytes =
	    (size_t)env_unsigned("PROFOPT_CUPTI_BUFFER_KB", DEFAULT_BUFFER_KB, 64, 1u << 20) * 1024;
	collector.flush_ms = env_unsigned("PROFOPT_CUPTI_FLUSH_MS", DEFAULT_FLUSH_MS, 10, 600000);
	collector.verbose = env_unsigned("PROFOPT_CUPTI_VERBOSE", 0, 0, 1) == 1;
	if (cuptiGetVersion(&version) != CUPTI_SUCCESS ||
	    version / 10000 != CUPTI_API_VERSION / 10000) {
		fprintf(stderr,
			"profopt-cupti: no GPU activity recorded: this CUPTI has API version %u, "
			"the collector was built for %u\n",
			version, (unsigned)CUPTI_API_VERSION);
		goto out;
	}
	collector.activities = have_driver() && enable_activities();
	if (!collector.activities)
		goto out;
	if (env_unsigned("PROFOPT_CUPTI_CALLBACKS", 1, 0, 1))
		enable_callbacks();
	collector.stopping = false;
	collector.flusher_running =
	    pthread_create(&collector.flusher, NULL, flusher_main, NULL) == 0;
	if (!collector.flusher_running)
		fprintf(stderr, "profopt-cupti: no flush thread; buffers are flushed when full and "
				"at exit\n");
	status = 0;
out:
	pthread_mutex_unlock(&collector.lock);
	return status;
}

/* Flushes, detaches CUPTI (cuptiFinalize) and stops; nothing is recorded after. */
PO_EXPORT void profopt_cupti_stop(void)
{
	stop();
}

/* How many records were kept and dropped so far (for the program's own checks). */
PO_EXPORT void profopt_cupti_counts(uint64_t *kernels, uint64_t *copies, uint64_t *dropped)
{
	*kernels = collector.counts.kernels;
	*copies = collector.counts.copies + collector.counts.memsets;
	*dropped = collector.dropped;
}

/* The CUDA driver calls this when CUDA_INJECTION64_PATH names this library. */
PO_EXPORT int InitializeInjection(void)
{
	profopt_cupti_start();
	return 1; /* the program goes on whatever happened here */
}
