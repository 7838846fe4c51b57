/*
 * device.c: a simulated GPU. Launched work runs in order on one thread (stream 0 of
 * device 0) that sleeps for each item's duration and records it with its real
 * CLOCK_MONOTONIC start and end, as an activity API would report a kernel.
 */
#include <pthread.h>
#include <stdlib.h>

#include "profopt.h"
#include "sim.h"

#define QUEUE_CAPACITY 1024

struct device_op {
	enum profopt_gpu_kind kind;
	const char *name; /* weak: a string literal */
	uint64_t bytes;
	int64_t duration_ns;
	uint64_t correlation_id;
	int64_t grid_blocks; /* kernels: recorded with their launch shape when > 0 */
};

struct sim_device {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct device_op queue[QUEUE_CAPACITY];
	uint64_t launched;  /* ops queued so far */
	uint64_t completed; /* ops finished so far */
	uint64_t last_correlation_id;
	int started; /* the thread runs: its start-up allocations are done */
	int stopping;
};

static void run_op(const struct device_op *op)
{
	struct profopt_gpu_record record = {
	    .device = 0,
	    .stream = 0,
	    .kind = op->kind,
	    .name = op->name,
	    .bytes = op->bytes,
	    .correlation_id = op->correlation_id,
	};

	record.start_ns = profopt_now_ns();
	sim_sleep(op->duration_ns);
	record.end_ns = profopt_now_ns();
	if (op->kind == PROFOPT_GPU_KERNEL && op->grid_blocks > 0) {
		struct profopt_gpu_kernel_shape shape = {.grid_x = (uint32_t)op->grid_blocks,
							 .grid_y = 1,
							 .grid_z = 1,
							 .block_x = 256,
							 .block_y = 1,
							 .block_z = 1,
							 .registers_per_thread = 64};

		profopt_gpu_kernel(&record, &shape);
		return;
	}
	profopt_gpu_activity(&record);
}

static void *device_main(void *arg)
{
	struct sim_device *device = arg;
	struct device_op op;

	pthread_mutex_lock(&device->lock);
	device->started = 1;
	pthread_cond_broadcast(&device->changed);
	for (;;) {
		while (device->completed == device->launched && !device->stopping)
			pthread_cond_wait(&device->changed, &device->lock);
		if (device->completed == device->launched)
			break;
		op = device->queue[device->completed % QUEUE_CAPACITY];
		pthread_mutex_unlock(&device->lock);
		run_op(&op);
		pthread_mutex_lock(&device->lock);
		device->completed++;
		pthread_cond_broadcast(&device->changed);
	}
	pthread_mutex_unlock(&device->lock);
	return NULL;
}

enum po_status sim_device_create(struct sim_device **device_out, struct po_error *err)
{
	struct sim_device *device = calloc(1, sizeof(*device));

	if (!device) {
		po_error_set(err, "Failed to allocate the simulated device");
		return PO_STATUS_NOMEM;
	}
	pthread_mutex_init(&device->lock, NULL);
	pthread_cond_init(&device->changed, NULL);
	if (pthread_create(&device->thread, NULL, device_main, device) != 0) {
		free(device);
		po_error_set(err, "Failed to start the simulated device thread");
		return PO_STATUS_INTERNAL;
	}
	/*
	 * Wait until the thread runs: the loader forks next, and a fork while a new thread
	 * is still allocating its start-up state leaves a sanitizer's allocator locked
	 * forever in the child (glibc's malloc is safe across fork, AddressSanitizer's in
	 * GCC 12 is not).
	 */
	pthread_mutex_lock(&device->lock);
	while (!device->started)
		pthread_cond_wait(&device->changed, &device->lock);
	pthread_mutex_unlock(&device->lock);
	*device_out = device;
	return PO_STATUS_OK;
}

/* Runs what is queued, then stops the thread. */
void sim_device_destroy(struct sim_device *device)
{
	if (!device)
		return;
	pthread_mutex_lock(&device->lock);
	device->stopping = 1;
	pthread_cond_broadcast(&device->changed);
	pthread_mutex_unlock(&device->lock);
	pthread_join(device->thread, NULL);
	pthread_mutex_destroy(&device->lock);
	pthread_cond_destroy(&device->changed);
	free(device);
}

static void enqueue(struct sim_device *device, struct device_op *op, int same_launch)
{
	pthread_mutex_lock(&device->lock);
	/* A full queue blocks the host, as a full launch queue does on a real GPU. */
	while (device->launched - device->completed >= QUEUE_CAPACITY)
		pthread_cond_wait(&device->changed, &device->lock);
	if (same_launch && device->launched) {
		op->correlation_id = device->last_correlation_id;
	} else {
		op->correlation_id = device->launched + 1;
		device->last_correlation_id = op->correlation_id;
		profopt_gpu_launch(0, 0, op->correlation_id, op->name);
	}
	device->queue[device->launched % QUEUE_CAPACITY] = *op;
	device->launched++;
	pthread_cond_broadcast(&device->changed);
	pthread_mutex_unlock(&device->lock);
}

void sim_device_launch_kernel(struct sim_device *device, const char *name, int64_t duration_ns,
			      int64_t grid_blocks, int same_launch)
{
	struct device_op op = {.kind = PROFOPT_GPU_KERNEL,
			       .name = name,
			       .duration_ns = duration_ns,
			       .grid_blocks = grid_blocks};

	enqueue(device, &op, same_launch);
}

void sim_device_launch_copy(struct sim_device *device, uint64_t bytes, int64_t duration_ns)
{
	struct device_op op = {
	    .kind = PROFOPT_GPU_MEMCPY_H2D,
	    .name = "memcpy_h2d",
	    .bytes = bytes,
	    .duration_ns = duration_ns,
	};

	enqueue(device, &op, 0);
}

void sim_device_synchronize(struct sim_device *device)
{
	pthread_mutex_lock(&device->lock);
	while (device->completed != device->launched)
		pthread_cond_wait(&device->changed, &device->lock);
	pthread_mutex_unlock(&device->lock);
}
