/* evidence_names.c: the plain names, units and meanings of the detectors' evidence keys. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "evidence_names.h"
#include "report_priv.h"

/*
 * The words of every evidence key (analyzer/model/evidence_keys.h), once. X(KEY, name,
 * unit, meaning) gives a key its general words; O(FINDING, KEY, name, unit, meaning) the
 * words of a finding whose own meaning of the key replaces the general one there. In the
 * name of a parameterised key, "#" becomes its number (site2_where: "Site 2: ...") and "@"
 * its category's title. The unit follows the value, so the name never repeats it.
 * tests/unit/report/test_evidence_names.c fails when a key lacks general words here, or
 * when a key named here is written by no detector.
 */
#define PO_EVIDENCE_NAMES(X, O)                                                                    \
	/* Shared by several findings. */                                                          \
	X(STEPS, "Steps measured", "",                                                             \
	  "Steady steps (warm-up and steps overlapping a loss left out) the numbers cover.")       \
	X(STEP_MS, "Mean step time", "ms", "Mean time of a steady step.")                          \
	X(NUM_WORKERS, "Loader workers", "",                                                       \
	  "Data-loader worker processes (the run's num_workers where the trace records it).")      \
	X(CPU_COUNT, "CPU cores", "", "Online CPU cores of the traced machine.")                   \
	X(WORKER_BUSY_PCT, "Worker busy time", "%",                                                \
	  "Share of its life a loader worker spends making batches, averaged over the workers.")   \
	X(CPU_MS_PER_BATCH, "CPU time per batch", "ms/batch",                                      \
	  "CPU time the workers spend making one batch (load, preprocess, collate).")              \
	X(RECOMMENDED_NUM_WORKERS, "Recommended workers", "",                                      \
	  "The num_workers the model recommends for this run.")                                    \
	X(PREDICTED_STEP_MS, "Predicted step time", "ms",                                          \
	  "Mean step time the model predicts with the recommended change.")                        \
	X(PREDICTED_SPEEDUP, "Predicted speed-up", "\xc3\x97",                                     \
	  "The current mean step time over the predicted one.")                                    \
	X(CAUSE, "Cause", "", "What the finding attributes the lost time to.")                     \
	X(STAGE, "Stage", "", "The pipeline stage concerned.")                                     \
	X(LABEL, "Label", "", "The program's label of the span concerned.")                        \
	X(THRESHOLD_MS, "Threshold", "ms", "The detection threshold applied to this run.")         \
	X(LOST_SHARE_PCT, "Share lost", "%", "Share of the time lost to this cause.")              \
	/* gpu-bound and launch-bound: the steady steps' GPU work (summary.json's gpu_work) */     \
	X(GPU_WORK_MS, "GPU work", "ms/step",                                                      \
	  "Time of the GPU records that began in a steady step, summed (overlaps count twice).")   \
	X(KERNELS_PER_STEP, "Kernels", "per step", "Kernels launched per steady step.")            \
	X(MEAN_KERNEL_US, "Mean kernel", "us", "Mean time a kernel runs on the GPU.")              \
	X(LARGEST_CLASS, "Largest class of work", "",                                              \
	  "The class of GPU work (docs/gpu.md, Kernel classes) that takes the most time.")         \
	X(LARGEST_CLASS_PCT, "Share of the largest class", "%",                                    \
	  "Share of the GPU's work in its largest class.")                                         \
	X(MATRIX_PCT, "Matrix work", "%",                                                          \
	  "Share of the GPU's work in matrix multiplications, convolutions and attention.")        \
	X(MATRIX_PRECISION, "Matrix precision", "",                                                \
	  "The precision most of the matrix work runs in, as its kernels' names say.")             \
	X(LOW_PRECISION_MATRIX_PCT, "Matrix work in fp32 or tf32", "%",                            \
	  "Share of the GPU's work in fp32 or tf32 matrix kernels: what mixed precision speeds "   \
	  "up.")                                                                                   \
	X(LAYOUT_PCT, "Layout conversions", "%",                                                   \
	  "Share of the GPU's work converting tensors between NCHW and NHWC around convolutions.") \
	X(SMALL_KERNEL_PCT, "Time in small kernels", "%",                                          \
	  "Share of kernel time in kernels of fewer blocks than the GPU has multiprocessors.")     \
	X(HOST_US_PER_KERNEL, "Host time per kernel", "us",                                        \
	  "Time the training thread spends in forward, backward and the optimizer per kernel.")    \
	X(LAUNCH_HOST_PCT, "Launching share", "%",                                                 \
	  "Share of the step the training thread spends in forward, backward and the optimizer.")  \
	/* input-bound */                                                                          \
	X(WAIT_SHARE_PCT, "Input wait share", "%",                                                 \
	  "Share of each steady step the training thread waits for data or loads it itself.")      \
	X(WAIT_MS_PER_STEP, "Input wait", "ms/step",                                               \
	  "Time per steady step the training thread waits for a batch or loads it itself.")        \
	X(WAITING_STEPS_PCT, "Steps that wait", "%",                                               \
	  "Steady steps whose input wait is over half the warning share of their own time.")       \
	X(CPU_DEMAND_CORES, "CPU demand", "cores",                                                 \
	  "Cores the loader workers and the main loop use together.")                              \
	X(SERVICE_MS_PER_BATCH, "Time to make a batch", "ms/batch",                                \
	  "Wall time a worker takes to load, preprocess and collate one batch.")                   \
	X(CPU_SOURCE, "CPU time from", "",                                                         \
	  "measured: the trace's CPU counters; assumed: preprocess and collate count as CPU.")     \
	X(IO_WAIT_SHARE_PCT, "I/O wait share of a batch", "%",                                     \
	  "Share of a batch's making time off CPU that waiting for a core does not explain.")      \
	X(CORE_WAIT_MS_PER_BATCH, "Wait for a core", "ms/batch",                                   \
	  "Time per batch a worker could run but waits for a free core.")                          \
	X(CORE_WAIT_SOURCE, "Wait for a core from", "",                                            \
	  "measured: the workers' run-queue wait (schedstat); modelled: the fair share of a "      \
	  "core.")                                                                                 \
	X(FAIR_CORE_SHARE, "Fair share of a core", "",                                             \
	  "Share of a core (0 to 1) each runnable thread gets on these cores.")                    \
	X(LOADING, "Kind of loading", "",                                                          \
	  "io-like: a batch mostly waits for I/O; cpu-bound: it is mostly CPU work.")              \
	X(MAIN_MS_PER_STEP, "Main loop's own time", "ms/step",                                     \
	  "The main loop's time per step without the input wait and the batch hand-off.")          \
	X(HANDOFF_MS, "Batch hand-off", "ms/step",                                                 \
	  "Time per step the loop takes to receive a batch that was already ready.")               \
	X(H2D_MS_PER_STEP, "Host-to-device copy", "ms/step",                                       \
	  "Time per step the training thread spends copying to the GPU.")                          \
	X(MODEL_STEP_MS, "Modelled step time", "ms",                                               \
	  "The model's step time with the current workers: compare with the mean step.")           \
	X(QUEUE_EMPTY_PCT, "Steps with no batch ready", "%",                                       \
	  "Steady steps that found no batch ready in the loader's queue.")                         \
	X(OTHERS_CORES, "Other programs' CPU", "cores",                                            \
	  "CPU other programs used while this was recorded: the machine's busy time less the "     \
	  "recorded processes' own.")                                                              \
	X(AVAILABLE_CORES, "Cores left to the program", "cores",                                   \
	  "The machine's cores less what other programs used: what the model counts with.")        \
	O(INPUT_BOUND, CAUSE, "Cause", "",                                                         \
	  "Why the loop waits for data (the causes are listed in docs/rules.md).")                 \
	O(INPUT_BOUND, STAGE, "Slowest loading stage", "",                                         \
	  "The loader stage (load, preprocess or collate) that takes longest per batch.")          \
	O(INPUT_BOUND, LABEL, "Slowest stage's label", "",                                         \
	  "The program's label of the costliest work in that stage.")                              \
	X(HOTSPOT_FUNCTION, "Function dominating the stage", "",                                   \
	  "The function with the largest self share of the slowest stage's sampled CPU time "      \
	  "(profopt-record --stacks; docs/sampling.md).")                                          \
	X(HOTSPOT_FILE, "Its file", "", "The file of that function.")                              \
	X(HOTSPOT_LINE, "Its first line", "", "The first line of that function.")                  \
	X(HOTSPOT_SELF_PCT, "Its self share", "%",                                                 \
	  "Share of the slowest stage's sampled CPU time spent in that function's own code.")      \
	/* cpu-contention */                                                                       \
	X(LOOP_MS_PER_STEP, "Loop compute time", "ms/step",                                        \
	  "Wall time per step of forward, backward and optimizer on the training thread.")         \
	X(LOOP_CPU_MS_PER_STEP, "Loop CPU time", "ms/step",                                        \
	  "CPU time the main process gets per step.")                                              \
	X(LOOP_CPU_SHARE_PCT, "Loop's share of a core", "%",                                       \
	  "Loop CPU time over loop compute time: how much of a core the loop gets.")               \
	X(LOST_MS_PER_STEP, "Wait for a core", "ms/step",                                          \
	  "Time per step the loop could run but waits for a free core.")                           \
	X(MAIN_CPU_CORES, "Main process CPU", "cores",                                             \
	  "CPU the training process used over its life.")                                          \
	X(WORKER_CPU_CORES, "Workers' CPU", "cores",                                               \
	  "CPU the loader workers used together while they were alive.")                           \
	X(TRACED_CPU_CORES, "Traced processes' CPU", "cores",                                      \
	  "Main process and workers together; other programs or limits hold the other cores.")     \
	X(WORKER_CPU_CORES_EACH, "CPU per worker", "cores",                                        \
	  "The workers' CPU divided by the number of workers.")                                    \
	X(WORKER_CPU_SHARE_PCT, "Workers' CPU stages on CPU", "%",                                 \
	  "CPU over wall time of the workers' preprocess and collate: below 100% they wait.")      \
	X(DEMAND_CORES, "CPU demand at full speed", "cores",                                       \
	  "Cores the loader and the loop would need if the loop had a core of its own.")           \
	X(NUM_WORKERS_STEP_MS, "Step with recommended workers", "ms",                              \
	  "Step time the fair-share model predicts with the recommended num_workers.")             \
	X(LOOP_THREADS, "Loop's intra-op threads", "",                                             \
	  "Threads the training process computes on (torch.get_num_threads()).")                   \
	X(MAIN_RUNQ_MS_PER_STEP, "Main thread's wait for a core", "ms/step",                       \
	  "Time per step the training thread was runnable but not running (its schedstat).")       \
	X(RECOMMENDED_THREADS, "Recommended intra-op threads", "",                                 \
	  "The torch.set_num_threads value that fits the loop and the workers in the cores.")      \
	X(THREADS_STEP_MS, "Step with recommended threads", "ms",                                  \
	  "Step time predicted with the recommended threads and workers, each on a core.")         \
	O(CPU_CONTENTION, LOST_SHARE_PCT, "Share of the step lost", "%",                           \
	  "Time lost waiting for a core over the mean step.")                                      \
	O(CPU_CONTENTION, RECOMMENDED_NUM_WORKERS, "Fewest workers that keep the step", "",        \
	  "The fewest workers whose predicted step is within the margin of the best.")             \
	O(CPU_CONTENTION, PREDICTED_STEP_MS, "Step with a core for the loop", "ms",                \
	  "The mean step without the time the loop loses waiting for a core.")                     \
	O(CPU_CONTENTION, PREDICTED_SPEEDUP, "Speed-up with a core for the loop", "\xc3\x97",      \
	  "The mean step over the step with a core for the loop.")                                 \
	/* loader-handoff */                                                                       \
	X(HANDOFF_MS_PER_STEP, "Batch hand-off", "ms/step",                                        \
	  "Time per step the loop takes to receive a batch that was already ready in its worker, " \
	  "less its wait for a core meanwhile.")                                                   \
	X(HANDOFF_CORE_WAIT_MS_PER_STEP, "Core wait in the hand-off", "ms/step",                   \
	  "The loop's measured wait for a core during the hand-off: its run-queue wait per step "  \
	  "in proportion to the hand-off's share of the time it was runnable.")                    \
	X(HANDOFF_SHARE_PCT, "Hand-off share of the step", "%",                                    \
	  "Batch hand-off time over the mean step.")                                               \
	X(DATA_WAIT_MS_PER_STEP, "Data wait", "ms/step",                                           \
	  "Time per step the loop waits for a batch not yet ready (hand-off not included).")       \
	/* loader-imbalance */                                                                     \
	X(SLOW_WORKER_ID, "Slow worker", "",                                                       \
	  "The loader worker (its worker id) that paces the loop.")                                \
	X(SLOW_WORKER_PID, "Slow worker's process", "", "The slow worker's process id.")           \
	X(SLOW_MS_PER_BATCH, "Slow worker's batch", "ms/batch",                                    \
	  "Time the slow worker takes to make one batch (load, preprocess, collate).")             \
	X(OTHERS_MS_PER_BATCH, "Other workers' batch", "ms/batch",                                 \
	  "Time the other workers take to make one batch, together.")                              \
	O(LOADER_IMBALANCE, LOST_MS_PER_STEP, "Wait for the slow worker", "ms/step",               \
	  "Time per step the loop loses waiting for the slow worker's batches: the mean step "     \
	  "less the predicted one.")                                                               \
	O(LOADER_IMBALANCE, LOST_SHARE_PCT, "Share of the step lost", "%",                         \
	  "Time lost to the slow worker over the mean step.")                                      \
	/* worker-restart */                                                                       \
	X(WORKER_GENERATIONS, "Sets of workers started", "",                                       \
	  "How many times the run started a new set of loader workers.")                           \
	X(EPOCHS_RESTARTED, "Epoch starts that waited", "",                                        \
	  "Epoch starts after the first at which the loop waited for new workers.")                \
	X(RESTART_MS_PER_EPOCH, "Wait per restart", "ms",                                          \
	  "Time the loop lost at each such epoch start while new workers started.")                \
	X(LOST_MS, "Time lost", "ms", "Time lost at all those epoch starts together.")             \
	X(RUN_STEP_MS, "Mean step over the run", "ms",                                             \
	  "First step's begin to last step's end over the steps, epoch starts included.")          \
	X(PREDICTED_RUN_STEP_MS, "Mean step with persistent workers", "ms",                        \
	  "The run's mean step without the time lost at epoch starts.")                            \
	O(WORKER_RESTART, LOST_SHARE_PCT, "Share of the run lost", "%",                            \
	  "Time lost at epoch starts over the run's step time.")                                   \
	/* straggler */                                                                            \
	X(RANK, "Rank", "", "The rank of the distributed job concerned.")                          \
	O(STRAGGLER, RANK, "Straggler rank", "", "The rank that arrives last at the collectives.") \
	O(STRAGGLER, PATTERN, "Pattern", "",                                                       \
	  "Chronic: last in most steps; occasional: last in some, with long waits.")               \
	O(STRAGGLER, CAUSE, "Cause", "",                                                           \
	  "What makes it late, from its own breakdown: input, compute, gpu, ...")                  \
	X(CAUSE_CATEGORY, "Category behind the cause", "",                                         \
	  "The category of the straggler's step that exceeds the other ranks' most.")              \
	X(CAUSE_EXCESS_MS_PER_STEP, "Excess per step", "ms",                                       \
	  "The straggler's time in that category per step beyond the other ranks' median.")        \
	X(LAST_PCT, "Steps it arrived last", "%",                                                  \
	  "Share of the steps matched across ranks in which it arrived last.")                     \
	O(STRAGGLER, LOST_MS_PER_STEP, "Job time lost per step", "ms/step",                        \
	  "Sum over a step's collectives of the longest less the shortest wait, per step.")        \
	X(OTHERS_WAIT_MS_PER_STEP, "Others' wait per step", "ms",                                  \
	  "How long the other ranks wait for it at the collectives, per step.")                    \
	X(LATENESS_MS_PER_STEP, "Mean lateness", "ms/step",                                        \
	  "The other ranks' median wait less its own, per step, on average: what the job would "   \
	  "gain if it kept their pace.")                                                           \
	X(JITTER_MS, "The run's jitter", "ms",                                                     \
	  "The spread of its lateness from step to step (a normal sigma from the mean absolute "   \
	  "deviation about the median).")                                                          \
	X(JOB_STEP_MS, "Job step", "ms", "The median of the ranks' mean steps.")                   \
	X(RANKS, "Ranks", "", "Ranks of the job in the recording.")                                \
	X(MATCHED_STEPS, "Steps matched", "",                                                      \
	  "Steps whose collectives every rank began and ended.")                                   \
	/* host-memory-growth, gpu-memory-growth */                                                \
	X(SLOPE_BYTES_PER_STEP, "Growth per step", "B/step",                                       \
	  "Slope of the straight line fitted through live memory at each step's end.")             \
	X(R2, "Fit quality (R\xc2\xb2)", "",                                                       \
	  "How well a straight line explains the growth: 1 is perfectly steady growth.")           \
	X(FIRST_STEP, "First step fitted", "", "Step number where the fitted range begins.")       \
	X(LAST_STEP, "Last step fitted", "", "Step number where the fitted range ends.")           \
	X(SOURCE, "Memory measured from", "",                                                      \
	  "alloc_events or gpu_alloc_events: allocations and frees; rss: resident set size.")      \
	X(PROCESS_ROLE, "Processes fitted", "",                                                    \
	  "all: every process; main: the training loop's process; workers: the loader workers.")   \
	X(PID, "Process id", "", "The process whose memory grows.")                                \
	X(PYTHON_LINE, "Python line keeping objects", "",                                          \
	  "The program's own line whose container grew with the growing objects (a list's "        \
	  "append, a dict's store), else the line that created them (python_memory=True).")        \
	X(PYTHON_CREATED_LINE, "Python line creating them", "",                                    \
	  "The program's own line nearest to where the growing objects were created (torch's "     \
	  "and the Python library's frames skipped).")                                             \
	X(PYTHON_OBJECTS_KEPT, "Python objects kept", "",                                          \
	  "Python objects created there and still alive, more than at warm-up.")                   \
	X(LATE_GROWTH_PCT, "Still growing at the end", "%",                                        \
	  "Rise of the last quarter of the fitted steps over the quarter before, as a share of "   \
	  "what the fitted line adds there: about 100 for a leak, about 0 when memory levels "     \
	  "off.")                                                                                  \
	X(GROWTH_OVER_RUN_MIB, "Growth over the run", "MiB",                                       \
	  "Growth per step times the run's steps.")                                                \
	X(HORIZON_RUNS, "Grading horizon", "runs",                                                 \
	  "The growth is graded by what it adds over a run this many times as long.")              \
	X(HORIZON_GROWTH_MIB, "Growth over the horizon", "MiB",                                    \
	  "Growth per step times the steps of a run that many times as long: what grades it.")     \
	X(PEAK_MIB, "Peak memory", "MiB", "The most of this memory held at once.")                 \
	X(PROJECTION_STEPS, "Projection horizon", "steps",                                         \
	  "How many steps ahead the projected growth looks.")                                      \
	X(PROJECTED_GROWTH_MIB, "Projected growth", "MiB",                                         \
	  "Memory the growth adds over the projection horizon if nothing changes.")                \
	X(SITE_PID, "Allocating process", "",                                                      \
	  "Process id of the allocation site holding the most memory at the end.")                 \
	X(SITE_ROLE, "Allocating process's role", "", "main, worker or other.")                    \
	X(IP, "Code address", "",                                                                  \
	  "Address of the allocating code, where the program gave the span no label.")             \
	X(SITE_LIVE_MIB, "Memory the site holds", "MiB",                                           \
	  "Memory from that site still allocated at the end of the trace.")                        \
	X(SITE_LIVE_ALLOCATIONS, "Allocations the site holds", "",                                 \
	  "Allocations from that site not freed by the end of the trace.")                         \
	O(HOST_MEMORY_GROWTH, STEPS, "Steps fitted", "",                                           \
	  "Steady steps after warm-up with a memory sample, through which the line is fitted.")    \
	O(HOST_MEMORY_GROWTH, STAGE, "Allocating stage", "",                                       \
	  "The stage that ran when the site's memory still held was allocated.")                   \
	O(HOST_MEMORY_GROWTH, LABEL, "Allocating span's label", "",                                \
	  "The program's label of the span in which that memory was allocated.")                   \
	O(GPU_MEMORY_GROWTH, STEPS, "Steps fitted", "",                                            \
	  "Steady steps after warm-up with a memory sample, through which the line is fitted.")    \
	O(GPU_MEMORY_GROWTH, STAGE, "Allocating stage", "",                                        \
	  "The stage that ran when the site's memory still held was allocated.")                   \
	O(GPU_MEMORY_GROWTH, LABEL, "Allocating span's label", "",                                 \
	  "The program's label of the span in which that memory was allocated.")                   \
	/* worker-copy-on-access */                                                                \
	X(PRIVATE_GROWTH_BYTES, "Workers' private growth", "B",                                    \
	  "How much the unique sets (pages only the process maps) of the loader workers alive "    \
	  "together grew from their first sample to their largest, summed.")                       \
	X(PRIVATE_GROWTH_PER_WORKER_MIB, "Private growth per worker", "MiB",                       \
	  "The workers' private growth divided by the number of workers.")                         \
	X(LARGEST_WORKER_GROWTH_MIB, "Largest worker's growth", "MiB",                             \
	  "The private growth of the worker that grew the most.")                                  \
	X(UNSHARED_PCT, "Un-shared share", "%",                                                    \
	  "Share of the private growth the resident sets did not grow by: pages that were "        \
	  "shared with the training process and were copied when written.")                        \
	X(WORKER_RSS_GROWTH_MIB, "Workers' resident growth", "MiB",                                \
	  "How much the same workers' resident sets grew over the same samples, summed.")          \
	X(MACHINE_MEMORY_MIB, "Machine's memory", "MiB", "Physical memory of the traced machine.") \
	X(MACHINE_PCT, "Share of the machine's memory", "%",                                       \
	  "The workers' private growth over the machine's memory.")                                \
	X(JOB_PSS_MIB, "Memory of the job", "MiB",                                                 \
	  "Proportional sets (each page divided by the processes that map it) of the training "    \
	  "process and those workers at their peaks, summed: what they hold of the machine.")      \
	X(JOB_MACHINE_PCT, "Job's share of the machine's memory", "%",                             \
	  "The job's proportional sets over the machine's memory.")                                \
	O(WORKER_COPY_ON_ACCESS, NUM_WORKERS, "Workers alive together", "",                        \
	  "The loader workers whose private growth is summed: those alive at one moment.")         \
	/* unfreed-allocations */                                                                  \
	X(LIVE_MIB, "Memory never freed", "MiB",                                                   \
	  "Memory still allocated at the end of the trace, all sites together.")                   \
	X(LIVE_ALLOCATIONS, "Allocations never freed", "",                                         \
	  "Allocations still live at the end of the trace.")                                       \
	X(SITES, "Allocation sites", "",                                                           \
	  "Allocation sites still holding memory at the end of the trace.")                        \
	X(SITE_N_WHERE, "Site #: allocated in", "",                                                \
	  "Process, stage and label (or code address) of the site; site 1 holds the most.")        \
	X(SITE_N_LIVE_MIB, "Site #: memory held", "MiB",                                           \
	  "Memory from the site still allocated at the end of the trace.")                         \
	X(SITE_N_DEVICE, "Site #: device", "",                                                     \
	  "host, or the GPU (gpu0, gpu1, ...) that holds the site's memory.")                      \
	/* step-outliers */                                                                        \
	X(OUTLIERS, "Slow steps", "", "Steady steps slower than the threshold.")                   \
	X(MEDIAN_MS, "Median steady step time", "ms",                                              \
	  "Median time of the steady steps (what the findings measure).")                          \
	X(EXCESS_MS_PER_OUTLIER, "Extra time per slow step", "ms",                                 \
	  "Mean time a slow step takes beyond the median step.")                                   \
	X(EXCESS_SHARE_PCT, "Run time lost to slow steps", "%",                                    \
	  "The slow steps' extra time over the steady steps' total time.")                         \
	X(PERIOD_STEPS, "Period", "steps",                                                         \
	  "Steps between periodic slow steps; 0 when they come at irregular intervals.")           \
	X(PATTERN, "Pattern", "",                                                                  \
	  "periodic: slow steps recur at a fixed interval; sporadic: they do not.")                \
	X(CAUSE_EXCESS_MS_PER_OUTLIER, "Cause's extra time per slow step", "ms",                   \
	  "Mean extra time per slow step in the cause's activity, beyond its median.")             \
	O(STEP_OUTLIERS, THRESHOLD_MS, "Slow-step threshold", "ms",                                \
	  "Steps slower than this are slow: the median plus k scaled deviations, or more.")        \
	O(STEP_OUTLIERS, CAUSE, "Where the extra time goes", "",                                   \
	  "The activity with the most extra time in the slow steps over the median step.")         \
	X(GC_COLLECTIONS, "Garbage collections", "",                                               \
	  "Collections the training loop's runtime reported (generations 1 and 2).")               \
	X(GC_COLLECTED_PER_COLLECTION, "Objects freed per collection", "",                         \
	  "Mean objects a collection freed: few, and its time went to walking live objects.")      \
	X(GC_UNCOLLECTABLE, "Uncollectable objects", "",                                           \
	  "Objects the collections found unreachable and could not free (gc.garbage).")            \
	/* level-shift */                                                                          \
	X(STEP, "From step", "", "The first step of the new level.")                               \
	X(EPOCH, "Epoch", "", "The epoch of that step.")                                           \
	X(SINCE_S, "When", "s after the first step",                                               \
	  "Time from the first step's begin to the first step of the new level.")                  \
	X(BEFORE_MS, "Step before", "ms",                                                          \
	  "The earlier level's step time: the median of its steps' means over blocks.")            \
	X(AFTER_MS, "Step after", "ms",                                                            \
	  "The new level's step time: the median of its steps' means over blocks.")                \
	X(CHANGE_PCT, "Change", "%", "Change of the step time over the earlier level.")            \
	X(STEPS_BEFORE, "Steps before", "", "Steady steps of the earlier level.")                  \
	X(STEPS_AFTER, "Steps after", "", "Steady steps of the new level.")                        \
	X(SEPARATION_PCT, "Separation", "%",                                                       \
	  "Pairs of a block of steps before and one after the change ordered as the change.")      \
	X(CATEGORY, "What moved", "",                                                              \
	  "The activity whose median time per step moved most in the direction of the change.")    \
	X(CATEGORY_BEFORE_MS, "Its time before", "ms/step",                                        \
	  "Median time per step of that activity before the change.")                              \
	X(CATEGORY_AFTER_MS, "Its time after", "ms/step",                                          \
	  "Median time per step of that activity after the change.")                               \
	O(LEVEL_SHIFT, LOST_SHARE_PCT, "Share of the run lost", "%",                               \
	  "Time the slower later level costs over the earlier one, over the steady steps' time.")  \
	/* trace-data-loss */                                                                      \
	X(DISCARDED_EVENTS, "Events discarded", "",                                                \
	  "Events the tracer dropped because its buffers were full.")                              \
	X(DISCARDED_PACKETS, "Packets discarded", "",                                              \
	  "Whole packets of events the tracer dropped.")                                           \
	X(UNKNOWN_DISCARDS, "Losses of unknown size", "",                                          \
	  "Places where the trace says events were lost without saying how many.")                 \
	X(DISCARDED_PCT, "Share of events discarded", "%",                                         \
	  "Discarded events over all events, read and discarded.")                                 \
	X(UNMATCHED_SPANS, "Unmatched spans", "", "Spans whose begin or end event is missing.")    \
	X(GPU_RECORDS_DROPPED, "GPU records dropped", "",                                          \
	  "GPU activity records the CUPTI collector lost because its buffers were full.")          \
	X(MISSING_WINDOWS, "Windows missing from the files", "",                                   \
	  "Stream cuts and a recording ending before its command, seen in the trace's files.")     \
	X(LOSSY_STEPS, "Steps overlapping a loss", "",                                             \
	  "Steps that overlap lost data; no verdict uses them.")                                   \
	X(LOSSY_STEPS_PCT, "Share of steps overlapping a loss", "%",                               \
	  "Steps overlapping lost data over all steps.")                                           \
	O(TRACE_DATA_LOSS, STEPS, "Steps in the trace", "",                                        \
	  "All steps of the trace, those overlapping a loss included.")                            \
	/* gpu-idle */                                                                             \
	X(DEVICE, "GPU", "", "Index of the GPU device.")                                           \
	X(IDLE_SHARE_PCT, "GPU idle share", "%",                                                   \
	  "Idle gaps longer than the threshold over the steady steps' time.")                      \
	X(IDLE_MS_PER_STEP, "GPU idle time", "ms/step",                                            \
	  "Idle time per steady step in gaps longer than the threshold.")                          \
	X(GAPS, "Idle gaps counted", "",                                                           \
	  "Idle gaps longer than the threshold within steady steps.")                              \
	X(GAP_MAX_MS, "Longest idle gap", "ms", "The longest idle gap counted.")                   \
	X(GPU_BUSY_PCT, "GPU busy", "%",                                                           \
	  "Share of the steady steps' time with any GPU busy: the headline's GPU busy.")           \
	O(GPU_IDLE, THRESHOLD_MS, "Shortest gap counted", "ms",                                    \
	  "Idle gaps shorter than this are not counted (a minimum, or a share of the median "      \
	  "step).")                                                                                \
	O(GPU_IDLE, CAUSE, "Main cause of idle time", "",                                          \
	  "What the training thread did during most of the GPU's idle time.")                      \
	X(CATEGORY_MS_PER_STEP, "GPU idle: @", "ms/step",                                          \
	  "Idle GPU time per steady step while the training thread was in this activity.")

