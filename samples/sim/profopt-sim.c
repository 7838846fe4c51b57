/*
 * profopt-sim.c: a simulated PyTorch-style training loop. The main process takes batches
 * from forked data-loader workers, copies them to a simulated GPU, runs forward, backward
 * and optimizer with kernels on that GPU, and synchronizes at the end of each step. Every
 * duration, leak and stall is set on the command line, so each finding of the analyzer
 * has a known ground truth.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profopt.h"
#include "sim.h"

/* Bytes of one sample on the device: a 3x224x224 fp32 image. */
#define SAMPLE_BYTES (3 * 224 * 224 * 4)
/* Host activations per sample, allocated in forward and freed after the optimizer. */
#define ACTIVATION_BYTES_PER_SAMPLE (64 * 1024)
/* Where the simulated device's leaked blocks are said to live. */
#define DEVICE_BASE_ADDR 0x7f0000000000ULL

struct training {
	const struct sim_options *all;	/* weak: belongs to main() */
	const struct sim_options *opts; /* weak: the settings of the step being run */
	struct sim_loader *loader;	/* owned */
	struct sim_device *device;	/* owned */
	struct sim_random rng;
	struct sim_kernel_mix mix; /* --kernel-mix, parsed once */
	int64_t device_leaked_bytes;
	int64_t step_time_ns; /* sum over the steps run */
	int64_t step_count;
};

static int64_t jittered(struct training *t, int64_t duration_ns)
{
	return sim_jitter(&t->rng, duration_ns, t->opts->jitter_pct);
}

/*
 * Host CPU work of span_ns with the step's kernels first_kernel .. + kernel_count launched
 * along the way; with --graph-kernels N, every N kernels share one launch (its time
 * burnt once), as a CUDA graph's replay does.
 */
static void compute_with_kernels(struct training *t, int64_t span_ns, int64_t first_kernel,
				 int64_t kernel_count, const char *kernel_name)
{
	const struct sim_options *opts = t->opts;
	int64_t group = opts->graph_kernels > 1 ? opts->graph_kernels : 1;
	int64_t launches = (kernel_count + group - 1) / group;
	int64_t slice_ns = span_ns / (launches > 0 ? launches : 1);

	for (int64_t i = 0; i < kernel_count; i++) {
		int64_t kernel_ns = opts->kernels ? opts->gpu_ns / opts->kernels : 0;
		const char *name = kernel_name;

		if (t->mix.count)
			sim_kernel_mix_pick(&t->mix, first_kernel + i, opts->kernels, opts->gpu_ns,
					    &name, &kernel_ns);
		sim_device_launch_kernel(t->device, name, jittered(t, kernel_ns),
					 opts->kernel_blocks, i % group != 0);
		if (i % group == group - 1 || i + 1 == kernel_count)
			sim_burn_cpu(slice_ns);
	}
	sim_burn_cpu(span_ns - slice_ns * launches);
}

static void stage(struct training *t, enum profopt_stage kind, const char *default_label,
		  int64_t batch, int64_t span_ns, int64_t first_kernel, int64_t kernel_count,
		  const char *kernel_name)
{
	const char *label = sim_label(t->opts, default_label);

	profopt_stage_begin(kind, label, batch, -1);
	compute_with_kernels(t, jittered(t, span_ns), first_kernel, kernel_count, kernel_name);
	profopt_stage_end(kind, label, batch, -1);
}

/*
 * The memory counters a caching allocator's program records at each step end, with
 * --gpu-memory-mb: in use (what stays between steps), the peak (plus one step's
 * activations), what the allocator holds, and what the device has free.
 */
static void record_device_memory(struct training *t)
{
	const struct sim_options *opts = t->opts;
	int64_t mib = 1024 * 1024, context = 512 * mib;
	int64_t used = opts->resident_memory_mb * mib + t->device_leaked_bytes;
	int64_t peak = used + opts->step_memory_mb * mib;

	if (opts->gpu_memory_mb <= 0)
		return;
	profopt_counter(PROFOPT_COUNTER_GPU_MEM_RESERVED, 0, peak);
	profopt_counter(PROFOPT_COUNTER_GPU_MEM_PEAK, 0, peak);
	profopt_counter(PROFOPT_COUNTER_GPU_MEM_FREE, 0,
			opts->gpu_memory_mb * mib - context - peak > 0
			    ? opts->gpu_memory_mb * mib - context - peak
			    : 0);
}

/* A pageable host-to-device copy: the host waits until the device has done it. */
static void copy_to_device(struct training *t, int64_t batch)
{
	const char *label = sim_label(t->opts, "to_device");

	profopt_stage_begin(PROFOPT_STAGE_H2D_COPY, label, batch, -1);
	sim_device_launch_copy(t->device, (uint64_t)(t->opts->batch_size * SAMPLE_BYTES),
			       jittered(t, t->opts->h2d_ns));
	sim_device_synchronize(t->device);
	profopt_stage_end(PROFOPT_STAGE_H2D_COPY, label, batch, -1);
}

