/*
 * rules.h: every detection rule, threshold and default of the detectors, declared once.
 *
 * PO_RULES is the single table: the struct po_rules members, their defaults
 * (po_rules_init), the RULE.KEY=VALUE parser (--set, --config) and the table in
 * docs/rules.md all come from it (a unit test keeps the document in step with it).
 * Every value is a non-negative double; counts are whole numbers stored as doubles.
 */
#ifndef PO_RULES_H
#define PO_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"

/* X(member, "rule", "key", default, "unit", "what it does", "where the default comes from") */
#define PO_RULES(X)                                                                                \
	X(input_bound_warning_pct, "input-bound", "warning_pct", 5, "%",                           \
	  "share of clean step time spent waiting for data from which input-bound is a warning",   \
	  "TensorFlow Profiler input-pipeline analysis (moderately input-bound from 5%)")          \
	X(input_bound_critical_pct, "input-bound", "critical_pct", 20, "%",                        \
	  "share of clean step time spent waiting for data from which input-bound is critical",    \
	  "TensorFlow Profiler (highly input-bound from 20%); PyTorch profiler's data-loader "     \
	  "note")                                                                                  \
	X(input_bound_min_steps, "input-bound", "min_steps", 20, "steps",                          \
	  "clean steps needed before input-bound may fire",                                        \
	  "profopt: a mean over fewer steps is noise")                                             \
	X(input_bound_waiting_steps_pct, "input-bound", "waiting_steps_pct", 25, "%",              \
	  "steps that must wait more than half the warning share of their own time: fewer means "  \
	  "sporadic spikes",                                                                       \
	  "profopt")                                                                               \
	X(input_bound_worker_busy_pct, "input-bound", "worker_busy_pct", 80, "%",                  \
	  "worker busy share from which the workers are the bottleneck (too-few-workers)",         \
	  "profopt")                                                                               \
	X(input_bound_saturated_pct, "input-bound", "saturated_pct", 90, "%",                      \
	  "CPU demand of workers plus main loop, as a share of the cores, from which the cores "   \
	  "are saturated",                                                                         \
	  "profopt")                                                                               \
	X(input_bound_starved_ratio, "input-bound", "starved_ratio", 1.25, "ratio",                \
	  "wall over CPU time of the workers' CPU stages from which they wait for a core",         \
	  "profopt")                                                                               \
	X(input_bound_io_share_pct, "input-bound", "io_share_pct", 50, "%",                        \
	  "share of a batch's service time spent waiting (not on CPU) from which loading is "      \
	  "I/O-like",                                                                              \
	  "profopt")                                                                               \
	X(input_bound_h2d_warning_pct, "input-bound", "h2d_warning_pct", 15, "%",                  \
	  "share of step time in host-to-device copies from which slow-h2d fires", "profopt")      \
	X(input_bound_within_best_pct, "input-bound", "within_best_pct", 5, "%",                   \
	  "the recommended num_workers is the smallest whose predicted step is within this of "    \
	  "the best",                                                                              \
	  "profopt")                                                                               \
	X(input_bound_worker_headroom_pct, "input-bound", "worker_headroom_pct", 20, "%",          \
	  "recommended workers deliver a batch at least this much faster than the loop needs one", \
	  "profopt: loading jitter must not stall the loop")                                       \
	X(input_bound_max_workers, "input-bound", "max_workers", 32, "workers",                    \
	  "largest num_workers the what-if model considers", "profopt")                            \
	X(input_bound_pinned_saving_pct, "input-bound", "pinned_saving_pct", 50, "%",              \
	  "share of host-to-device copy time assumed saved by pin_memory with non_blocking "       \
	  "copies",                                                                                \
	  "PyTorch pinned-memory guide (pinned copies are about twice as fast and can overlap)")   \
	X(input_bound_burst_cv, "input-bound", "burst_cv", 0.3, "ratio",                           \
	  "coefficient of variation of per-batch load time from which workers count as bursty "    \
	  "and the queue model weighs a deeper prefetch_factor",                                   \
	  "profopt")                                                                               \
	X(input_bound_prefetch_max, "input-bound", "prefetch_max", 4, "batches",                   \
	  "largest prefetch_factor the queue model considers", "PyTorch DataLoader (default 2)")   \
	X(input_bound_default_handoff_ms, "input-bound", "default_handoff_ms", 1.2, "ms",          \
	  "hand-off per batch the what-if adds when it moves loading from the main process to "    \
	  "workers (a run without workers has none to measure)",                                   \
	  "profopt: PyTorch's hand-off of a batch of small images measured 0.8-1.6 ms on 2 cores") \
	X(input_bound_handoff_min_steps, "input-bound", "handoff_min_steps", 5, "steps",           \
	  "steps that found their batch ready needed to measure the hand-off cost", "profopt")     \
	X(input_bound_hotspot_min_samples, "input-bound", "hotspot_min_samples", 20, "samples",    \
	  "function samples of the slowest loading stage needed to name the function that "        \
	  "dominates it (docs/sampling.md)",                                                       \
	  "profopt: at 100 Hz, 0.2 s of the stage's CPU time; a share from 20 samples is within "  \
	  "about 10 points")                                                                       \
	X(gpu_idle_min_gap_ms, "gpu-idle", "min_gap_ms", 1, "ms",                                  \
	  "GPU gaps shorter than this are ignored (also passed to the model)", "profopt")          \
	X(gpu_idle_min_gap_step_pct, "gpu-idle", "min_gap_step_pct", 5, "%",                       \
	  "GPU gaps shorter than this share of the median step are ignored", "profopt")            \
	X(gpu_idle_warning_pct, "gpu-idle", "warning_pct", 10, "%",                                \
	  "share of clean step time in counted GPU gaps from which gpu-idle is a warning",         \
	  "profopt")                                                                               \
	X(gpu_idle_critical_pct, "gpu-idle", "critical_pct", 30, "%",                              \
	  "share of clean step time in counted GPU gaps from which gpu-idle is critical",          \
	  "profopt")                                                                               \
	X(gpu_idle_max_windows, "gpu-idle", "max_windows", 10, "gaps",                             \
	  "worst gaps listed as windows", "profopt")                                               \
	X(memory_growth_warmup_pct, "memory-growth", "warmup_pct", 10, "%",                        \
	  "share of the steps skipped as warm-up before fitting the growth (host and GPU)",        \
	  "profopt")                                                                               \
	X(memory_growth_warmup_min_steps, "memory-growth", "warmup_min_steps", 5, "steps",         \
	  "steps skipped as warm-up at least", "profopt")                                          \
	X(memory_growth_min_steps, "memory-growth", "min_steps", 10, "steps",                      \
	  "steps after warm-up needed to fit a trend", "profopt")                                  \
	X(memory_growth_min_slope_bytes, "memory-growth", "min_slope_bytes", 1024, "bytes/step",   \
	  "slope below which memory counts as flat", "profopt")                                    \
	X(memory_growth_min_r2, "memory-growth", "min_r2", 0.8, "ratio",                           \
	  "least-squares fit (R^2) needed to report growth", "profopt")                            \
	X(memory_growth_late_pct, "memory-growth", "late_pct", 50, "%",                            \
	  "rise of the last quarter of the fitted steps over the quarter before (their medians), " \
	  "as a share of what the fitted line adds between them, below which memory levels off "   \
	  "and is not reported",                                                                   \
	  "profopt: a leak adds as much at the end of a run as at its start; a cache that "        \
	  "filled, "                                                                               \
	  "a bounded history or an allocator that warmed up adds nothing at the end")              \
	X(memory_growth_horizon_runs, "memory-growth", "horizon_runs", 10, "runs",                 \
	  "the growth is graded by what it adds over a run this many times as long", "profopt")    \
	X(memory_growth_min_horizon_pct, "memory-growth", "min_horizon_pct", 5, "%",               \
	  "growth over the horizon, as a share of the peak, below which it is not reported",       \
	  "profopt: a run ten times as long would hardly notice it (resident sets settle by a "    \
	  "fraction of a percent)")                                                                \
	X(memory_growth_warning_horizon_pct, "memory-growth", "warning_horizon_pct", 10, "%",      \
	  "growth over the horizon, as a share of the peak, from which growth is a warning (info " \
	  "below)",                                                                                \
	  "profopt")                                                                               \
	X(memory_growth_critical_mib, "memory-growth", "critical_mib", 1024, "MiB",                \
	  "growth over the horizon from which growth is critical", "profopt")                      \
	X(memory_growth_critical_peak_pct, "memory-growth", "critical_peak_pct", 50, "%",          \
	  "growth over the horizon, as a share of the peak, from which growth is critical",        \
	  "profopt")                                                                               \
	X(memory_growth_projection_steps, "memory-growth", "projection_steps", 10000, "steps",     \
	  "steps ahead for the predicted effect (bytes held after N more steps)", "profopt")       \
	X(unfreed_min_mib, "unfreed-allocations", "min_mib", 1, "MiB",                             \
	  "live bytes at the end of the trace below which nothing is reported", "profopt")         \
	X(unfreed_max_sites, "unfreed-allocations", "max_sites", 5, "sites",                       \
	  "allocation sites named in the evidence", "profopt")                                     \
	X(copy_on_access_min_mib, "worker-copy-on-access", "min_mib", 32, "MiB",                   \
	  "private growth per loader worker (the mean over the workers alive together) below "     \
	  "which nothing is reported",                                                             \
	  "profopt: a forked PyTorch worker un-shares 3 to 6 MiB of its parent by itself "         \
	  "(copy_on_access_numpy); one reading a list of 2 million str, 158 MiB")                  \
	X(copy_on_access_unshared_pct, "worker-copy-on-access", "unshared_pct", 50, "%",           \
	  "share of the workers' private growth that their resident sets did not grow by (pages "  \
	  "un-shared from the parent, not allocated) from which the growth is copy-on-access; "    \
	  "below, the workers allocated it themselves, which memory-growth judges",                \
	  "profopt: un-shared pages were resident already (95% in copy_on_access_list); "          \
	  "a worker's own allocations grow both sets alike")                                       \
	X(copy_on_access_warning_machine_pct, "worker-copy-on-access", "warning_machine_pct", 10,  \
	  "%",                                                                                     \
	  "the workers' private growth, as a share of the machine's memory, from which the "       \
	  "finding is a warning (info below; a warning when the machine's memory is unknown)",     \
	  "profopt")                                                                               \
	X(copy_on_access_critical_machine_pct, "worker-copy-on-access", "critical_machine_pct",    \
	  50, "%",                                                                                 \
	  "the workers' private growth, as a share of the machine's memory, from which the "       \
	  "finding is critical: one more worker or a larger dataset runs the machine out of "      \
	  "memory",                                                                                \
	  "profopt")                                                                               \
	X(step_outliers_mad_k, "step-outliers", "mad_k", 3, "MADs",                                \
	  "a step is an outlier above median + k scaled MADs",                                     \
	  "robust statistics (Hampel filter)")                                                     \
	X(step_outliers_min_excess_pct, "step-outliers", "min_excess_pct", 20, "% over median",    \
	  "an outlier is also at least this much slower than the median step", "profopt")          \
	X(step_outliers_min_steps, "step-outliers", "min_steps", 20, "steps",                      \
	  "clean steps needed before looking for outliers", "profopt")                             \
	X(step_outliers_min_count, "step-outliers", "min_count", 3, "steps",                       \
	  "outliers needed for a finding", "profopt")                                              \
	X(step_outliers_warning_pct, "step-outliers", "warning_pct", 5, "%",                       \
	  "share of clean time lost in outliers from which the finding is a warning", "profopt")   \
	X(step_outliers_period_min_hits, "step-outliers", "period_min_hits", 3, "steps",           \
	  "outliers at one phase needed before a period is considered", "profopt")                 \
	X(step_outliers_period_pct, "step-outliers", "period_pct", 70, "%",                        \
	  "share of the steps of one phase (every N steps) that must be outliers for a period N",  \
	  "profopt")                                                                               \
	X(step_outliers_period_chance_pct, "step-outliers", "period_chance_pct", 0.1, "%",         \
	  "chance that slow steps falling at random at the run's rate fill one phase of some "     \
	  "period, below which the phase makes a period even when sporadic slow steps hold most "  \
	  "of the excess",                                                                         \
	  "profopt: the binomial tail of one phase times the phases tried")                        \
	X(level_shift_min_steps, "level-shift", "min_steps", 50, "steps",                          \
	  "steady steps needed on each side of a level shift",                                     \
	  "profopt: fewer are a burst (another program busy for a moment), not a level")           \
	X(level_shift_min_change_pct, "level-shift", "min_change_pct", 20, "%",                    \
	  "change of the median step, as a share of the earlier level, from which a shift is "     \
	  "reported",                                                                              \
	  "profopt (as step-outliers.min_excess_pct)")                                             \
	X(level_shift_min_separation_pct, "level-shift", "min_separation_pct", 80, "%",            \
	  "pairs of a block before and a block after the shift (blocks of min_steps / 10 steps) "  \
	  "that are ordered as the shift says, below which the two levels overlap too much",       \
	  "profopt: the common-language effect size of the Mann-Whitney test")                     \
	X(level_shift_warning_pct, "level-shift", "warning_pct", 5, "%",                           \
	  "share of clean time the slower later level costs, from which the finding is a warning", \
	  "profopt (as step-outliers.warning_pct)")                                                \
	X(cpu_contention_min_steps, "cpu-contention", "min_steps", 20, "steps",                    \
	  "clean steps needed before cpu-contention may fire",                                     \
	  "profopt: a mean over fewer steps is noise")                                             \
	X(cpu_contention_loop_share_pct, "cpu-contention", "loop_share_pct", 85, "%",              \
	  "CPU the training loop's process gets during forward, backward and optimizer, as a "     \
	  "share of their wall time, below which the loop waits for a core",                       \
	  "profopt-sim on 2 cores: the loop got 100% alone or beside 1 light worker, 40-76% "      \
	  "beside 3 CPU-bound workers")                                                            \
	X(cpu_contention_warning_pct, "cpu-contention", "warning_pct", 10, "%",                    \
	  "share of the step the loop loses waiting for a core from which cpu-contention is a "    \
	  "warning",                                                                               \
	  "profopt (as gpu-idle.warning_pct)")                                                     \
	X(cpu_contention_critical_pct, "cpu-contention", "critical_pct", 30, "%",                  \
	  "share of the step the loop loses waiting for a core from which cpu-contention is "      \
	  "critical",                                                                              \
	  "profopt (as gpu-idle.critical_pct)")                                                    \
	X(handoff_warning_pct, "loader-handoff", "warning_pct", 10, "%",                           \
	  "share of clean step time the loop spends receiving batches that were already ready "    \
	  "in their worker, from which loader-handoff is a warning",                               \
	  "profopt: PyTorch's hand-off of a batch of 8 small images costs 1-3 ms on 2 cores")      \
	X(handoff_critical_pct, "loader-handoff", "critical_pct", 30, "%",                         \
	  "the same share from which loader-handoff is critical", "profopt (as input-bound)")      \
	X(handoff_min_steps, "loader-handoff", "min_steps", 20, "steps",                           \
	  "clean steps needed before loader-handoff may fire",                                     \
	  "profopt: a mean over fewer steps is noise")                                             \
	X(loader_imbalance_ratio, "loader-imbalance", "ratio", 2, "ratio",                         \
	  "a worker's making time per batch over the other workers' from which it is the slow "    \
	  "one",                                                                                   \
	  "profopt")                                                                               \
	X(loader_imbalance_warning_pct, "loader-imbalance", "warning_pct", 10, "%",                \
	  "share of the step the loop loses to the slow worker from which loader-imbalance is a "  \
	  "warning",                                                                               \
	  "profopt")                                                                               \
	X(loader_imbalance_critical_pct, "loader-imbalance", "critical_pct", 30, "%",              \
	  "share of the step lost from which loader-imbalance is critical", "profopt")             \
	X(loader_imbalance_min_batches, "loader-imbalance", "min_batches", 10, "batches",          \
	  "batches a worker must have made to be compared", "profopt: fewer are noise")            \
	X(worker_restart_min_pct, "worker-restart", "min_pct", 5, "%",                             \
	  "share of the run's step time lost while workers start again at epoch starts, from "     \
	  "which worker-restart fires",                                                            \
	  "profopt")                                                                               \
	X(worker_restart_min_epochs, "worker-restart", "min_epochs", 2, "epochs",                  \
	  "epochs that started new workers (after the first) needed before worker-restart may "    \
	  "fire",                                                                                  \
	  "profopt: one restart is not a pattern")                                                 \
	X(straggler_min_lost_pct, "straggler", "min_lost_pct", 10, "%",                            \
	  "the rank's mean lateness at the collectives (the other ranks' median wait less its "    \
	  "own, per matched step: what the job would gain if it kept their pace), as a share of "  \
	  "the job's synchronising step (the ranks' median step times the steps per all-reduce "   \
	  "under gradient accumulation), from which straggler fires",                              \
	  "profopt: balanced ranks on a shared 2-core machine arrive 4-5 ms apart (13-16% of the " \
	  "step), each last about half the time: their mean lateness stays below 5%")              \
	X(straggler_min_lost_ms, "straggler", "min_lost_ms", 1, "ms",                              \
	  "the same mean lateness in milliseconds below which straggler never fires",              \
	  "profopt: scheduling jitter between ranks")                                              \
	X(straggler_stand_out, "straggler", "stand_out", 3, "standard errors",                     \
	  "how far the rank's mean lateness must lie above zero, in standard errors of that mean " \
	  "(the run's own jitter, the per-step lateness's mean absolute deviation about its "      \
	  "median scaled to a sigma, over the square root of the matched steps), for straggler "   \
	  "to fire",                                                                               \
	  "profopt: a mean within 3 standard errors of zero is the run's jitter, not one rank")    \
	X(straggler_critical_pct, "straggler", "critical_pct", 30, "%",                            \
	  "the same share of the mean lateness from which straggler is critical", "profopt")       \
	X(straggler_chronic_pct, "straggler", "chronic_pct", 75, "%",                              \
	  "share of the matched steps in which the straggler arrived last from which it is "       \
	  "chronic (else occasional)",                                                             \
	  "profopt")                                                                               \
	X(straggler_min_steps, "straggler", "min_steps", 10, "steps",                              \
	  "steps matched across ranks needed before straggler may fire",                           \
	  "profopt: a mean over fewer steps is noise")                                             \
	X(trace_loss_warning_pct, "trace-data-loss", "warning_pct", 0.1, "%",                      \
	  "discarded events, as a share of all, from which data loss is a warning", "profopt")     \
	X(trace_loss_critical_pct, "trace-data-loss", "critical_pct", 5, "%",                      \
	  "discarded events or lossy steps, as a share, from which data loss is critical",         \
	  "profopt")                                                                               \
	X(confidence_full_steps, "confidence", "full_steps", 100, "steps",                         \
	  "clean steps from which the step count no longer lowers confidence", "profopt")          \
	X(confidence_loss_penalty, "confidence", "loss_penalty", 0.2, "ratio",                     \
	  "confidence removed when events or packets were discarded (twice for unknown counts)",   \
	  "profopt")                                                                               \
	X(recommend_min_gain_pct, "recommend", "min_gain_pct", 2, "%",                             \
	  "a recommendation whose predicted step is not at least this much shorter than the "      \
	  "measured one is not listed: a predicted slowdown or no change is no advice (a "         \
	  "withheld prediction is listed)",                                                        \
	  "profopt: a smaller gain is within a rerun's noise")                                     \
	X(compare_min_effect_pct, "compare", "min_effect_pct", 5, "%",                             \
	  "a change between two runs is significant only when the rank test rejects and the "      \
	  "relative change is at least this large: smaller changes are reported as noise",         \
	  "profopt: repeat recordings of one configuration differed by 3 to 6% in median step "    \
	  "on a 2-core machine")                                                                   \
	X(compare_load_difference_pct, "compare", "load_difference_pct", 25, "%",                  \
	  "difference between the two runs in what they got of the CPU (the stretch of their "     \
	  "processes' CPU work by run-queue waits, else the cores other programs left them), "     \
	  "as a share of the larger, from which a change in time is inconclusive rather than "     \
	  "significant (a --fail-if on it exits 8)",                                               \
	  "profopt: a repeat run recorded beside two busy loops on 2 cores had a median step "     \
	  "82% longer and a CPU stretch of 2.37 against 1.24")                                     \
	X(verdict_min_steps, "verdict", "min_steps", 20, "steps",                                  \
	  "clean steps needed for a verdict other than unknown", "profopt")                        \
	X(verdict_min_coverage_pct, "verdict", "min_coverage_pct", 50, "%",                        \
	  "share of the time from the first step to the last that steps must cover for a verdict " \
	  "other than unknown: what happens outside them is not measured",                         \
	  "profopt")                                                                               \
	X(verdict_max_unmarked_pct, "verdict", "max_unmarked_pct", 90, "%",                        \
	  "share of the step in no span (other) above which the verdict is unknown: steps marked " \
	  "with nothing inside them say nothing of where the time goes",                           \
	  "profopt")                                                                               \
	X(verdict_gpu_bound_pct, "verdict", "gpu_bound_pct", 80, "%",                              \
	  "GPU busy share of clean step time from which the run is gpu-bound", "profopt")          \
	X(verdict_host_gpu_pct, "verdict", "host_gpu_pct", 50, "%",                                \
	  "GPU busy share below which host compute may make the run host-bound", "profopt")        \
	X(verdict_host_compute_pct, "verdict", "host_compute_pct", 50, "%",                        \
	  "share of step time in host compute categories from which the run is host-bound",        \
	  "profopt")                                                                               \
	X(machine_others_pct, "machine", "others_pct", 25, "%",                                    \
	  "share of the cores other programs used while the trace was recorded (the machine's "    \
	  "busy CPU less the recorded processes' own) from which the trace quality and the "       \
	  "verdict say so and predictions that depend on the cores the program gets are withheld", \
	  "profopt: the workload suite skips timing checks from the same share "                   \
	  "(tests/lib/machine.py)")                                                                \
	X(self_cost_visible_pct, "self-cost", "visible_pct", 1, "%",                               \
	  "profopt's own CPU time per step (the recorded processes' hooks, gc callbacks and "      \
	  "library threads, and the recorder's) as a share of the steady mean step from which "    \
	  "the trace quality says that the report's step times include it",                        \
	  "profopt: repeat recordings of one configuration differ by 3-6% in median step on a "    \
	  "2-core machine; a cost under 1% is inside that noise")                                  \
	X(live_snapshot_cpu_pct, "live", "snapshot_cpu_pct", 5, "% of a core",                     \
	  "the most of one core the windows' snapshots may take: a window whose snapshot took T "  \
	  "seconds is followed by the next no sooner than T / this share later (--every is the "   \
	  "shortest spacing)",                                                                     \
	  "profopt: a long run's snapshot re-reads every step")                                    \
	X(live_window_s, "live", "window_s", 10, "s",                                              \
	  "length of the sliding window that profopt-analyze --live judges: the steps that ended " \
	  "in its last this many seconds",                                                         \
	  "profopt")                                                                               \
	X(live_min_window_steps, "live", "min_window_steps", 5, "steps",                           \
	  "steps a window needs before its step-based alerts are judged", "profopt")               \
	X(live_raise_windows, "live", "raise_windows", 2, "windows",                               \
	  "windows in a row a condition must hold before its alert is raised",                     \
	  "profopt: one noisy window is not a trend")                                              \
	X(live_clear_windows, "live", "clear_windows", 3, "windows",                               \
	  "windows in a row a raised alert's condition must be off before it is cleared",          \
	  "profopt")                                                                               \
	X(live_clear_margin_pct, "live", "clear_margin_pct", 20, "%",                              \
	  "a raised alert's value must fall this far below its threshold to count as off "         \
	  "(hysteresis)",                                                                          \
	  "profopt")                                                                               \
	X(live_gpu_idle_pct, "live", "gpu_idle_pct", 50, "%",                                      \
	  "share of a window's step time with no GPU busy from which gpu-idle is raised",          \
	  "profopt: the GPU busy share below verdict.host_gpu_pct")                                \
	X(live_memory_slope_mib_per_min, "live", "memory_slope_mib_per_min", 64, "MiB/min",        \
	  "host or GPU memory slope over a window from which memory growth is raised", "profopt")  \
	X(live_oom_warning_s, "live", "oom_warning_s", 3600, "s",                                  \
	  "memory growth is raised at any slope when it projects running out of memory within "    \
	  "this many seconds",                                                                     \
	  "profopt")                                                                               \
	X(live_regression_pct, "live", "regression_pct", 30, "% over median",                      \
	  "a window's median step over the run's first steady window's from which "                \
	  "step-regression is raised",                                                             \
	  "profopt")                                                                               \
	X(live_worker_silent_s, "live", "worker_silent_s", 30, "s",                                \
	  "seconds without an event of a loader worker, while the loop runs, from which "          \
	  "worker-stopped is raised",                                                              \
	  "profopt")                                                                               \
	X(gpu_bound_low_precision_pct, "gpu-bound", "low_precision_pct", 30, "%",                  \
	  "share of the GPU's work in fp32 or tf32 matrix kernels (matmul, convolution, "          \
	  "attention) from which mixed precision is recommended",                                  \
	  "profopt")                                                                               \
	X(gpu_bound_fp32_speedup, "gpu-bound", "fp32_speedup", 4, "ratio",                         \
	  "how much faster an fp32 matrix kernel on CUDA cores runs in bf16 or fp16 on tensor "    \
	  "cores",                                                                                 \
	  "NVIDIA H100 datasheet: 67 TFLOPS fp32, 989 dense bf16 (15x); measured on an H100 "      \
	  "(tests/gpu): a transformer's kernels 29.2 to 5.2 ms under autocast (5.6x)")             \
	X(gpu_bound_tf32_speedup, "gpu-bound", "tf32_speedup", 1.6, "ratio",                       \
	  "how much faster a tf32 matrix kernel runs in bf16 or fp16",                             \
	  "NVIDIA H100 datasheet: 495 dense tf32, 989 dense bf16 TFLOPS (2x); measured on an "     \
	  "H100 "                                                                                  \
	  "(tests/gpu): the transformer's kernels 9.4 ms in tf32, 5.2 ms in bf16 (1.8x)")          \
	X(gpu_bound_fp32_to_tf32_speedup, "gpu-bound", "fp32_to_tf32_speedup", 3, "ratio",         \
	  "how much faster an fp32 matrix kernel runs in tf32 on tensor cores",                    \
	  "NVIDIA H100 datasheet: 67 fp32, 495 dense tf32 TFLOPS (7x); measured on an H100 "       \
	  "(tests/gpu): the transformer's kernels 29.2 to 9.4 ms with allow_tf32 (3.1x)")          \
	X(gpu_bound_layout_host_pct, "gpu-bound", "layout_host_pct", 60, "%",                      \
	  "share of the host time per kernel launched that each layout conversion removed by "     \
	  "channels_last saves (they launch inside cuDNN's calls, not from Python)",               \
	  "measured on an H100 (tests/gpu): 151 conversions fewer saved 3.0 ms of a ResNet-18's "  \
	  "step, 66% of its 30 us per kernel")                                                     \
	X(gpu_bound_layout_pct, "gpu-bound", "layout_pct", 5, "%",                                 \
	  "share of the GPU's work (or of the kernels launched) in layout conversions (cuDNN's "   \
	  "NCHW to NHWC and back) from which channels_last is recommended",                        \
	  "profopt; measured on an H100 (tests/gpu): 151 of a ResNet-18's 373 kernels per step "   \
	  "were conversions, channels_last ran 1.30x faster")                                      \
	X(gpu_bound_small_kernel_pct, "gpu-bound", "small_kernel_pct", 50, "%",                    \
	  "share of kernel time in kernels of fewer blocks than the device has multiprocessors "   \
	  "from which a busy GPU counts as under-filled (a larger batch fills it)",                \
	  "profopt")                                                                               \
	X(launch_bound_host_pct, "launch-bound", "host_pct", 50, "%",                              \
	  "share of the step the training thread spends in forward, backward and the optimizer "   \
	  "from which, with the GPU mostly idle, it is the launches that hold the GPU back",       \
	  "profopt")                                                                               \
	X(launch_bound_min_kernels, "launch-bound", "min_kernels", 20, "kernels",                  \
	  "kernels per step below which launches cannot be what holds the GPU back", "profopt")    \
	X(launch_bound_ratio, "launch-bound", "ratio", 1.5, "ratio",                               \
	  "host time per kernel launched over the mean kernel's time from which the host cannot "  \
	  "keep the GPU busy",                                                                     \
	  "profopt")                                                                               \
	X(launch_bound_graph_residual_pct, "launch-bound", "graph_residual_pct", 30, "%",          \
	  "share of forward and backward's host time left when they replay as CUDA graphs "        \
	  "(torch.cuda.make_graphed_callables, torch.compile mode=\"reduce-overhead\")",           \
	  "measured on an H100 (tests/gpu): a 12-layer MLP's forward and backward took 32% of "    \
	  "their host time as graphs")                                                             \
	X(batch_max_factor, "larger-batch", "max_factor", 8, "ratio",                              \
	  "the largest multiple of the batch size the what-if considers (powers of two that fit "  \
	  "the GPU's free memory)",                                                                \
	  "profopt; measured on an H100 (tests/gpu): the MLP at 8x the batch ran 5.6x the "        \
	  "samples "                                                                               \
	  "per second")                                                                            \
	X(batch_min_gain_pct, "larger-batch", "min_gain_pct", 10, "%",                             \
	  "predicted gain in samples per second below which no larger batch is recommended",       \
	  "profopt")

