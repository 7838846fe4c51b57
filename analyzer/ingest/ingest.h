/*
 * ingest.h: reads a directory of LTTng traces with libbabeltrace2 and hands typed events
 * (model/event.h) to a callback, in time order across every trace found below the
 * directory, decoding streams on several threads. This module is the only one that
 * includes babeltrace2 headers.
 */
#ifndef PO_INGEST_H
#define PO_INGEST_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"
#include "model/event.h"

typedef enum po_status (*po_event_fn)(void *ctx, const struct po_event *event);

struct po_ingest_options {
	bool salvage; /* leave out a trace (one process buffer) that fails instead of failing */
	int decode_threads; /* babeltrace2 graphs decoding at once; 0: one per CPU, at most 4 */
	/*
	 * Trace directories to leave out (copies of another, po_ingest_survey()), as full
	 * paths in the trace list's spelling; weak; NULL for none.
	 */
	const char *const *skip_traces;
	size_t skip_trace_count;
};

struct po_ingest_stats {
	int64_t events; /* every event message */
	int64_t profopt_events;
	int64_t trace_count; /* CTF traces found (one per process buffer) */
	int64_t streams;
	bool partial; /* salvage skipped something */
	/* Anomalies, counted and skipped (trace quality). */
	int64_t no_clock_events;  /* events without a clock snapshot */
	int64_t malformed_events; /* profopt events with an out-of-range enum or missing field */
	int64_t foreign_events;	  /* events of other providers */
	/*
	 * Events of classes this analyzer does not know but named like profopt's: provider
	 * "profopt" with another event name, or a provider one letter from "profopt". A
	 * damaged metadata file (or another profopt version) gives them; they are said.
	 */
	int64_t unknown_profopt_events;
	char unknown_profopt_name[128];	 /* the first such class's name */
	int64_t discarded_messages;	 /* discarded-events and discarded-packets messages */
	int64_t skipped_traces;		 /* traces left out by salvage */
	char skipped_note[PO_ERROR_MAX]; /* salvage: which traces were skipped and why */

	/* torch.profiler (Kineto) files read (docs/kineto.md), and what their reader left out */
	int64_t kineto_traces;
	int64_t kineto_records_left_out; /* impossible times */
	int64_t kineto_names_cut;
	int64_t kineto_python_calls_left_out; /* nested past PO_KINETO_PYTHON_DEPTH_MAX */
	int64_t kineto_collectives_without_kernel;
};

/*
 * Checks before decoding, without babeltrace2: the path exists and is a directory, holds
 * at least one CTF trace (a "metadata" file starting with "/ * CTF" or the packetized
 * metadata magic), every file the decoder opens (metadata, stream files, index/ files) is a
 * regular file that can be read (opened without blocking: a FIFO is refused, not waited
 * on), every directory that should hold a trace does (a process directory of LTTng,
 * ust/pid/NAME-PID-DATE/, or a directory with an index/, whose metadata is missing, a
 * dangling link, a FIFO, a directory or unreadable is an error naming it, not skipped),
 * every trace directory has stream files and not all of them are empty
 * (a 0-byte stream file is accepted: LTTng leaves them for CPUs that recorded nothing and
 * babeltrace2 skips them), no foreign regular file sits inside a trace directory (dot-files
 * and index/ are allowed), and no session is still recording into it (heuristic: no file
 * changes size within 300 ms, so a session recording but idle the whole time passes).
 * PO_STATUS_INPUT with a one-line cause naming the file otherwise.
 */
enum po_status po_ingest_check(const char *trace_dir, struct po_error *err) PO_NODISCARD;

/*
 * The same check in two halves, so that the wait overlaps the analysis: _start makes
 * every check but the last and notes the size of every file; _finish waits until 300 ms
 * have passed since (not at all after a long analysis), fails if a file changed size in
 * the meantime, and destroys the watch. A session that writes at any time during the
 * analysis is caught.
 */
struct po_ingest_watch;
enum po_status po_ingest_check_start(const char *trace_dir, struct po_ingest_watch **watch,
				     struct po_error *err) PO_NODISCARD;
enum po_status po_ingest_check_finish(struct po_ingest_watch *watch,
				      struct po_error *err) PO_NODISCARD;
void po_ingest_watch_destroy(struct po_ingest_watch *watch);

/*
 * For --salvage: like po_ingest_check_start(), but a trace directory (one process, or one
 * user's buffers) whose files cannot be opened (missing or unreadable metadata, a FIFO,
 * socket, device or directory where a file should be) is left out instead of failing the
 * check, and po_ingest_run() does not decode it either. Fails when every one is left out.
 */
