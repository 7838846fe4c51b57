/*
 * sim.h: the pieces of profopt-sim, a simulated training loop with forked data-loader
 * workers and a simulated GPU, instrumented only through profopt.h.
 */
#ifndef PROFOPT_SIM_H
#define PROFOPT_SIM_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/status.h"

/*
 * The command-line options, declared once:
 * X(flag, field, kind, default, unit, help). kind is MS (milliseconds, a fraction allowed,
 * stored as nanoseconds), INT (an integer), or TEXT (a string).
 */
#define SIM_OPTIONS(X)                                                                             \
	X("workers", workers, INT, 2, "processes",                                                 \
	  "data-loader worker processes (0: load in the main process)")                            \
	X("prefetch", prefetch, INT, 2, "batches", "batches each worker may prepare ahead")        \
	X("persistent-workers", persistent_workers, INT, 1, "0|1",                                 \
	  "1: one set of workers for the run; 0: new workers every epoch, like PyTorch's default") \
	X("worker-start-ms", worker_start_ns, MS, 0, "ms",                                         \
	  "start-up of each worker process before it takes a request (imports, set-up)")           \
	X("handoff-ms", handoff_ns, MS, 0, "ms",                                                   \
	  "per batch in the main process: receiving a batch that is ready (unpickling), CPU work") \
	X("kill-workers", kill_workers, INT, 0, "0|1",                                             \
	  "1: at the end the workers are killed in the middle of loading one more batch, as a "    \
	  "DataLoader terminates workers that do not stop in time")                                \
	X("steps", steps, INT, 100, "steps", "training steps per epoch")                           \
	X("epochs", epochs, INT, 1, "epochs",                                                      \
	  "epochs; steps and batch indexes run on across epochs")                                  \
	X("batch-size", batch_size, INT, 32, "samples", "samples per batch")                       \
	X("load-ms", load_ns, MS, 2, "ms", "per batch in a worker: load, sleeping like I/O")       \
	X("preprocess-ms", preprocess_ns, MS, 3, "ms",                                             \
	  "per batch in a worker: preprocess, CPU work")                                           \
	X("collate-ms", collate_ns, MS, 1, "ms", "per batch in a worker: collate, CPU work")       \
	X("h2d-ms", h2d_ns, MS, 1, "ms", "per step: host-to-device copy of the batch")             \
	X("forward-ms", forward_ns, MS, 3, "ms", "per step: forward pass, host CPU work")          \
	X("backward-ms", backward_ns, MS, 4, "ms", "per step: backward pass, host CPU work")       \
	X("optimizer-ms", optimizer_ns, MS, 1, "ms", "per step: optimizer, host CPU work")         \
	X("kernels", kernels, INT, 8, "kernels",                                                   \
	  "simulated GPU kernels per step, launched in forward and backward")                      \
	X("gpu-ms", gpu_ns, MS, 6, "ms", "per step: device time of all kernels together")          \
	X("kernel-mix", kernel_mix, TEXT, "", "CLASS[-PRECISION]:PCT,...",                         \
	  "what the kernels are, by share of the device time: matmul, conv, attention with "       \
	  "-fp32, -tf32, -bf16 or -fp16; layout, normalization, elementwise, reduction (named "    \
	  "as cuBLAS, cuDNN and PyTorch name theirs; empty: conv2d_fwd and conv2d_bwd)")           \
	X("kernel-blocks", kernel_blocks, INT, 0, "blocks",                                        \
	  "grid of every kernel, recorded with its launch shape (0: no shape recorded)")           \
	X("graph-kernels", graph_kernels, INT, 1, "kernels",                                       \
	  "kernels per launch: more than 1 replays them as CUDA graphs do, one launch each")       \
	X("gpu-multiprocessors", gpu_multiprocessors, INT, 0, "SMs",                               \
	  "describe the device (profopt_gpu_device) with this many multiprocessors (0: not)")      \
	X("gpu-memory-mb", gpu_memory_mb, INT, 0, "MiB",                                           \
	  "device memory; with it, each step end records the memory counters a caching "           \
	  "allocator's program does (used, reserved, peak, free)")                                 \
	X("resident-memory-mb", resident_memory_mb, INT, 0, "MiB",                                 \
	  "device memory in use between steps (weights, gradients, optimizer state)")              \
	X("step-memory-mb", step_memory_mb, INT, 0, "MiB",                                         \
	  "device memory a step needs beyond that (activations)")                                  \
	X("leak-bytes", leak_bytes, INT, 0, "bytes",                                               \
	  "host memory allocated per step (or per batch in workers) and never freed")              \
	X("leak-in", leak_in, TEXT, "main", "main|worker", "process that leaks --leak-bytes")      \
	X("gpu-leak-bytes", gpu_leak_bytes, INT, 0, "bytes",                                       \
	  "device memory allocated per step and never freed")                                      \
	X("stall-every", stall_every, INT, 0, "steps",                                             \
	  "a checkpoint every N steps, the device idle meanwhile (0: never)")                      \
	X("stall-ms", stall_ns, MS, 50, "ms", "duration of each checkpoint")                       \
	X("change-at", change_at, INT, 0, "step",                                                  \
	  "from this step (and batch) on, the settings given with --after apply (0: never)")       \
	X("jitter", jitter_pct, INT, 0, "percent", "random variation of every duration, +-PCT")    \
	X("seed", seed, INT, 1, "", "seed of the random variation")                                \
	X("label", label, TEXT, "", "text",                                                        \
	  "label of every span (default: one per stage, e.g. decode_jpeg)")                        \
	X("report-json", report_json, TEXT, "", "path",                                            \
	  "also write steps, mean_step_ms and settings as JSON")

