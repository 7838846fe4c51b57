/*
 * profopt_tp.h: the LTTng-UST provider "profopt" (private to libprofopt).
 *
 * The trace format is documented event by event in docs/trace-format.md; a change here
 * is a change of the format and must be made there too. Begin/end pairs are instances of
 * one event class, so they carry the same fields.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER profopt

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./profopt_tp.h"

#if !defined(PROFOPT_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define PROFOPT_TP_H

#include <stdint.h>
#include "profopt.h"
#include <lttng/tracepoint.h>

/* The LTTng-UST macro language is laid out by hand. */
/* clang-format off */

LTTNG_UST_TRACEPOINT_ENUM(profopt, stage,
	LTTNG_UST_TP_ENUM_VALUES(
		lttng_ust_field_enum_value("data_wait", 0)
		lttng_ust_field_enum_value("load", 1)
		lttng_ust_field_enum_value("preprocess", 2)
		lttng_ust_field_enum_value("collate", 3)
		lttng_ust_field_enum_value("h2d_copy", 4)
		lttng_ust_field_enum_value("forward", 5)
		lttng_ust_field_enum_value("backward", 6)
		lttng_ust_field_enum_value("optimizer", 7)
		lttng_ust_field_enum_value("eval", 8)
		lttng_ust_field_enum_value("checkpoint", 9)
		lttng_ust_field_enum_value("custom", 10)
		lttng_ust_field_enum_value("gc", 11)
	)
)

LTTNG_UST_TRACEPOINT_ENUM(profopt, counter_kind,
	LTTNG_UST_TP_ENUM_VALUES(
		lttng_ust_field_enum_value("queue_depth", 0)
		lttng_ust_field_enum_value("host_rss", 1)
		lttng_ust_field_enum_value("gpu_mem_used", 2)
		lttng_ust_field_enum_value("process_cpu", 3)
		lttng_ust_field_enum_value("gpu_mem_reserved", 4)
		lttng_ust_field_enum_value("process_runq_wait", 5)
		lttng_ust_field_enum_value("gpu_records_dropped", 6)
		lttng_ust_field_enum_value("gpu_mem_peak", 7)
		lttng_ust_field_enum_value("gpu_mem_free", 8)
		lttng_ust_field_enum_value("machine_cpu", 9)
		lttng_ust_field_enum_value("host_pss", 10)
		lttng_ust_field_enum_value("host_uss", 11)
		lttng_ust_field_enum_value("machine_memory", 12)
		lttng_ust_field_enum_value("gc_collected", 13)
		lttng_ust_field_enum_value("gc_uncollectable", 14)
	)
)

LTTNG_UST_TRACEPOINT_ENUM(profopt, gpu_kind,
	LTTNG_UST_TP_ENUM_VALUES(
		lttng_ust_field_enum_value("kernel", 0)
		lttng_ust_field_enum_value("memcpy_h2d", 1)
		lttng_ust_field_enum_value("memcpy_d2h", 2)
		lttng_ust_field_enum_value("memcpy_d2d", 3)
		lttng_ust_field_enum_value("memset", 4)
	)
)

LTTNG_UST_TRACEPOINT_ENUM(profopt, collective_op,
	LTTNG_UST_TP_ENUM_VALUES(
		lttng_ust_field_enum_value("all_reduce", 0)
		lttng_ust_field_enum_value("broadcast", 1)
		lttng_ust_field_enum_value("reduce", 2)
		lttng_ust_field_enum_value("all_gather", 3)
		lttng_ust_field_enum_value("reduce_scatter", 4)
		lttng_ust_field_enum_value("all_to_all", 5)
		lttng_ust_field_enum_value("barrier", 6)
		lttng_ust_field_enum_value("send", 7)
		lttng_ust_field_enum_value("recv", 8)
		lttng_ust_field_enum_value("other", 9)
	)
)

/* run_begin: framework name and the number of online CPUs. */
LTTNG_UST_TRACEPOINT_EVENT(profopt, run_begin,
	LTTNG_UST_TP_ARGS(const char *, framework, int32_t, cpu_count),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(framework, framework)
		lttng_ust_field_integer(int32_t, cpu_count, cpu_count)
	)
)

/*
 * process: a process announces itself before its first other profopt event, and again in a
 * forked child: the recording it belongs to (PROFOPT_RECORDING, set by profopt-record for
 * its command; empty outside one), its parent and why it announced (0 start, 1 fork).
 */