static void leak_memory(struct training *t)
{
	const struct sim_options *opts = t->opts;

	if (strcmp(opts->leak_in, "main") == 0)
		sim_leak_host_memory(opts->leak_bytes);
	if (opts->gpu_leak_bytes > 0) {
		profopt_mem_alloc(DEVICE_BASE_ADDR + (uint64_t)t->device_leaked_bytes,
				  (uint64_t)opts->gpu_leak_bytes, 0, "leak");
		t->device_leaked_bytes += opts->gpu_leak_bytes;
	}
	profopt_counter(PROFOPT_COUNTER_GPU_MEM_USED, 0,
			t->opts->resident_memory_mb * 1024 * 1024 + t->device_leaked_bytes);
	record_device_memory(t);
}

/* Forward, backward and optimizer, with the activations alive from forward to optimizer. */
static void train_on_batch(struct training *t, int64_t batch)
{
	int64_t forward_kernels = t->opts->kernels / 2;
	size_t act_bytes = (size_t)t->opts->batch_size * ACTIVATION_BYTES_PER_SAMPLE;
	char *activations = malloc(act_bytes ? act_bytes : 1);

	if (activations) {
		memset(activations, 0, act_bytes);
		profopt_mem_alloc((uint64_t)(uintptr_t)activations, act_bytes, PROFOPT_DEVICE_HOST,
				  "activations");
	}
	stage(t, PROFOPT_STAGE_FORWARD, "model_forward", batch, t->opts->forward_ns, 0,
	      forward_kernels, "conv2d_fwd");
	stage(t, PROFOPT_STAGE_BACKWARD, "loss_backward", batch, t->opts->backward_ns,
	      forward_kernels, t->opts->kernels - forward_kernels, "conv2d_bwd");
	stage(t, PROFOPT_STAGE_OPTIMIZER, "sgd_step", batch, t->opts->optimizer_ns, 0, 0, NULL);
	if (activations) {
		profopt_mem_free((uint64_t)(uintptr_t)activations, act_bytes, PROFOPT_DEVICE_HOST,
				 "activations");
		free(activations);
	}
}

static void checkpoint(struct training *t, int64_t step, int64_t batch)
{
	const char *label = sim_label(t->opts, "save_checkpoint");

	if (t->opts->stall_every <= 0 || (step + 1) % t->opts->stall_every != 0)
		return;
	/* host work after the sync: the device sits idle meanwhile */
	profopt_stage_begin(PROFOPT_STAGE_CHECKPOINT, label, batch, -1);
	sim_sleep(jittered(t, t->opts->stall_ns));
	profopt_stage_end(PROFOPT_STAGE_CHECKPOINT, label, batch, -1);
}

static PO_NODISCARD enum po_status run_step(struct training *t, int64_t step, int64_t epoch,
					    struct po_error *err)
{
	int64_t begin_ns = profopt_now_ns();
	int64_t batch = step;

	t->opts = sim_options_at(t->all, step); /* --after's settings from --change-at on */
	profopt_step_begin(step, epoch, t->opts->batch_size);
	if (sim_loader_next(t->loader, batch, err) != PO_STATUS_OK) {
		po_error_prepend(err, "Failed to get the batch of step %" PRId64, step);
		return PO_STATUS_INTERNAL;
	}
	copy_to_device(t, batch);
	train_on_batch(t, batch);
	leak_memory(t);
	profopt_gpu_sync_begin(0, -1);
	sim_device_synchronize(t->device);
	profopt_gpu_sync_end(0, -1);
	checkpoint(t, step, batch);
	profopt_step_end(step, epoch, t->opts->batch_size);
	t->step_time_ns += profopt_now_ns() - begin_ns;
	t->step_count++;
	return PO_STATUS_OK;
}

/* Stops and reaps the workers; after an earlier failure, that failure is the one reported. */
static PO_NODISCARD enum po_status stop_loader(struct sim_loader *loader, enum po_status status,
					       struct po_error *err)
{
	struct po_error later = {{0}};

	if (sim_loader_destroy(loader, status == PO_STATUS_OK ? err : &later) != PO_STATUS_OK)
		return status == PO_STATUS_OK ? PO_STATUS_INTERNAL : status;
	return status;
}

static PO_NODISCARD enum po_status run_epoch(struct training *t, int64_t epoch,
					     struct po_error *err)
{
	profopt_epoch_begin(epoch);
	for (int64_t i = 0; i < t->all->steps; i++) {
		if (run_step(t, epoch * t->all->steps + i, epoch, err) != PO_STATUS_OK)
			return PO_STATUS_INTERNAL;
	}
	profopt_epoch_end(epoch);
	return PO_STATUS_OK;
}

/*
 * Non-persistent workers: each epoch starts its own loader and stops it at the end, as a
 * DataLoader with persistent_workers=False does. In a forked worker, *worker_exit_status is
 * set and the worker returns at once.
 */