#define SIM_KIND_INT int64_t
#define SIM_KIND_MS int64_t
#define SIM_KIND_TEXT const char *

struct sim_options {
#define SIM_X(flag, field, kind, def, unit, help) SIM_KIND_##kind field;
	SIM_OPTIONS(SIM_X)
#undef SIM_X
	/* the TEXT fields are weak: they point into argv or at literals */
	/* --after NAME=VALUE: the settings from step change_at on; NULL without (static) */
	const struct sim_options *after;
};

/* What options_parse() asks main() to do. */
enum sim_action {
	SIM_ACTION_RUN,
	SIM_ACTION_HELP,
	SIM_ACTION_VERSION,
};

/* options.c */
/* The settings in force at step (or batch) number step: --after's from --change-at on. */
const struct sim_options *sim_options_at(const struct sim_options *opts, int64_t step);
PO_NODISCARD enum po_status sim_options_parse(struct sim_options *opts, enum sim_action *action,
					      int argc, char **argv, struct po_error *err);
void sim_options_print_help(FILE *out);
/* Records every setting as profopt_run_config pairs. */
void sim_options_record(const struct sim_options *opts);
/* Writes the settings as the members of a JSON object, without the braces. */
void sim_options_write_json(const struct sim_options *opts, FILE *out);
/* The span label of a stage: --label when given, else the stage's default. */
const char *sim_label(const struct sim_options *opts, const char *default_label);

/* work.c: durations with jitter, CPU work and sleeps. */
struct sim_random {
	uint64_t state;
};
void sim_random_seed(struct sim_random *rng, int64_t seed, int64_t stream);
/* duration_ns varied by +-jitter_pct percent, never negative. */
int64_t sim_jitter(struct sim_random *rng, int64_t duration_ns, int64_t jitter_pct);
/* Spins until the calling thread has used cpu_ns of CPU time. */
void sim_burn_cpu(int64_t cpu_ns);
/* Sleeps duration_ns of wall time, resuming after signals. */
void sim_sleep(int64_t duration_ns);
int64_t sim_thread_cpu_ns(void);
/* Allocates and touches bytes of host memory, reported with label "leak", never freed. */
void sim_leak_host_memory(int64_t bytes);

/* device.c: a simulated GPU that runs launched work in order on its own thread. */
struct sim_device;
PO_NODISCARD enum po_status sim_device_create(struct sim_device **device, struct po_error *err);
void sim_device_destroy(struct sim_device *device);
/*
 * Queues a kernel of duration_ns of grid_blocks blocks (0: no launch shape). It records
 * profopt_gpu_launch with a fresh correlation id, unless same_launch: then the kernel is
 * part of the previous launch (a CUDA graph's replay), with its correlation id.
 */
void sim_device_launch_kernel(struct sim_device *device, const char *name, int64_t duration_ns,
			      int64_t grid_blocks, int same_launch);
/* Queues a host-to-device copy of bytes lasting duration_ns. */
void sim_device_launch_copy(struct sim_device *device, uint64_t bytes, int64_t duration_ns);
/* Blocks until everything queued so far has run. */
void sim_device_synchronize(struct sim_device *device);

/* kernels.c: what the simulated kernels are (--kernel-mix). */
#define SIM_MIX_MAX 8
struct sim_kernel_mix {
	size_t count;
	const char *names[SIM_MIX_MAX]; /* weak: literals, named as the libraries name theirs */
	int64_t percent[SIM_MIX_MAX];	/* of the device time; they sum to 100 */
};
/* Parses CLASS[-PRECISION]:PCT,...; an empty text is an empty mix. */
PO_NODISCARD enum po_status sim_kernel_mix_parse(struct sim_kernel_mix *mix, const char *text,
						 struct po_error *err);
/*
 * Kernel index of kernel_count in a step: its name and duration from the mix (kernels are
 * given to each entry in proportion to its share; gpu_ns is the step's device time).
 */
void sim_kernel_mix_pick(const struct sim_kernel_mix *mix, int64_t index, int64_t kernel_count,
			 int64_t gpu_ns, const char **name, int64_t *duration_ns);

/* loader.c: the data loader, in worker processes or in the main process. */
struct sim_loader;
/*
 * Starts the workers for batches first_batch to end_batch - 1. In a forked worker,
 * *worker_exit_status is set (>= 0) once the worker has finished, and the caller must return
 * it from main() at once; in the main process it is -1.
 */
PO_NODISCARD enum po_status sim_loader_create(struct sim_loader **loader,
					      const struct sim_options *opts, int64_t first_batch,
					      int64_t end_batch, int *worker_exit_status,
					      struct po_error *err);
/* Receives batch (in order: first_batch, first_batch + 1, ...) inside a data_wait span. */
PO_NODISCARD enum po_status sim_loader_next(struct sim_loader *loader, int64_t batch,
					    struct po_error *err);
/* Stops the workers and reaps them; returns an error when one failed. */
PO_NODISCARD enum po_status sim_loader_destroy(struct sim_loader *loader, struct po_error *err);

/* The stages of one batch, as a worker (or the main process with --workers 0) runs them. */
void sim_produce_batch(const struct sim_options *opts, struct sim_random *rng, int64_t batch);

#endif /* PROFOPT_SIM_H */