LTTNG_UST_TRACEPOINT_EVENT(profopt, process,
	LTTNG_UST_TP_ARGS(const char *, recording, int32_t, parent_pid, int32_t, reason),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(recording, recording)
		lttng_ust_field_integer(int32_t, parent_pid, parent_pid)
		lttng_ust_field_integer(int32_t, reason, reason)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(profopt, run_config,
	LTTNG_UST_TP_ARGS(const char *, key, const char *, value),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(key, key)
		lttng_ust_field_string(value, value)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(profopt, run_end,
	LTTNG_UST_TP_ARGS(),
	LTTNG_UST_TP_FIELDS()
)

LTTNG_UST_TRACEPOINT_EVENT_CLASS(profopt, worker_class,
	LTTNG_UST_TP_ARGS(int64_t, worker_id, int32_t, parent_pid),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int64_t, worker_id, worker_id)
		lttng_ust_field_integer(int32_t, parent_pid, parent_pid)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt, worker_class, profopt, worker_begin,
	LTTNG_UST_TP_ARGS(int64_t, worker_id, int32_t, parent_pid))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt, worker_class, profopt, worker_end,
	LTTNG_UST_TP_ARGS(int64_t, worker_id, int32_t, parent_pid))

LTTNG_UST_TRACEPOINT_EVENT_CLASS(profopt, epoch_class,
	LTTNG_UST_TP_ARGS(int64_t, epoch),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int64_t, epoch, epoch)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt, epoch_class, profopt, epoch_begin,
	LTTNG_UST_TP_ARGS(int64_t, epoch))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt, epoch_class, profopt, epoch_end,
	LTTNG_UST_TP_ARGS(int64_t, epoch))

LTTNG_UST_TRACEPOINT_EVENT_CLASS(profopt, step_class,
	LTTNG_UST_TP_ARGS(int64_t, step, int64_t, epoch, int64_t, batch_size),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int64_t, step, step)
		lttng_ust_field_integer(int64_t, epoch, epoch)
		lttng_ust_field_integer(int64_t, batch_size, batch_size)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt, step_class, profopt, step_begin,
	LTTNG_UST_TP_ARGS(int64_t, step, int64_t, epoch, int64_t, batch_size))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt, step_class, profopt, step_end,
	LTTNG_UST_TP_ARGS(int64_t, step, int64_t, epoch, int64_t, batch_size))

/* cpu_ns: thread CPU time spent in the span (end of load/preprocess/collate), else -1. */
LTTNG_UST_TRACEPOINT_EVENT_CLASS(profopt, stage_class,
	LTTNG_UST_TP_ARGS(int, stage, const char *, label, int64_t, batch, int64_t, sample,
			  int64_t, cpu_ns),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_enum(profopt, stage, int8_t, stage, stage)
		lttng_ust_field_string(label, label)
		lttng_ust_field_integer(int64_t, batch, batch)
		lttng_ust_field_integer(int64_t, sample, sample)
		lttng_ust_field_integer(int64_t, cpu_ns, cpu_ns)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt, stage_class, profopt, stage_begin,
	LTTNG_UST_TP_ARGS(int, stage, const char *, label, int64_t, batch, int64_t, sample,
			  int64_t, cpu_ns))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt, stage_class, profopt, stage_end,
	LTTNG_UST_TP_ARGS(int, stage, const char *, label, int64_t, batch, int64_t, sample,
			  int64_t, cpu_ns))

LTTNG_UST_TRACEPOINT_EVENT(profopt, batch_ready,
	LTTNG_UST_TP_ARGS(int64_t, batch, int64_t, queue_depth),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int64_t, batch, batch)
		lttng_ust_field_integer(int64_t, queue_depth, queue_depth)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(profopt, counter,
	LTTNG_UST_TP_ARGS(int, kind, int32_t, device, int64_t, value),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_enum(profopt, counter_kind, int8_t, kind, kind)
		lttng_ust_field_integer(int32_t, device, device)
		lttng_ust_field_integer(int64_t, value, value)
	)
)

LTTNG_UST_TRACEPOINT_EVENT_CLASS(profopt, mem_class,
	LTTNG_UST_TP_ARGS(uint64_t, addr, uint64_t, bytes, int32_t, device, const char *, label),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer_hex(uint64_t, addr, addr)
		lttng_ust_field_integer(uint64_t, bytes, bytes)
		lttng_ust_field_integer(int32_t, device, device)
		lttng_ust_field_string(label, label)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt, mem_class, profopt, mem_alloc,
	LTTNG_UST_TP_ARGS(uint64_t, addr, uint64_t, bytes, int32_t, device, const char *, label))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt, mem_class, profopt, mem_free,
	LTTNG_UST_TP_ARGS(uint64_t, addr, uint64_t, bytes, int32_t, device, const char *, label))

