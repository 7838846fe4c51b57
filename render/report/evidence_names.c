/* evidence_names.c: the plain names, units and meanings of the detectors' evidence keys. */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "evidence_names.h"
#include "report_priv.h"

/*
 * Every evidence key the detectors write (analyzer/detect/), once. X(FINDING, key, name,
 * unit, meaning): FINDING is ANY, or the finding whose own meaning of the key replaces the
 * general one there. In a key, "#" stands for a number (site2_where) and "@" for a
 * category's JSON name (data_wait_ms_per_step); in the name, they become the number and the
 * category's title. The unit follows the value, so the name never repeats it.
 * tests/unit/report/test_evidence_names.c fails when a detector writes a key this table
 * lacks, or when an entry names a key no detector writes.
 */
#define PO_EVIDENCE_NAMES(X)                                                                       \
	/* Shared by several findings. */                                                          \
	X(ANY, "steps", "Steps measured", "",                                                      \
	  "Steady steps (warm-up and steps overlapping a loss left out) the numbers cover.")       \
	X(ANY, "step_ms", "Mean step time", "ms", "Mean time of a steady step.")                   \
	X(ANY, "num_workers", "Loader workers", "",                                                \
	  "Data-loader worker processes (the run's num_workers where the trace records it).")      \
	X(ANY, "cpu_count", "CPU cores", "", "Online CPU cores of the traced machine.")            \
	X(ANY, "worker_busy_pct", "Worker busy time", "%",                                         \
	  "Share of its life a loader worker spends making batches, averaged over the workers.")   \
	X(ANY, "cpu_ms_per_batch", "CPU time per batch", "ms/batch",                               \
	  "CPU time the workers spend making one batch (load, preprocess, collate).")              \
	X(ANY, "recommended_num_workers", "Recommended workers", "",                               \
	  "The num_workers the model recommends for this run.")                                    \
	X(ANY, "predicted_step_ms", "Predicted step time", "ms",                                   \
	  "Mean step time the model predicts with the recommended change.")                        \
	X(ANY, "predicted_speedup", "Predicted speed-up", "\xc3\x97",                              \
	  "The current mean step time over the predicted one.")                                    \
	X(ANY, "cause", "Cause", "", "What the finding attributes the lost time to.")              \
	X(ANY, "stage", "Stage", "", "The pipeline stage concerned.")                              \
	X(ANY, "label", "Label", "", "The program's label of the span concerned.")                 \
	X(ANY, "threshold_ms", "Threshold", "ms", "The detection threshold applied to this run.")  \
	X(ANY, "lost_share_pct", "Share lost", "%", "Share of the time lost to this cause.")       \
	/* gpu-bound and launch-bound: the steady steps' GPU work (summary.json's gpu_work) */     \
	X(ANY, "gpu_work_ms", "GPU work", "ms/step",                                               \
	  "Time of the GPU records that began in a steady step, summed (overlaps count twice).")   \
	X(ANY, "kernels_per_step", "Kernels", "per step", "Kernels launched per steady step.")     \
	X(ANY, "mean_kernel_us", "Mean kernel", "us", "Mean time a kernel runs on the GPU.")       \
	X(ANY, "largest_class", "Largest class of work", "",                                       \
	  "The class of GPU work (docs/gpu.md, Kernel classes) that takes the most time.")         \
	X(ANY, "largest_class_pct", "Share of the largest class", "%",                             \
	  "Share of the GPU's work in its largest class.")                                         \
	X(ANY, "matrix_pct", "Matrix work", "%",                                                   \
	  "Share of the GPU's work in matrix multiplications, convolutions and attention.")        \
	X(ANY, "matrix_precision", "Matrix precision", "",                                         \
	  "The precision most of the matrix work runs in, as its kernels' names say.")             \
	X(ANY, "low_precision_matrix_pct", "Matrix work in fp32 or tf32", "%",                     \
	  "Share of the GPU's work in fp32 or tf32 matrix kernels: what mixed precision speeds "   \
	  "up.")                                                                                   \
	X(ANY, "layout_pct", "Layout conversions", "%",                                            \
	  "Share of the GPU's work converting tensors between NCHW and NHWC around convolutions.") \
	X(ANY, "small_kernel_pct", "Time in small kernels", "%",                                   \
	  "Share of kernel time in kernels of fewer blocks than the GPU has multiprocessors.")     \
	X(ANY, "host_us_per_kernel", "Host time per kernel", "us",                                 \
	  "Time the training thread spends in forward, backward and the optimizer per kernel.")    \
	X(ANY, "launch_host_pct", "Launching share", "%",                                          \
	  "Share of the step the training thread spends in forward, backward and the optimizer.")  \
	/* input-bound */                                                                          \
	X(ANY, "wait_share_pct", "Input wait share", "%",                                          \
	  "Share of each steady step the training thread waits for data or loads it itself.")      \
	X(ANY, "wait_ms_per_step", "Input wait", "ms/step",                                        \
	  "Time per steady step the training thread waits for a batch or loads it itself.")        \
	X(ANY, "waiting_steps_pct", "Steps that wait", "%",                                        \
	  "Steady steps whose input wait is over half the warning share of their own time.")       \
	X(ANY, "cpu_demand_cores", "CPU demand", "cores",                                          \
	  "Cores the loader workers and the main loop use together.")                              \
	X(ANY, "service_ms_per_batch", "Time to make a batch", "ms/batch",                         \
	  "Wall time a worker takes to load, preprocess and collate one batch.")                   \
	X(ANY, "cpu_source", "CPU time from", "",                                                  \
	  "measured: the trace's CPU counters; assumed: preprocess and collate count as CPU.")     \
	X(ANY, "io_wait_share_pct", "I/O wait share of a batch", "%",                              \
	  "Share of a batch's making time off CPU that waiting for a core does not explain.")      \
	X(ANY, "core_wait_ms_per_batch", "Wait for a core", "ms/batch",                            \
	  "Time per batch a worker could run but waits for a free core.")                          \
	X(ANY, "core_wait_source", "Wait for a core from", "",                                     \
	  "measured: the workers' run-queue wait (schedstat); modelled: the fair share of a "      \
	  "core.")                                                                                 \
	X(ANY, "fair_core_share", "Fair share of a core", "",                                      \
	  "Share of a core (0 to 1) each runnable thread gets on these cores.")                    \
	X(ANY, "loading", "Kind of loading", "",                                                   \
	  "io-like: a batch mostly waits for I/O; cpu-bound: it is mostly CPU work.")              \
	X(ANY, "main_ms_per_step", "Main loop's own time", "ms/step",                              \
	  "The main loop's time per step without the input wait and the batch hand-off.")          \
	X(ANY, "handoff_ms", "Batch hand-off", "ms/step",                                          \
	  "Time per step the loop takes to receive a batch that was already ready.")               \
	X(ANY, "h2d_ms_per_step", "Host-to-device copy", "ms/step",                                \
	  "Time per step the training thread spends copying to the GPU.")                          \
	X(ANY, "model_step_ms", "Modelled step time", "ms",                                        \
	  "The model's step time with the current workers: compare with the mean step.")           \
	X(ANY, "queue_empty_pct", "Steps with no batch ready", "%",                                \
	  "Steady steps that found no batch ready in the loader's queue.")                         \
	X(ANY, "others_cores", "Other programs' CPU", "cores",                                     \
	  "CPU other programs used while this was recorded: the machine's busy time less the "     \
	  "recorded processes' own.")                                                              \
	X(ANY, "available_cores", "Cores left to the program", "cores",                            \
	  "The machine's cores less what other programs used: what the model counts with.")        \
	X(INPUT_BOUND, "cause", "Cause", "",                                                       \
	  "Why the loop waits for data (the causes are listed in docs/rules.md).")                 \
	X(INPUT_BOUND, "stage", "Slowest loading stage", "",                                       \
	  "The loader stage (load, preprocess or collate) that takes longest per batch.")          \
	X(INPUT_BOUND, "label", "Slowest stage's label", "",                                       \
	  "The program's label of the costliest work in that stage.")                              \
	X(ANY, "hotspot_function", "Function dominating the stage", "",                            \
	  "The function with the largest self share of the slowest stage's sampled CPU time "      \
	  "(profopt-record --stacks; docs/sampling.md).")                                          \
	X(ANY, "hotspot_file", "Its file", "", "The file of that function.")                       \
	X(ANY, "hotspot_line", "Its first line", "", "The first line of that function.")           \
	X(ANY, "hotspot_self_pct", "Its self share", "%",                                          \
	  "Share of the slowest stage's sampled CPU time spent in that function's own code.")      \
	/* cpu-contention */                                                                       \
	X(ANY, "loop_ms_per_step", "Loop compute time", "ms/step",                                 \
	  "Wall time per step of forward, backward and optimizer on the training thread.")         \
	X(ANY, "loop_cpu_ms_per_step", "Loop CPU time", "ms/step",                                 \
	  "CPU time the main process gets per step.")                                              \
	X(ANY, "loop_cpu_share_pct", "Loop's share of a core", "%",                                \
	  "Loop CPU time over loop compute time: how much of a core the loop gets.")               \
	X(ANY, "lost_ms_per_step", "Wait for a core", "ms/step",                                   \
	  "Time per step the loop could run but waits for a free core.")                           \
	X(ANY, "main_cpu_cores", "Main process CPU", "cores",                                      \
	  "CPU the training process used over its life.")                                          \
	X(ANY, "worker_cpu_cores", "Workers' CPU", "cores",                                        \
	  "CPU the loader workers used together while they were alive.")                           \
	X(ANY, "traced_cpu_cores", "Traced processes' CPU", "cores",                               \
	  "Main process and workers together; other programs or limits hold the other cores.")     \
	X(ANY, "worker_cpu_cores_each", "CPU per worker", "cores",                                 \
	  "The workers' CPU divided by the number of workers.")                                    \
	X(ANY, "worker_cpu_share_pct", "Workers' CPU stages on CPU", "%",                          \
	  "CPU over wall time of the workers' preprocess and collate: below 100% they wait.")      \
	X(ANY, "demand_cores", "CPU demand at full speed", "cores",                                \
	  "Cores the loader and the loop would need if the loop had a core of its own.")           \
	X(ANY, "num_workers_step_ms", "Step with recommended workers", "ms",                       \
	  "Step time the fair-share model predicts with the recommended num_workers.")             \
	X(ANY, "loop_threads", "Loop's intra-op threads", "",                                      \
	  "Threads the training process computes on (torch.get_num_threads()).")                   \
	X(ANY, "main_runq_ms_per_step", "Main thread's wait for a core", "ms/step",                \
	  "Time per step the training thread was runnable but not running (its schedstat).")       \
	X(ANY, "recommended_threads", "Recommended intra-op threads", "",                          \
	  "The torch.set_num_threads value that fits the loop and the workers in the cores.")      \
	X(ANY, "threads_step_ms", "Step with recommended threads", "ms",                           \
	  "Step time predicted with the recommended threads and workers, each on a core.")         \
	X(CPU_CONTENTION, "lost_share_pct", "Share of the step lost", "%",                         \
	  "Time lost waiting for a core over the mean step.")                                      \
	X(CPU_CONTENTION, "recommended_num_workers", "Fewest workers that keep the step", "",      \
	  "The fewest workers whose predicted step is within the margin of the best.")             \
	X(CPU_CONTENTION, "predicted_step_ms", "Step with a core for the loop", "ms",              \
	  "The mean step without the time the loop loses waiting for a core.")                     \
	X(CPU_CONTENTION, "predicted_speedup", "Speed-up with a core for the loop", "\xc3\x97",    \
	  "The mean step over the step with a core for the loop.")                                 \
	/* loader-handoff */                                                                       \
	X(ANY, "handoff_ms_per_step", "Batch hand-off", "ms/step",                                 \
	  "Time per step the loop waits for a batch that was already ready in its worker.")        \
	X(ANY, "handoff_share_pct", "Hand-off share of the step", "%",                             \
	  "Batch hand-off time over the mean step.")                                               \
	X(ANY, "data_wait_ms_per_step", "Data wait", "ms/step",                                    \
	  "Time per step the loop waits for a batch not yet ready (hand-off not included).")       \
	/* loader-imbalance */                                                                     \
	X(ANY, "slow_worker_id", "Slow worker", "",                                                \
	  "The loader worker (its worker id) that paces the loop.")                                \
	X(ANY, "slow_worker_pid", "Slow worker's process", "", "The slow worker's process id.")    \
	X(ANY, "slow_ms_per_batch", "Slow worker's batch", "ms/batch",                             \
	  "Time the slow worker takes to make one batch (load, preprocess, collate).")             \
	X(ANY, "others_ms_per_batch", "Other workers' batch", "ms/batch",                          \
	  "Time the other workers take to make one batch, together.")                              \
	X(LOADER_IMBALANCE, "lost_ms_per_step", "Wait for the slow worker", "ms/step",             \
	  "Time per step the loop loses waiting for the slow worker's batches: the mean step "     \
	  "less the predicted one.")                                                               \
	X(LOADER_IMBALANCE, "lost_share_pct", "Share of the step lost", "%",                       \
	  "Time lost to the slow worker over the mean step.")                                      \
	/* worker-restart */                                                                       \
	X(ANY, "worker_generations", "Sets of workers started", "",                                \
	  "How many times the run started a new set of loader workers.")                           \
	X(ANY, "epochs_restarted", "Epoch starts that waited", "",                                 \
	  "Epoch starts after the first at which the loop waited for new workers.")                \
	X(ANY, "restart_ms_per_epoch", "Wait per restart", "ms",                                   \
	  "Time the loop lost at each such epoch start while new workers started.")                \
	X(ANY, "lost_ms", "Time lost", "ms", "Time lost at all those epoch starts together.")      \
	X(ANY, "run_step_ms", "Mean step over the run", "ms",                                      \
	  "First step's begin to last step's end over the steps, epoch starts included.")          \
	X(ANY, "predicted_run_step_ms", "Mean step with persistent workers", "ms",                 \
	  "The run's mean step without the time lost at epoch starts.")                            \
	X(WORKER_RESTART, "lost_share_pct", "Share of the run lost", "%",                          \
	  "Time lost at epoch starts over the run's step time.")                                   \
	/* straggler */                                                                            \
	X(ANY, "rank", "Rank", "", "The rank of the distributed job concerned.")                   \
	X(STRAGGLER, "rank", "Straggler rank", "",                                                 \
	  "The rank that arrives last at the collectives.")                                        \
	X(STRAGGLER, "pattern", "Pattern", "",                                                     \
	  "Chronic: last in most steps; occasional: last in some, with long waits.")               \
	X(STRAGGLER, "cause", "Cause", "",                                                         \
	  "What makes it late, from its own breakdown: input, compute, gpu, ...")                  \
	X(ANY, "cause_category", "Category behind the cause", "",                                  \
	  "The category of the straggler's step that exceeds the other ranks' most.")              \
	X(ANY, "cause_excess_ms_per_step", "Excess per step", "ms",                                \
	  "The straggler's time in that category per step beyond the other ranks' median.")        \
	X(ANY, "last_pct", "Steps it arrived last", "%",                                           \
	  "Share of the steps matched across ranks in which it arrived last.")                     \
	X(STRAGGLER, "lost_ms_per_step", "Job time lost per step", "ms/step",                      \
	  "Sum over a step's collectives of the longest less the shortest wait, per step.")        \
	X(ANY, "others_wait_ms_per_step", "Others' wait per step", "ms",                           \
	  "How long the other ranks wait for it at the collectives, per step.")                    \
	X(ANY, "job_step_ms", "Job step", "ms", "The median of the ranks' mean steps.")            \
	X(ANY, "ranks", "Ranks", "", "Ranks of the job in the recording.")                         \
	X(ANY, "matched_steps", "Steps matched", "",                                               \
	  "Steps whose collectives every rank began and ended.")                                   \
	/* host-memory-growth, gpu-memory-growth */                                                \
	X(ANY, "slope_bytes_per_step", "Growth per step", "B/step",                                \
	  "Slope of the straight line fitted through live memory at each step's end.")             \
	X(ANY, "r2", "Fit quality (R\xc2\xb2)", "",                                                \
	  "How well a straight line explains the growth: 1 is perfectly steady growth.")           \
	X(ANY, "first_step", "First step fitted", "",                                              \
	  "Step number where the fitted range begins.")                                            \
	X(ANY, "last_step", "Last step fitted", "", "Step number where the fitted range ends.")    \
	X(ANY, "source", "Memory measured from", "",                                               \
	  "alloc_events or gpu_alloc_events: allocations and frees; rss: resident set size.")      \
	X(ANY, "process_role", "Processes fitted", "",                                             \
	  "all: every process; main: the training loop's process; workers: the loader workers.")   \
	X(ANY, "pid", "Process id", "", "The process whose memory grows.")                         \
	X(ANY, "python_line", "Python line keeping objects", "",                                   \
	  "The program's own line whose container grew with the growing objects (a list's "        \
	  "append, a dict's store), else the line that created them (python_memory=True).")        \
	X(ANY, "python_created_line", "Python line creating them", "",                             \
	  "The program's own line nearest to where the growing objects were created (torch's "     \
	  "and the Python library's frames skipped).")                                             \
	X(ANY, "python_objects_kept", "Python objects kept", "",                                   \
	  "Python objects created there and still alive, more than at warm-up.")                   \
	X(ANY, "late_growth_pct", "Still growing at the end", "%",                                 \
	  "Rise of the last quarter of the fitted steps over the quarter before, as a share of "   \
	  "what the fitted line adds there: about 100 for a leak, about 0 when memory levels "     \
	  "off.")                                                                                  \
	X(ANY, "growth_over_run_mib", "Growth over the run", "MiB",                                \
	  "Growth per step times the run's steps.")                                                \
	X(ANY, "horizon_runs", "Grading horizon", "runs",                                          \
	  "The growth is graded by what it adds over a run this many times as long.")              \
	X(ANY, "horizon_growth_mib", "Growth over the horizon", "MiB",                             \
	  "Growth per step times the steps of a run that many times as long: what grades it.")     \
	X(ANY, "peak_mib", "Peak memory", "MiB", "The most of this memory held at once.")          \
	X(ANY, "projection_steps", "Projection horizon", "steps",                                  \
	  "How many steps ahead the projected growth looks.")                                      \
	X(ANY, "projected_growth_mib", "Projected growth", "MiB",                                  \
	  "Memory the growth adds over the projection horizon if nothing changes.")                \
	X(ANY, "site_pid", "Allocating process", "",                                               \
	  "Process id of the allocation site holding the most memory at the end.")                 \
	X(ANY, "site_role", "Allocating process's role", "", "main, worker or other.")             \
	X(ANY, "ip", "Code address", "",                                                           \
	  "Address of the allocating code, where the program gave the span no label.")             \
	X(ANY, "site_live_mib", "Memory the site holds", "MiB",                                    \
	  "Memory from that site still allocated at the end of the trace.")                        \
	X(ANY, "site_live_allocations", "Allocations the site holds", "",                          \
	  "Allocations from that site not freed by the end of the trace.")                         \
	X(HOST_MEMORY_GROWTH, "steps", "Steps fitted", "",                                         \
	  "Steady steps after warm-up with a memory sample, through which the line is fitted.")    \
	X(HOST_MEMORY_GROWTH, "stage", "Allocating stage", "",                                     \
	  "The stage that ran when the site's memory still held was allocated.")                   \
	X(HOST_MEMORY_GROWTH, "label", "Allocating span's label", "",                              \
	  "The program's label of the span in which that memory was allocated.")                   \
	X(GPU_MEMORY_GROWTH, "steps", "Steps fitted", "",                                          \
	  "Steady steps after warm-up with a memory sample, through which the line is fitted.")    \
	X(GPU_MEMORY_GROWTH, "stage", "Allocating stage", "",                                      \
	  "The stage that ran when the site's memory still held was allocated.")                   \
	X(GPU_MEMORY_GROWTH, "label", "Allocating span's label", "",                               \
	  "The program's label of the span in which that memory was allocated.")                   \
	/* worker-copy-on-access */                                                                \
	X(ANY, "private_growth_bytes", "Workers' private growth", "B",                             \
	  "How much the unique sets (pages only the process maps) of the loader workers alive "    \
	  "together grew from their first sample to their largest, summed.")                       \
	X(ANY, "private_growth_per_worker_mib", "Private growth per worker", "MiB",                \
	  "The workers' private growth divided by the number of workers.")                         \
	X(ANY, "largest_worker_growth_mib", "Largest worker's growth", "MiB",                      \
	  "The private growth of the worker that grew the most.")                                  \
	X(ANY, "unshared_pct", "Un-shared share", "%",                                             \
	  "Share of the private growth the resident sets did not grow by: pages that were "        \
	  "shared with the training process and were copied when written.")                        \
	X(ANY, "worker_rss_growth_mib", "Workers' resident growth", "MiB",                         \
	  "How much the same workers' resident sets grew over the same samples, summed.")          \
	X(ANY, "machine_memory_mib", "Machine's memory", "MiB",                                    \
	  "Physical memory of the traced machine.")                                                \
	X(ANY, "machine_pct", "Share of the machine's memory", "%",                                \
	  "The workers' private growth over the machine's memory.")                                \
	X(ANY, "job_pss_mib", "Memory of the job", "MiB",                                          \
	  "Proportional sets (each page divided by the processes that map it) of the training "    \
	  "process and those workers at their peaks, summed: what they hold of the machine.")      \
	X(ANY, "job_machine_pct", "Job's share of the machine's memory", "%",                      \
	  "The job's proportional sets over the machine's memory.")                                \
	X(WORKER_COPY_ON_ACCESS, "num_workers", "Workers alive together", "",                      \
	  "The loader workers whose private growth is summed: those alive at one moment.")         \
	/* unfreed-allocations */                                                                  \
	X(ANY, "live_mib", "Memory never freed", "MiB",                                            \
	  "Memory still allocated at the end of the trace, all sites together.")                   \
	X(ANY, "live_allocations", "Allocations never freed", "",                                  \
	  "Allocations still live at the end of the trace.")                                       \
	X(ANY, "sites", "Allocation sites", "",                                                    \
	  "Allocation sites still holding memory at the end of the trace.")                        \
	X(ANY, "site#_where", "Site #: allocated in", "",                                          \
	  "Process, stage and label (or code address) of the site; site 1 holds the most.")        \
	X(ANY, "site#_live_mib", "Site #: memory held", "MiB",                                     \
	  "Memory from the site still allocated at the end of the trace.")                         \
	X(ANY, "site#_device", "Site #: device", "",                                               \
	  "host, or the GPU (gpu0, gpu1, ...) that holds the site's memory.")                      \
	/* step-outliers */                                                                        \
	X(ANY, "outliers", "Slow steps", "", "Steady steps slower than the threshold.")            \
	X(ANY, "median_ms", "Median step time", "ms", "Median time of a steady step.")             \
	X(ANY, "excess_ms_per_outlier", "Extra time per slow step", "ms",                          \
	  "Mean time a slow step takes beyond the median step.")                                   \
	X(ANY, "excess_share_pct", "Run time lost to slow steps", "%",                             \
	  "The slow steps' extra time over the steady steps' total time.")                         \
	X(ANY, "period_steps", "Period", "steps",                                                  \
	  "Steps between periodic slow steps; 0 when they come at irregular intervals.")           \
	X(ANY, "pattern", "Pattern", "",                                                           \
	  "periodic: slow steps recur at a fixed interval; sporadic: they do not.")                \
	X(ANY, "cause_excess_ms_per_outlier", "Cause's extra time per slow step", "ms",            \
	  "Mean extra time per slow step in the cause's activity, beyond its median.")             \
	X(STEP_OUTLIERS, "threshold_ms", "Slow-step threshold", "ms",                              \
	  "Steps slower than this are slow: the median plus k scaled deviations, or more.")        \
	X(STEP_OUTLIERS, "cause", "Where the extra time goes", "",                                 \
	  "The activity with the most extra time in the slow steps over the median step.")         \
	X(ANY, "gc_collections", "Garbage collections", "",                                        \
	  "Collections the training loop's runtime reported (generations 1 and 2).")               \
	X(ANY, "gc_collected_per_collection", "Objects freed per collection", "",                  \
	  "Mean objects a collection freed: few, and its time went to walking live objects.")      \
	X(ANY, "gc_uncollectable", "Uncollectable objects", "",                                    \
	  "Objects the collections found unreachable and could not free (gc.garbage).")            \
	/* level-shift */                                                                          \
	X(ANY, "step", "From step", "", "The first step of the new level.")                        \
	X(ANY, "epoch", "Epoch", "", "The epoch of that step.")                                    \
	X(ANY, "since_s", "When", "s after the first step",                                        \
	  "Time from the first step's begin to the first step of the new level.")                  \
	X(ANY, "before_ms", "Step before", "ms",                                                   \
	  "The earlier level's step time: the median of its steps' means over blocks.")            \
	X(ANY, "after_ms", "Step after", "ms",                                                     \
	  "The new level's step time: the median of its steps' means over blocks.")                \
	X(ANY, "change_pct", "Change", "%", "Change of the step time over the earlier level.")     \
	X(ANY, "steps_before", "Steps before", "", "Steady steps of the earlier level.")           \
	X(ANY, "steps_after", "Steps after", "", "Steady steps of the new level.")                 \
	X(ANY, "separation_pct", "Separation", "%",                                                \
	  "Pairs of a block of steps before and one after the change ordered as the change.")      \
	X(ANY, "category", "What moved", "",                                                       \
	  "The activity whose median time per step moved most in the direction of the change.")    \
	X(ANY, "category_before_ms", "Its time before", "ms/step",                                 \
	  "Median time per step of that activity before the change.")                              \
	X(ANY, "category_after_ms", "Its time after", "ms/step",                                   \
	  "Median time per step of that activity after the change.")                               \
	X(LEVEL_SHIFT, "lost_share_pct", "Share of the run lost", "%",                             \
	  "Time the slower later level costs over the earlier one, over the steady steps' time.")  \
	/* trace-data-loss */                                                                      \
	X(ANY, "discarded_events", "Events discarded", "",                                         \
	  "Events the tracer dropped because its buffers were full.")                              \
	X(ANY, "discarded_packets", "Packets discarded", "",                                       \
	  "Whole packets of events the tracer dropped.")                                           \
	X(ANY, "unknown_discards", "Losses of unknown size", "",                                   \
	  "Places where the trace says events were lost without saying how many.")                 \
	X(ANY, "discarded_pct", "Share of events discarded", "%",                                  \
	  "Discarded events over all events, read and discarded.")                                 \
	X(ANY, "unmatched_spans", "Unmatched spans", "",                                           \
	  "Spans whose begin or end event is missing.")                                            \
	X(ANY, "gpu_records_dropped", "GPU records dropped", "",                                   \
	  "GPU activity records the CUPTI collector lost because its buffers were full.")          \
	X(ANY, "missing_windows", "Windows missing from the files", "",                            \
	  "Stream cuts and a recording ending before its command, seen in the trace's files.")     \
	X(ANY, "lossy_steps", "Steps overlapping a loss", "",                                      \
	  "Steps that overlap lost data; no verdict uses them.")                                   \
	X(ANY, "lossy_steps_pct", "Share of steps overlapping a loss", "%",                        \
	  "Steps overlapping lost data over all steps.")                                           \
	X(TRACE_DATA_LOSS, "steps", "Steps in the trace", "",                                      \
	  "All steps of the trace, those overlapping a loss included.")                            \
	/* gpu-idle */                                                                             \
	X(ANY, "device", "GPU", "", "Index of the GPU device.")                                    \
	X(ANY, "idle_share_pct", "GPU idle share", "%",                                            \
	  "Idle gaps longer than the threshold over the steady steps' time.")                      \
	X(ANY, "idle_ms_per_step", "GPU idle time", "ms/step",                                     \
	  "Idle time per steady step in gaps longer than the threshold.")                          \
	X(ANY, "gaps", "Idle gaps counted", "",                                                    \
	  "Idle gaps longer than the threshold within steady steps.")                              \
	X(ANY, "gap_max_ms", "Longest idle gap", "ms", "The longest idle gap counted.")            \
	X(ANY, "gpu_busy_pct", "GPU busy", "%",                                                    \
	  "Share of the steady steps' time with any GPU busy: the headline's GPU busy.")           \
	X(GPU_IDLE, "threshold_ms", "Shortest gap counted", "ms",                                  \
	  "Idle gaps shorter than this are not counted (a minimum, or a share of the median "      \
	  "step).")                                                                                \
	X(GPU_IDLE, "cause", "Main cause of idle time", "",                                        \
	  "What the training thread did during most of the GPU's idle time.")                      \
	X(GPU_IDLE, "@_ms_per_step", "GPU idle: @", "ms/step",                                     \
	  "Idle GPU time per steady step while the training thread was in this activity.")