enum po_status po_ingest_check_start_salvage(const char *trace_dir, struct po_ingest_watch **watch,
					     struct po_error *err) PO_NODISCARD;
/*
 * The trace directories the salvage check left out: their count, and a note naming each
 * relative to the trace directory with the cause ("skipped trace path=ust/pid/x-12-...:
 * metadata: missing"); weak: belongs to watch; "" when none.
 */
const char *po_ingest_watch_borrow_skipped(const struct po_ingest_watch *watch, int64_t *count);

/*
 * Decodes everything; stops at the first callback status that is not OK and returns it.
 * stats is reset first. Calls po_isolate_progress() with each trace directory it opens and
 * each stream it starts. With options->salvage, a trace that fails is left out (its events
 * decoded so far are kept), stats->partial is set and stats->skipped_note names it; the
 * other traces are decoded again from their start and their events already delivered are
 * not delivered twice. Failures: PO_STATUS_DECODE, "Failed to decode trace: path=DIR: CAUSE".
 *
 * Decoding runs in lanes: options->decode_threads babeltrace2 graphs (default one per
 * online CPU, at most 4), each on its own thread over a share of the streams (of the
 * traces, with salvage), merged in time order on the calling thread, which runs the
 * callback (one call at a time; the strings of an event stay valid until it returns).
 * The order is the babeltrace2 muxer's within a lane and time, then trace, across lanes;
 * every lane count gives the same result unless two streams hold events of the same
 * nanosecond. When no thread can be started, one graph decodes on the calling thread.
 */
enum po_status po_ingest_run(const char *trace_dir, const struct po_ingest_options *options,
			     po_event_fn callback, void *ctx, struct po_ingest_stats *stats,
			     struct po_error *err) PO_NODISCARD;

/*
 * Live (live.c): reads a session while it records, from lttng-relayd, with src.ctf.lttng-live
 * (url: net://HOST[:PORT]/host/HOSTNAME/SESSION), handing its events to callback in time
 * order as they arrive. tick is called between messages at least every tick_ns while the
 * stream goes on (also while the relay has nothing new), and once more with ended true
 * when the session is gone (destroyed, or never there: session-not-found-action=end); a
 * status other than OK from it stops the run with that status. A terminating signal
 * (po_signals_caught()) stops it with PO_STATUS_INTERRUPTED. A relay that cannot be reached or a
 * stream that fails is PO_STATUS_DECODE with babeltrace2's cause; the events delivered until then
 * stay valid.
 */
typedef enum po_status (*po_live_tick_fn)(void *ctx, bool ended, struct po_error *err);

struct po_ingest_live_options {
	const char *url;
	int64_t tick_ns;
	po_live_tick_fn tick;
	void *tick_ctx; /* weak */
	/*
	 * >= 0: a descriptor to write one newline to, and close, once the source has attached
	 * to the session (its first step returned): a viewer sees only what was recorded after
	 * it attached, so a recorder starts its command after that. -1: none.
	 */
	int ready_fd;
};

enum po_status po_ingest_live_run(const struct po_ingest_live_options *options,
				  po_event_fn callback, void *ctx, struct po_ingest_stats *stats,
				  struct po_error *err) PO_NODISCARD;

/*
 * profopt-recording.txt: what profopt-record wrote about its command at the top of the
 * trace directory. Absent (present false, OK) for traces recorded otherwise; a damaged
 * file is PO_STATUS_INPUT with the cause, and recording is left empty.
 */
#define PO_RECORDING_FILE "profopt-recording.txt"
#define PO_RECORDING_TEXT_MAX 64

struct po_recording {
	bool present;
	char id[PO_RECORDING_TEXT_MAX + 1];
	int32_t command_pid;	 /* -1 */
	int64_t start_ns;	 /* CLOCK_MONOTONIC (the trace clock); 0 when not known */
	int64_t end_ns;		 /* when the command ended; 0 when profopt-record did not see it */
	int exit_status;	 /* 128+N for signal N; -1 when not known */
	int64_t recorder_cpu_ns; /* profopt-record's and its daemons' CPU time; -1 unknown */
};

enum po_status po_recording_read(const char *trace_dir, struct po_recording *recording,
				 struct po_error *err) PO_NODISCARD;

/*
 * The recordings of a directory that holds several (one per host, pid_spaces.c), in the
 * order of their pid spaces: (*out)[k] is the recording whose pids are moved by
 * k << PO_RECORDING_PID_SHIFT, its profopt-recording.txt read (present false where it has
 * none). *out NULL and *count 0 with one recording or none. *out is owned by the caller.
 */