LTTNG_UST_TRACEPOINT_EVENT(profopt, gpu_launch,
	LTTNG_UST_TP_ARGS(int32_t, device, int32_t, stream, uint64_t, correlation_id,
			  const char *, name),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, device, device)
		lttng_ust_field_integer(int32_t, stream, stream)
		lttng_ust_field_integer(uint64_t, correlation_id, correlation_id)
		lttng_ust_field_string(name, name)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(profopt, gpu_activity,
	LTTNG_UST_TP_ARGS(int32_t, device, int32_t, stream, int, kind, const char *, name,
			  uint64_t, bytes, int64_t, start_ns, int64_t, end_ns,
			  uint64_t, correlation_id),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, device, device)
		lttng_ust_field_integer(int32_t, stream, stream)
		lttng_ust_field_enum(profopt, gpu_kind, int8_t, kind, kind)
		lttng_ust_field_string(name, name)
		lttng_ust_field_integer(uint64_t, bytes, bytes)
		lttng_ust_field_integer(int64_t, start_ns, start_ns)
		lttng_ust_field_integer(int64_t, end_ns, end_ns)
		lttng_ust_field_integer(uint64_t, correlation_id, correlation_id)
	)
)

/* A kernel's gpu_activity with how it was launched (the CUPTI collector writes these). */
LTTNG_UST_TRACEPOINT_EVENT(profopt, gpu_kernel,
	LTTNG_UST_TP_ARGS(const struct profopt_gpu_record *, record,
			  const struct profopt_gpu_kernel_shape *, shape),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, device, record->device)
		lttng_ust_field_integer(int32_t, stream, record->stream)
		lttng_ust_field_string(name, record->name ? record->name : "")
		lttng_ust_field_integer(int64_t, start_ns, record->start_ns)
		lttng_ust_field_integer(int64_t, end_ns, record->end_ns)
		lttng_ust_field_integer(uint64_t, correlation_id, record->correlation_id)
		lttng_ust_field_integer(uint32_t, grid_x, shape->grid_x)
		lttng_ust_field_integer(uint32_t, grid_y, shape->grid_y)
		lttng_ust_field_integer(uint32_t, grid_z, shape->grid_z)
		lttng_ust_field_integer(uint32_t, block_x, shape->block_x)
		lttng_ust_field_integer(uint32_t, block_y, shape->block_y)
		lttng_ust_field_integer(uint32_t, block_z, shape->block_z)
		lttng_ust_field_integer(uint32_t, registers_per_thread, shape->registers_per_thread)
		lttng_ust_field_integer(uint32_t, shared_bytes, shape->shared_bytes)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(profopt, gpu_device,
	LTTNG_UST_TP_ARGS(int32_t, device, const char *, name, uint64_t, memory_bytes,
			  int32_t, multiprocessors, int32_t, capability_major,
			  int32_t, capability_minor),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, device, device)
		lttng_ust_field_string(name, name)
		lttng_ust_field_integer(uint64_t, memory_bytes, memory_bytes)
		lttng_ust_field_integer(int32_t, multiprocessors, multiprocessors)
		lttng_ust_field_integer(int32_t, capability_major, capability_major)
		lttng_ust_field_integer(int32_t, capability_minor, capability_minor)
	)
)

LTTNG_UST_TRACEPOINT_EVENT_CLASS(profopt, sync_class,
	LTTNG_UST_TP_ARGS(int32_t, device, int32_t, stream),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, device, device)
		lttng_ust_field_integer(int32_t, stream, stream)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt, sync_class, profopt, gpu_sync_begin,
	LTTNG_UST_TP_ARGS(int32_t, device, int32_t, stream))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt, sync_class, profopt, gpu_sync_end,
	LTTNG_UST_TP_ARGS(int32_t, device, int32_t, stream))

/*
 * self_cost: profopt's own CPU time in this process so far, cumulative nanoseconds: hooks_ns
 * on the program's threads and gc_ns in garbage-collection callbacks (as the instrumentation
 * counted them; -1: not counted), threads_ns of libprofopt's own threads.
 */