/* Scopes of the table: each finding by its name, and ANY. */
enum ev_scope {
#define PO_X(name, json) EV_##name = PO_FINDING_##name,
	PO_FINDING_IDS(PO_X)
#undef PO_X
	    EV_ANY = PO_EVIDENCE_ANY_FINDING
};

static const struct po_evidence_entry entries[] = {
#define PO_X(finding, key, name, unit, meaning)                                                    \
	{(enum po_finding_id)EV_##finding, key, name, unit, meaning},
    PO_EVIDENCE_NAMES(PO_X)
#undef PO_X
};

#define ENTRY_COUNT (sizeof(entries) / sizeof(entries[0]))

size_t po_evidence_entry_count(void)
{
	return ENTRY_COUNT;
}

const struct po_evidence_entry *po_evidence_entry_at(size_t index)
{
	return index < ENTRY_COUNT ? &entries[index] : NULL;
}

/* What a pattern's "#" or "@" matched in a key. */
struct ev_wild {
	const char *text; /* weak: inside the key */
	size_t length;
	int category; /* for "@"; -1 */
};

static bool pattern_matches(const char *pattern, const char *key, struct ev_wild *wild);

/* Whether key starts with a category's JSON name and the rest matches pattern. */
static bool category_matches(const char *pattern, const char *key, struct ev_wild *wild)
{
	for (int c = 0; c < PO_CATEGORY_COUNT; c++) {
		const char *name = po_report_category_key((enum po_category)c);
		size_t length = strlen(name);

		if (strncmp(key, name, length) == 0 &&
		    pattern_matches(pattern, key + length, wild)) {
			*wild = (struct ev_wild){key, length, c};
			return true;
		}
	}
	return false;
}

/*
 * Whether key matches pattern, where "#" matches one or more digits and "@" a category's
 * JSON name; what the first wildcard matched goes to wild.
 */
static bool pattern_matches(const char *pattern, const char *key, struct ev_wild *wild)
{
	for (; *pattern; pattern++, key++) {
		if (*pattern == '#') {
			size_t digits = strspn(key, "0123456789");

			if (digits == 0 || !pattern_matches(pattern + 1, key + digits, wild))
				return false;
			*wild = (struct ev_wild){key, digits, -1};
			return true;
		}
		if (*pattern == '@')
			return category_matches(pattern + 1, key, wild);
		if (*pattern != *key)
			return false;
	}
	return *key == '\0';
}

/* The entry's name with its wildcard replaced by what it matched. */
static void expand_name(const char *name, const struct ev_wild *wild, char *out, size_t out_size)
{
	size_t used = 0;

	for (; *name && used + 1 < out_size; name++) {
		int written = 0;

		if (*name == '#')
			written = snprintf(out + used, out_size - used, "%.*s", (int)wild->length,
					   wild->text);
		else if (*name == '@' && wild->category >= 0)
			written =
			    snprintf(out + used, out_size - used, "%s",
				     po_report_category_title((enum po_category)wild->category));
		else
			out[used++] = *name;
		used += (size_t)written;
		if (used >= out_size)
			used = out_size - 1;
	}
	out[used] = '\0';
}

/* The first entry of that scope for key, exact or by pattern; NULL when none. */
static const struct po_evidence_entry *find_entry(enum po_finding_id scope, const char *key,
						  bool by_pattern, struct ev_wild *wild)
{
	for (size_t i = 0; i < ENTRY_COUNT; i++) {
		const struct po_evidence_entry *entry = &entries[i];
		bool is_pattern = strpbrk(entry->key, "#@") != NULL;

		if (entry->finding != scope || is_pattern != by_pattern)
			continue;
		if (by_pattern ? pattern_matches(entry->key, key, wild)
			       : strcmp(entry->key, key) == 0)
			return entry;
	}
	return NULL;
}

/* Unit suffixes of the keys no entry knows, and the units they stand for. */
static const struct {
	const char *suffix;
	const char *unit;
} unit_suffixes[] = {
    {"_pct", "%"},   {"_ms", "ms"},   {"_ns", "ns"},
    {"_mib", "MiB"}, {"_bytes", "B"}, {"_cores", "cores"},
};

/* The unit a key's tail (before any "_per_<what>") ends with, cut off head; NULL when none. */
static const char *cut_unit(char *head)
{
	size_t length = strlen(head);

	for (size_t i = 0; i < sizeof(unit_suffixes) / sizeof(unit_suffixes[0]); i++) {
		size_t suffix = strlen(unit_suffixes[i].suffix);

		if (length > suffix &&
		    strcmp(head + length - suffix, unit_suffixes[i].suffix) == 0) {
			head[length - suffix] = '\0';
			return unit_suffixes[i].unit;
		}
	}
	return NULL;
}

/* Words for a key no entry knows: "growth_mib_per_step" is "Growth", "MiB/step". */
static void fallback_words(const char *key, struct po_evidence_words *words)
{
	char *per, *name = words->name;
	const char *unit;

	snprintf(name, sizeof(words->name), "%s", key);
	per = strstr(name, "_per_");
	while (per && strstr(per + 1, "_per_"))
		per = strstr(per + 1, "_per_");
	if (per)
		*per = '\0';
	unit = cut_unit(name);
	if (unit && per)
		snprintf(words->unit, sizeof(words->unit), "%s/%s", unit, per + 5);
	else if (unit)
		snprintf(words->unit, sizeof(words->unit), "%s", unit);
	else if (per)
		*per = '_'; /* "_per_" without a unit before it is part of the name */
	for (char *c = name; *c; c++)
		*c = *c == '_' ? ' ' : *c;
	if (!name[0])
		snprintf(name, sizeof(words->name), "Value");
	name[0] = (char)toupper((unsigned char)name[0]);
}

void po_evidence_words(enum po_finding_id finding, const char *key, struct po_evidence_words *words)
{
	struct ev_wild wild = {NULL, 0, -1};
	const struct po_evidence_entry *entry = NULL;

	key = key ? key : "";
	*words = (struct po_evidence_words){.meaning = "", .match = PO_EVIDENCE_MATCH_FALLBACK};
	for (int pass = 0; pass < 4 && !entry; pass++) {
		enum po_finding_id scope = pass < 2 ? finding : PO_EVIDENCE_ANY_FINDING;

		if (pass < 2 && finding == PO_EVIDENCE_ANY_FINDING)
			continue;
		entry = find_entry(scope, key, pass % 2 == 1, &wild);
	}
	if (!entry) {
		fallback_words(key, words);
		return;
	}
	expand_name(entry->name, &wild, words->name, sizeof(words->name));
	snprintf(words->unit, sizeof(words->unit), "%s", entry->unit);
	words->meaning = entry->meaning;
	words->match = wild.text ? PO_EVIDENCE_MATCH_PATTERN : PO_EVIDENCE_MATCH_KEY;
}

/* Units written against the number ("41.3%", "1.6x"); the others after a space. */
static bool unit_attaches(const char *unit)
{
	return strcmp(unit, "%") == 0 || strcmp(unit, "\xc3\x97") == 0;
}

void po_evidence_format(const struct po_evidence *evidence, const char *unit, char *out,
			size_t out_size)
{
	size_t used;

	if (evidence->type == PO_EVIDENCE_NUMBER && !isfinite(evidence->number)) {
		snprintf(out, out_size, "n/a");
		return;
	}
	if (evidence->type == PO_EVIDENCE_NUMBER && fabs(evidence->number) >= 1e4)
		snprintf(out, out_size, "%.0f", evidence->number);
	else
		po_report_fmt_evidence(evidence, out, out_size);
	if (evidence->type == PO_EVIDENCE_TEXT || !unit || !unit[0])
		return;
	used = strlen(out);
	snprintf(out + used, out_size - used, "%s%s", unit_attaches(unit) ? "" : " ", unit);
}