static PO_NODISCARD enum po_status train_respawning(struct training *t, int *worker_exit_status,
						    struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;

	for (int64_t epoch = 0; epoch < t->all->epochs && status == PO_STATUS_OK; epoch++) {
		int64_t first = epoch * t->all->steps;

		status = sim_loader_create(&t->loader, t->all, first, first + t->all->steps,
					   worker_exit_status, err);
		if (*worker_exit_status >= 0)
			return PO_STATUS_OK;
		if (status == PO_STATUS_OK)
			status = run_epoch(t, epoch, err);
		status = stop_loader(t->loader, status, err);
		t->loader = NULL;
	}
	return status;
}

static PO_NODISCARD enum po_status train(struct training *t, int *worker_exit_status,
					 struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;

	if (!t->all->persistent_workers && t->all->workers > 0)
		return train_respawning(t, worker_exit_status, err);
	status = sim_loader_create(&t->loader, t->all, 0, t->all->steps * t->all->epochs,
				   worker_exit_status, err);
	if (*worker_exit_status >= 0)
		return PO_STATUS_OK;
	for (int64_t epoch = 0; epoch < t->all->epochs && status == PO_STATUS_OK; epoch++)
		status = run_epoch(t, epoch, err);
	status = stop_loader(t->loader, status, err);
	t->loader = NULL;
	return status;
}

static double mean_step_ms(const struct training *t)
{
	return t->step_count ? (double)t->step_time_ns / (double)t->step_count / 1e6 : 0.0;
}

static PO_NODISCARD enum po_status write_report(const struct training *t, struct po_error *err)
{
	FILE *out = fopen(t->all->report_json, "w");

	if (!out) {
		po_error_set(err, "Failed to open the JSON report: path=%s", t->all->report_json);
		return PO_STATUS_OUTPUT;
	}
	fprintf(out,
		"{\"steps\": %" PRId64 ", \"epochs\": %" PRId64 ", \"mean_step_ms\": %.6f, "
		"\"total_step_ms\": %.6f, \"settings\": {",
		t->step_count, t->all->epochs, mean_step_ms(t), (double)t->step_time_ns / 1e6);
	sim_options_write_json(t->all, out);
	fprintf(out, "}}\n");
	if (fclose(out) != 0) {
		po_error_set(err, "Failed to write the JSON report: path=%s", t->all->report_json);
		return PO_STATUS_OUTPUT;
	}
	return PO_STATUS_OK;
}

/* Runs the whole job; in a forked worker, *worker_exit_status says how the worker ended. */
static PO_NODISCARD enum po_status run(const struct sim_options *opts, int *worker_exit_status,
				       struct po_error *err)
{
	struct training t = {.all = opts, .opts = opts};
	enum po_status status;

	sim_random_seed(&t.rng, opts->seed, -1);
	status = sim_kernel_mix_parse(&t.mix, opts->kernel_mix, err);
	if (status != PO_STATUS_OK)
		return status;
	profopt_run_begin("profopt-sim");
	sim_options_record(opts);
	if (opts->gpu_multiprocessors > 0)
		profopt_gpu_device(0, "profopt-sim device",
				   (uint64_t)(opts->gpu_memory_mb > 0 ? opts->gpu_memory_mb : 0) *
				       1024 * 1024,
				   (int32_t)opts->gpu_multiprocessors, 9, 0);
	status = sim_device_create(&t.device, err);
	if (status == PO_STATUS_OK)
		status = train(&t, worker_exit_status, err);
	if (*worker_exit_status >= 0)
		return PO_STATUS_OK; /* a worker, done: the main process owns the rest */
	sim_device_destroy(t.device);
	profopt_run_end();
	if (status != PO_STATUS_OK)
		return status;
	printf("profopt-sim: %" PRId64 " steps, mean step %.3f ms\n", t.step_count,
	       mean_step_ms(&t));
	return opts->report_json[0] ? write_report(&t, err) : PO_STATUS_OK;
}

int main(int argc, char **argv)
{
	struct sim_options opts;
	struct po_error err = {{0}};
	enum sim_action action;
	int worker_exit_status = -1;
	enum po_status status = sim_options_parse(&opts, &action, argc, argv, &err);

	if (status == PO_STATUS_OK && action == SIM_ACTION_HELP) {
		sim_options_print_help(stdout);
		return 0;
	}
	if (status == PO_STATUS_OK && action == SIM_ACTION_VERSION) {
		printf("profopt-sim %s (libprofopt %s)\n", PROFOPT_VERSION_STRING,
		       profopt_version());
		return 0;
	}
	if (status == PO_STATUS_OK)
		status = run(&opts, &worker_exit_status, &err);
	if (worker_exit_status >= 0)
		return worker_exit_status;
	if (status != PO_STATUS_OK) {
		fprintf(stderr, "profopt-sim: error: %s\n",
			err.message[0] ? err.message : po_status_description(status));
		return po_status_exit_code(status);
	}
	return 0;
}