LTTNG_UST_TRACEPOINT_EVENT(profopt, self_cost,
	LTTNG_UST_TP_ARGS(int64_t, hooks_ns, int64_t, gc_ns, int64_t, threads_ns),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int64_t, hooks_ns, hooks_ns)
		lttng_ust_field_integer(int64_t, gc_ns, gc_ns)
		lttng_ust_field_integer(int64_t, threads_ns, threads_ns)
	)
)

/*
 * rank: the process's place in a distributed job (docs/distributed.md): its rank, its rank
 * on its host, the job's number of ranks, and the host's name; -1 where unknown.
 */
LTTNG_UST_TRACEPOINT_EVENT(profopt, rank,
	LTTNG_UST_TP_ARGS(int32_t, rank, int32_t, local_rank, int32_t, world_size,
			  const char *, host),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, rank, rank)
		lttng_ust_field_integer(int32_t, local_rank, local_rank)
		lttng_ust_field_integer(int32_t, world_size, world_size)
		lttng_ust_field_string(host, host)
	)
)

/*
 * A collective operation of a process group: begin when this rank enters it, end when its
 * result is complete on this rank (possibly on another thread). group and seq are the same
 * on every rank for one collective.
 */
LTTNG_UST_TRACEPOINT_EVENT_CLASS(profopt, collective_class,
	LTTNG_UST_TP_ARGS(int32_t, group, int, op, uint64_t, bytes, int64_t, seq,
			  int32_t, device),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, group, group)
		lttng_ust_field_enum(profopt, collective_op, int8_t, op, op)
		lttng_ust_field_integer(uint64_t, bytes, bytes)
		lttng_ust_field_integer(int64_t, seq, seq)
		lttng_ust_field_integer(int32_t, device, device)
	)
)
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt, collective_class, profopt, collective_begin,
	LTTNG_UST_TP_ARGS(int32_t, group, int, op, uint64_t, bytes, int64_t, seq,
			  int32_t, device))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(profopt, collective_class, profopt, collective_end,
	LTTNG_UST_TP_ARGS(int32_t, group, int, op, uint64_t, bytes, int64_t, seq,
			  int32_t, device))

/*
 * Function-level samples (docs/sampling.md). code: a code object (a Python function), once
 * per process before the first sample that names it: its id in this process, the function's
 * qualified name, its file and first line. stack_sample: the stack of thread tid when the
 * process's CPU-time timer fired, innermost frame first, as (code id, line) pairs, and the
 * CPU time the thread used since its previous sample (-1: unknown), which the sample stands for.
 */
LTTNG_UST_TRACEPOINT_EVENT(profopt, code,
	LTTNG_UST_TP_ARGS(uint32_t, code_id, const char *, function, const char *, file,
			  int32_t, first_line),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint32_t, code_id, code_id)
		lttng_ust_field_string(function, function)
		lttng_ust_field_string(file, file)
		lttng_ust_field_integer(int32_t, first_line, first_line)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(profopt, stack_sample,
	LTTNG_UST_TP_ARGS(int32_t, tid, int64_t, cpu_ns, const uint32_t *, code_ids,
			  const uint32_t *, lines, uint32_t, depth),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, tid, tid)
		lttng_ust_field_integer(int64_t, cpu_ns, cpu_ns)
		lttng_ust_field_sequence(uint32_t, code_ids, code_ids, uint32_t, depth)
		lttng_ust_field_sequence(uint32_t, lines, lines, uint32_t, depth)
	)
)

/*
 * native_stack: a sample of libprofopt's own sampler for C and C++ programs
 * (profopt_stacks_start, docs/sampling.md): the instruction addresses on thread tid's stack
 * when its signal came, innermost first (pcs[0] the instruction it interrupted, then return
 * addresses), and the time the sample stands for (one period of the sampler's clock, or
 * more when expirations merged). The analysis names each address from the objects the
 * state dump maps (lttng_ust_statedump:bin_info).
 */
LTTNG_UST_TRACEPOINT_EVENT(profopt, native_stack,
	LTTNG_UST_TP_ARGS(int32_t, tid, int64_t, weight_ns, const uint64_t *, pcs,
			  uint32_t, depth),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int32_t, tid, tid)
		lttng_ust_field_integer(int64_t, weight_ns, weight_ns)
		lttng_ust_field_sequence_hex(uint64_t, pcs, pcs, uint32_t, depth)
	)
)

#endif /* PROFOPT_TP_H */

/* clang-format on */
#include <lttng/tracepoint-event.h>