enum po_status po_recordings_list(const char *root, struct po_recording **out, size_t *count,
				  struct po_error *err) PO_NODISCARD;

/*
 * The survey of a trace's streams (streams.c), from LTTng's packet headers and index files
 * without babeltrace2: streams cut short, and traces that are copies of another.
 *
 * A cut is a window of time whose events a stream lost: its file holds fewer packets than
 * its index lists (SHORTER_THAN_INDEX), or it ends more than PO_CUT_TOLERANCE_NS before
 * the other streams of its trace, which all end when the session stops or the process
 * exits (ENDS_EARLY). A trace whose streams carry the UUID of an earlier trace (in path
 * order) is a copy: duplicate_of names it, and the decoder must leave the copy out.
 */
#define PO_CUT_TOLERANCE_NS 250000000LL
#define PO_CUTS_KEPT 64

enum po_cut_kind { PO_CUT_SHORTER_THAN_INDEX, PO_CUT_ENDS_EARLY };

struct po_stream_cut {
	enum po_cut_kind kind;
	char path[256]; /* the stream file, relative to the trace directory */
	int64_t begin_ns;
	int64_t end_ns;
};

struct po_stream_survey {
	char **trace_paths; /* owned: every trace directory, sorted (po_ingest_run's order) */
	size_t trace_count;
	long *duplicate_of; /* owned: per trace, the trace it copies, or -1 */
	size_t duplicate_count;
	struct po_stream_cut *cuts; /* owned */
	size_t cut_count;
	size_t cut_capacity;
	size_t cuts_not_kept;
	int64_t end_ns;	     /* the latest packet end of any stream; -1 when none was read */
	size_t stream_count; /* stream files of the traces that are not copies */
};

enum po_status po_ingest_survey(const char *trace_dir, struct po_stream_survey *survey,
				struct po_error *err) PO_NODISCARD;
void po_stream_survey_fini(struct po_stream_survey *survey);

/*
 * --salvage per stream and per packet (repair.c): every trace directory below trace_dir
 * (but those in skip, full paths) that does not decode whole is repaired: each stream that
 * fails alone keeps the packets that decode with the ones kept before them (a binary
 * search for each damaged packet, at most PO_REPAIR_BAD_PACKETS of them a stream; the
 * rest of the stream goes after the last). When one was, shadow_root is a directory
 * (under TMPDIR) that mirrors trace_dir with the repaired streams, to be analysed instead;
 * streams lists them and windows the time each lost. Nothing repaired: shadow_root "".
 * A trace whose metadata does not decode is mirrored as it is, for the decoder to leave
 * out. Decoding every trace alone first costs one more decode of the trace; --salvage only.
 */
#define PO_REPAIR_BAD_PACKETS 16

struct po_repaired_stream {
	char path[256];	     /* relative to the trace directory */
	size_t kept_packets; /* of packets */
	size_t packets;	     /* whole packets found, and a damaged end that is none as one */
	int64_t kept_bytes;  /* of bytes, the stream file's size */
	int64_t bytes;
};

/* Packets left out of a repaired stream, as a window of time. */
struct po_repair_window {
	size_t stream;	  /* its index in streams */
	int64_t begin_ns; /* -1: unknown (the stream's first packets, headers damaged) */
	int64_t end_ns;	  /* -1: to the end of the trace */
};

struct po_repair {
	char work_dir[4096];	/* owned scratch directory, removed by fini; "" if none */
	char shadow_root[4096]; /* the repaired trace directory; "" if nothing was repaired */
	struct po_repaired_stream *streams;
	size_t count;
	size_t capacity;
	struct po_repair_window *windows;
	size_t window_count;
	size_t window_capacity;
};

/*
 * Whether the decoder survives trace_dir, asked in a child process that decodes it with
 * options and drops the events: libbabeltrace2 aborts on some damage (a precondition it
 * checks in itself fails), which would end the whole analysis, where --salvage must go on
 * to po_ingest_repair(). PO_STATUS_DECODE with "the trace decoder crashed (SIGNAL) on
 * DIR" when the child died of a signal; PO_STATUS_OK when it ended (whether the trace
 * decoded or failed with an error, which po_ingest_run() reports as usual).
 */
enum po_status po_ingest_survives(const char *trace_dir, const struct po_ingest_options *options,
				  struct po_error *err) PO_NODISCARD;

enum po_status po_ingest_repair(const char *trace_dir, const char *const *skip, size_t skip_count,
				struct po_repair *repair, struct po_error *err) PO_NODISCARD;
void po_repair_fini(struct po_repair *repair);

#endif /* PO_INGEST_H */