/*
 * The valid range of a rule comes from its unit, from this one table: a value outside it is
 * a usage error, so no setting can make a detector loop for hours or overflow a conversion.
 * X("unit", lowest, highest, whole number)
 */
#define PO_RULE_UNITS(X)                                                                           \
	X("%", 0, 100, false)                                                                      \
	X("% of a core", 0.1, 100, false)                                                          \
	X("% over median", 0, 10000, false)                                                        \
	X("MADs", 0, 1000, false)                                                                  \
	X("MiB", 0, 1048576, false)                                                                \
	X("MiB/min", 0, 1e9, false)                                                                \
	X("batches", 1, 64, true)                                                                  \
	X("bytes/step", 0, 1e12, false)                                                            \
	X("epochs", 0, 1000000, true)                                                              \
	X("gaps", 0, 10000, true)                                                                  \
	X("kernels", 0, 1e9, true)                                                                 \
	X("ms", 0, 3600000, false)                                                                 \
	X("ratio", 0, 1000, false)                                                                 \
	X("runs", 1, 1000, false)                                                                  \
	X("s", 0.1, 1e6, false)                                                                    \
	X("samples", 1, 1e9, true)                                                                 \
	X("sites", 0, 1000, true)                                                                  \
	X("standard errors", 0, 1000, false)                                                       \
	X("steps", 0, 1e9, true)                                                                   \
	X("windows", 1, 1000, true)                                                                \
	X("workers", 1, 1024, true)

struct po_rules {
#define PO_X(member, rule, key, def, unit, doc, source) double member;
	PO_RULES(PO_X)
#undef PO_X
};

/* One row of the table, for documentation and tests. */
struct po_rule_info {
	const char *rule;
	const char *key;
	double default_value;
	const char *unit;
	const char *doc;
	const char *source;
	size_t offset; /* of the member in struct po_rules */
	double lowest; /* the valid range, from the unit (PO_RULE_UNITS) */
	double highest;
	bool whole; /* only whole numbers */
};

/* The table's rows in declaration order; *count is set to their number. */
const struct po_rule_info *po_rule_infos(size_t *count);

/* Fills every member with its default. */
void po_rules_init(struct po_rules *rules);

/*
 * Applies one "RULE.KEY=VALUE" assignment (spaces around the parts allowed). On failure
 * the rules are unchanged and err names the assignment.
 */
enum po_status po_rules_set(struct po_rules *rules, const char *assignment,
			    struct po_error *err) PO_NODISCARD;

/* Applies a file of assignments, one a line, '#' starts a comment; errors name path:line. */
enum po_status po_rules_load(struct po_rules *rules, const char *path,
			     struct po_error *err) PO_NODISCARD;

#endif /* PO_RULES_H */