/* General words, indexed by key; a key the table misses has a NULL name. */
static const struct po_evidence_entry general[PO_EVIDENCE_KEY_COUNT] = {
#define PO_X(key, name, unit, meaning)                                                             \
	[PO_EVIDENCE_##key] = {PO_EVIDENCE_ANY_FINDING, PO_EVIDENCE_##key, name, unit, meaning},
#define PO_O(finding, key, name, unit, meaning)
    PO_EVIDENCE_NAMES(PO_X, PO_O)
#undef PO_X
#undef PO_O
};

/* The words of one finding, where they differ from the general ones. */
static const struct po_evidence_entry overrides[] = {
#define PO_X(key, name, unit, meaning)
#define PO_O(finding, key, name, unit, meaning)                                                    \
	{PO_FINDING_##finding, PO_EVIDENCE_##key, name, unit, meaning},
    PO_EVIDENCE_NAMES(PO_X, PO_O)
#undef PO_X
#undef PO_O
};

#define OVERRIDE_COUNT (sizeof(overrides) / sizeof(overrides[0]))

const struct po_evidence_entry *po_evidence_entry_of(enum po_evidence_key key)
{
	return (unsigned)key < PO_EVIDENCE_KEY_COUNT && general[key].name ? &general[key] : NULL;
}

size_t po_evidence_override_count(void)
{
	return OVERRIDE_COUNT;
}

const struct po_evidence_entry *po_evidence_override_at(size_t index)
{
	return index < OVERRIDE_COUNT ? &overrides[index] : NULL;
}

/* The finding's own words for key, else the general ones; NULL for a key out of range. */
static const struct po_evidence_entry *find_entry(enum po_finding_id finding,
						  enum po_evidence_key key)
{
	for (size_t i = 0; i < OVERRIDE_COUNT; i++) {
		if (overrides[i].finding == finding && overrides[i].key == key)
			return &overrides[i];
	}
	return po_evidence_entry_of(key);
}

/* The entry's name with its "#" or "@" replaced by the key's parameter. */
static void expand_name(const char *name, enum po_evidence_key key, union po_evidence_param param,
			char *out, size_t out_size)
{
	const char *hole = name + strcspn(name, "#@");
	enum po_evidence_param_kind kind = po_evidence_key_param_kind(key);

	if (*hole == '#' && kind == PO_EVIDENCE_PARAM_NUMBER)
		snprintf(out, out_size, "%.*s%u%s", (int)(hole - name), name, param.number,
			 hole + 1);
	else if (*hole == '@' && kind == PO_EVIDENCE_PARAM_CATEGORY)
		snprintf(out, out_size, "%.*s%s%s", (int)(hole - name), name,
			 po_report_category_title(param.category), hole + 1);
	else
		snprintf(out, out_size, "%s", name);
}

void po_evidence_words(enum po_finding_id finding, enum po_evidence_key key,
		       union po_evidence_param param, struct po_evidence_words *words)
{
	const struct po_evidence_entry *entry = find_entry(finding, key);

	*words = (struct po_evidence_words){.meaning = ""};
	if (!entry) {
		snprintf(words->name, sizeof(words->name), "Value");
		return;
	}
	expand_name(entry->name, key, param, words->name, sizeof(words->name));
	snprintf(words->unit, sizeof(words->unit), "%s", entry->unit);
	words->meaning = entry->meaning;
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
