/*
 * record.h: what the parts of profopt-record share: its status table, its options and
 * the interfaces of the session daemon, session and command modules.
 */
#ifndef PO_RECORD_H
#define PO_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/status.h"

/*
 * X(name, description, exit status). The exit statuses are documented in --help and in
 * profopt-record(1); a recording that worked exits with the command's own status instead.
 * INTERRUPTED exits 128+N for signal N (main.c), 130 for SIGINT.
 */
#define REC_STATUSES(X)                                                                            \
	X(OK, "success", 0)                                                                        \
	X(TRACING, "tracing error", 1)                                                             \
	X(NOMEM, "out of memory", 1)                                                               \
	X(USAGE, "bad command line", 2)                                                            \
	X(SESSIOND_TIMEOUT, "the session daemon did not answer in time", 3)                        \
	X(NOT_EXECUTABLE, "command found but not executable", 126)                                 \
	X(NOT_FOUND, "command not found", 127)                                                     \
	X(INTERRUPTED, "interrupted by a signal (exit status 128+N)", 130)

enum rec_status {
#define REC_X(name, text, exit_status) REC_STATUS_##name,
	REC_STATUSES(REC_X)
#undef REC_X
	    REC_STATUS_COUNT
};

int rec_status_exit_code(enum rec_status status);

/*
 * Looks NAME up in PATH as execvp would (command.c): 0 with *resolved (owned) set, else
 * the errno that stops it (the first other than ENOENT).
 */
int rec_search_path(const char *name, char **resolved);

/* Sleeps ms milliseconds, through signals (sessiond.c). */
void rec_sleep_ms(long ms);

/*
 * Calls into liblttng-ctl with a deadline (ctl.c). Each call runs in a child process forked
 * for it; profopt-record waits for its answer until the deadline (PROFOPT_SESSIOND_TIMEOUT
 * seconds, REC_DEFAULT_SESSIOND_TIMEOUT_MS by default) or a signal, then kills it. After a
 * call timed out, later calls fail at once with the same cause; a signal ends the wait it
 * arrives in, and a second one also gives the daemon up.
 */
#define REC_DEFAULT_SESSIOND_TIMEOUT_MS 30000
#define REC_SESSIOND_TIMEOUT_ENV "PROFOPT_SESSIOND_TIMEOUT"

struct rec_ctl_call {
	const char *what; /* what the daemon is asked, for messages: "create the session X" */
	/* Runs in the child: liblttng-ctl calls only, no output; err says why it failed. */
	enum rec_status (*run)(void *context, struct po_error *err);
	void *context;	     /* weak: handed to run; its first context_size bytes (0: none) are */
	size_t context_size; /* copied back from the child: plain values, no pointers */
	/* >0: once run called rec_ctl_accepted(), wait this long more for the rest */
	int accepted_wait_ms;
};

void rec_ctl_init(int timeout_ms);
enum rec_status rec_ctl_call(const struct rec_ctl_call *call, struct po_error *err) PO_NODISCARD;
/* In a call's run: the daemon accepted the request; what follows has its own wait. */
void rec_ctl_accepted(void);
/* Sleeps ms; REC_STATUS_INTERRUPTED (err set) when a signal arrives while waiting to what. */
enum rec_status rec_ctl_pause(int ms, const char *what, struct po_error *err) PO_NODISCARD;
/*
 * Waits for child pid to exit, at most timeout_ms; REC_STATUS_SESSIOND_TIMEOUT when it
 * did not (the child is then still running), REC_STATUS_INTERRUPTED on a signal.
 */
enum rec_status rec_ctl_wait_child(pid_t pid, int timeout_ms, int *wait_status,
				   struct po_error *err) PO_NODISCARD;
/* The signals received so far were for the command: only later ones end a wait. */
void rec_ctl_signals_handled(void);
/*
 * Why the daemon is no longer asked: REC_STATUS_SESSIOND_TIMEOUT (a call timed out) or
 * REC_STATUS_INTERRUPTED (a second signal); REC_STATUS_OK while it is.
 */
enum rec_status rec_ctl_given_up(void);
/* "the session daemon (pid N)", or without the pid when its pid file is missing. */
void rec_ctl_daemon_name(char *text, size_t size);
/* The wait of one call, for messages. */
int rec_ctl_timeout_ms(void);

/*
 * Default ring buffer geometry: per CPU, shared by the traced processes of a user (per
 * process with --buffers pid); see docs/recording.md.
 */
#define REC_DEFAULT_SUBBUF_BYTES (4u * 1024 * 1024)
#define REC_DEFAULT_SUBBUF_COUNT 8u
#define REC_DEFAULT_SAMPLE_MS 20u
/* --stacks: Python stack samples per second of a process's CPU time (docs/sampling.md). */
#define REC_DEFAULT_STACKS_HZ 100
#define REC_MAX_STACKS_HZ 10000
/* Switch timer: flushes partly filled sub-buffers of quiet processes every second. */
#define REC_SWITCH_TIMER_US 1000000u
/* How long to wait for the session daemon to finish destroying the session. */
#define REC_DESTROY_TIMEOUT_MS 60000

struct rec_options {
	const char *output_dir;	  /* weak: argv, or NULL for the dated default */
	bool heap;		  /* also record libc malloc/free */
	bool gpu;		  /* load the CUPTI GPU collector into CUDA programs */
	bool per_process_buffers; /* --buffers pid: one buffer set per traced process */
	uint64_t subbuf_bytes;
	uint64_t subbuf_count;
	long sample_ms;		   /* -1: keep the user's PROFOPT_SAMPLE_MS, else 20 */
	long stacks_hz;		   /* --stacks: PROFOPT_STACKS_HZ for the command; 0: off */
	const char *stacks_clock;  /* --stacks-clock: "cpu" or "wall"; NULL: not given */
	char *const *command_argv; /* weak: argv, NULL-terminated */
	/* --live: also stream to profopt-analyze --live through lttng-relayd (live.c) */
	bool live;
	const char *live_alerts;   /* weak: --alerts FILE */
	const char *live_on_alert; /* weak: --on-alert CMD */
#define REC_LIVE_SETS_MAX 16
	const char *live_sets[REC_LIVE_SETS_MAX]; /* weak: --set RULE.KEY=VALUE, for the view */
	int live_set_count;
	double live_every_s;	 /* --every: seconds between windows */
	unsigned live_timer_us;	 /* --live-timer: the live session's flush period */
	bool check;		 /* --check: say whether a recording would work, record nothing */
	int sessiond_timeout_ms; /* PROFOPT_SESSIOND_TIMEOUT: the wait of each daemon call */
	bool show_help;
	bool show_version;
};

/*
 * Before the command (preflight.c): *cause (one phrase) and true when /dev/shm cannot hold
 * lttng-ust's ring buffers (missing, read-only, not writable), or when no session daemon
 * can start in its directory (/run/lttng as root, else $LTTNG_HOME/.lttng: read-only or
 * not writable).
 */
bool rec_shm_unusable(char *cause, size_t size);
bool rec_sessiond_dir_unwritable(char *cause, size_t size);
/* REC_STATUS_TRACING (err: the cause and what to do) when /dev/shm is unusable. */
enum rec_status rec_preflight(struct po_error *err) PO_NODISCARD;

/* --check (check.c): what a recording needs, one line each; 0 only when it would work. */
int rec_check(const struct rec_options *options);

/* Parses argv; on REC_STATUS_USAGE, err says what is wrong. */
enum rec_status rec_options_parse(struct rec_options *options, int argc, char **argv,
				  struct po_error *err) PO_NODISCARD;
void rec_options_print_help(void);

/*
 * Session daemon (sessiond.c): one found running is left alone; one started here is
 * stopped by its pid at the end, unless another session lives in it then.
 */
struct rec_sessiond {
	bool started_here;
	pid_t pid; /* the daemon started here; 0 if unknown or found running */
};

/* How the daemon was left at the end. */
enum rec_sessiond_end {
	REC_SESSIOND_NOT_OURS,	 /* found running: left alone */
	REC_SESSIOND_STOPPED,	 /* started here, and stopped */
	REC_SESSIOND_SHARED,	 /* started here, left running: other sessions live in it */
	REC_SESSIOND_UNANSWERED, /* started here, left running: it did not say its sessions */
};

/* The pid in the daemon's pid file, 0 when there is none. */
pid_t rec_sessiond_pid(void);
/*
 * Asks the daemon for its sessions, a round trip with the deadline: *session_count is
 * their number, or -1 when no daemon is running.
 */
enum rec_status rec_sessiond_probe(int *session_count, struct po_error *err) PO_NODISCARD;
enum rec_status rec_sessiond_ensure(struct rec_sessiond *sessiond,
				    struct po_error *err) PO_NODISCARD;
/* The same, without saying on stderr that it starts one (--check says it its own way). */
enum rec_status rec_sessiond_ensure_quietly(struct rec_sessiond *sessiond,
					    struct po_error *err) PO_NODISCARD;
/* Stops a daemon started here when no session lives in it; *other_sessions: how many do. */
enum rec_sessiond_end rec_sessiond_stop(struct rec_sessiond *sessiond, int *other_sessions);
/* Stops a daemon started here without asking it anything (one that did not answer). */
void rec_sessiond_terminate(struct rec_sessiond *sessiond);

/* The tracing session, one UST channel with per-user (or per-process) buffers. */
struct rec_session {
	char name[128];
	char *output_dir;    /* owned: absolute path of the trace directory */
	bool output_checked; /* the directory was missing or empty: what is in it is ours */
	bool output_existed; /* the directory was there (empty) before the session */
	bool created;
	bool started;
	uint64_t discarded_events; /* valid after rec_session_stop() */
	uint64_t lost_packets;
	bool counts_known;
	bool destroy_timed_out; /* the daemon did not confirm the destruction in time */
};

enum rec_status rec_session_create(struct rec_session *session, const struct rec_options *options,
				   struct po_error *err) PO_NODISCARD;
/* The same, named name (one that carries the owner's tag: see leftovers.c). */
enum rec_status rec_session_create_named(struct rec_session *session,
					 const struct rec_options *options, const char *name,
					 struct po_error *err) PO_NODISCARD;
/* The channel, events and contexts of a recording, on the session named name. */
enum rec_status rec_session_configure(const char *name, const struct rec_options *options,
				      struct po_error *err) PO_NODISCARD;
enum rec_status rec_session_start(struct rec_session *session, struct po_error *err) PO_NODISCARD;
/*
 * Registers a child of profopt-record with the session daemon (it loads lttng-ust and
 * exits), so that the trace holds the channel's metadata even when no process of the
 * command loads lttng-ust. Fails only on a signal (REC_STATUS_INTERRUPTED).
 */
enum rec_status rec_session_register_self(struct po_error *err) PO_NODISCARD;
/* Stops tracing, waiting until every buffer was written, and reads the loss counters. */
enum rec_status rec_session_stop(struct rec_session *session, struct po_error *err) PO_NODISCARD;
/* Destroys the session; the trace stays. */
enum rec_status rec_session_destroy(struct rec_session *session, struct po_error *err) PO_NODISCARD;
/*
 * Stops tracing the session named name, then asks whether data is pending until it is
 * written, each a call with the deadline (the recording's and the live session's).
 */
enum rec_status rec_stop_tracing(const char *name, struct po_error *err) PO_NODISCARD;
/*
 * Destroys the session named name (one that is not there counts as destroyed) and waits
 * REC_DESTROY_TIMEOUT_MS for the daemon to confirm it: *timed_out when it did not.
 */
enum rec_status rec_destroy_session(const char *name, bool *timed_out,
				    struct po_error *err) PO_NODISCARD;

/*
 * Removes what the session wrote (when the command never ran): the directory, or only its
 * contents if it existed empty before. Does nothing unless the directory was checked to be
 * missing or empty, so a user's files are never removed.
 */
void rec_session_remove_output(struct rec_session *session);
void rec_session_fini(struct rec_session *session);

/*
 * What a recorder that was killed leaves, and its cleanup by the next one (leftovers.c).
 * Everything a recorder makes carries its owner tag, PID-START-PIDNS (its pid, its start
 * time in clock ticks since boot, its PID namespace): its sessions (profopt-record-TAG-DATE,
 * profopt-live-TAG, profopt-check-TAG), its scratch directory (TMPDIR/profopt-record-TAG-
 * XXXXXX, with a mark) and the environment of a session daemon it starts.
 */
#define REC_SESSIOND_OWNER_ENV "PROFOPT_RECORD_SESSIOND_OWNER"
const char *rec_owner_tag(void);
/* Whether process pid exists and is not a zombie. */
bool rec_process_runs(pid_t pid);

/*
 * --heap: libprofopt-heap, which records each allocation's callers: $PROFOPT_HEAP_LIBRARY,
 * else next to this program's libprofopt, else installed. False (path still filled with
 * the last place looked at) when none exists.
 */
bool rec_heap_library(char *path, size_t size);
/*
 * The fork hooks preloaded into the command: libprofopt-fork ($PROFOPT_FORK_LIBRARY
 * overrides, else next to this program's libprofopt, else installed), which loads nothing
 * of lttng-ust into the programs that do not load it themselves; lttng-ust's own fork
 * wrapper, which does, when it is not there.
 */
void rec_fork_library(char *path, size_t size);
/* Makes this recorder's scratch directory (mode 0700, marked); see rec_scratch_dir(). */
enum rec_status rec_scratch_create(struct po_error *err) PO_NODISCARD;
/* The scratch directory, NULL when there is none. */
const char *rec_scratch_dir(void);
/* Removes the entry name of the scratch directory, all it holds, following no link. */
void rec_scratch_remove_entry(const char *name);
/* Removes the mark, then the directory if it is empty (what must stay stays unmarked). */
void rec_scratch_remove(void);
/* The running session daemon's pid when a profopt-record that is gone started it, else 0. */
pid_t rec_sessiond_orphaned(void);

#define REC_LEFTOVER_LINES 8
struct rec_leftovers {
	int line_count; /* one line per recorder that is gone and left something */
	char lines[REC_LEFTOVER_LINES][1400];
};

/*
 * Destroys the sessions and removes the scratch directories of recorders of this PID
 * namespace that are gone; says what it did. Fails only when the daemon does not answer.
 */
enum rec_status rec_leftovers_clean(struct rec_leftovers *result,
				    struct po_error *err) PO_NODISCARD;

/* Events the tracer discarded, read from the trace's packet indexes (all processes). */
enum rec_status rec_trace_count_discarded(const char *trace_dir, uint64_t *discarded_events,
					  struct po_error *err) PO_NODISCARD;

/* The last entry of a packet index (index/NAME.idx, big-endian CTF index 1.x). */
struct rec_index_last {
	bool has_packet; /* false: the index lists no packet */
	uint64_t packet_offset;
	uint64_t packet_bits;
	uint64_t end_ns; /* the packet's timestamp_end */
	uint64_t discarded_events;
};

/* 0 with *last filled, -1 when path is not a readable index. */
int rec_index_read_last(const char *path, struct rec_index_last *last);

/* The traced command. */
struct rec_command {
	char *path;  /* owned: the resolved executable */
	char **envp; /* owned: environment with LD_PRELOAD and PROFOPT_SAMPLE_MS */
	pid_t pid;
	int exit_status; /* its status, 128+signal if killed */
};

/*
 * Whether the recording names the objects each process maps (lttng-ust's base-address
 * state dump, liblttng-ust-dl preloaded): with --heap (allocation sites), and with
 * --stacks of a command that is no Python interpreter (a C program's sampled addresses;
 * Python's samples name their objects themselves).
 */
bool rec_objects_named(const struct rec_options *options);
/* Resolves the command through PATH before anything is recorded. */
enum rec_status rec_command_resolve(struct rec_command *command, const struct rec_options *options,
				    struct po_error *err) PO_NODISCARD;
enum rec_status rec_command_spawn(struct rec_command *command, const struct rec_options *options,
				  struct po_error *err) PO_NODISCARD;
/* Waits for the command, forwarding SIGINT, SIGTERM and SIGHUP sent to profopt-record. */
void rec_command_wait(struct rec_command *command);
void rec_command_fini(struct rec_command *command);
/* Installs the forwarding handlers; call once before rec_command_spawn(). */
enum rec_status rec_signals_install(struct po_error *err) PO_NODISCARD;
/* The last signal received, 0 if none. */
int rec_signals_received(void);
/* How many signals were received. */
unsigned rec_signals_count(void);

/*
 * The recording's identity (recording.c): a random id the command and every process it
 * starts inherit (PROFOPT_RECORDING), and profopt-recording.txt in the trace directory.
 */
#define REC_RECORDING_ID_BYTES 16
struct rec_recording {
	char id[2 * REC_RECORDING_ID_BYTES + 1];
	pid_t command_pid;
	int64_t start_ns; /* CLOCK_MONOTONIC, the trace clock */
	int64_t end_ns;	  /* 0 while the command runs */
	int exit_status;  /* the command's status (128+signal if killed); -1 while it runs */
	/*
	 * The recorder's CPU time while the command ran: profopt-record's own and the session
	 * daemon's with its children (the consumer daemons); -1 until the command ended or
	 * when it cannot be read. cpu_start_ns: the same total when the command started.
	 */
	int64_t recorder_cpu_ns;
	int64_t cpu_start_ns;
};

int64_t rec_monotonic_ns(void);
/*
 * The CPU time used so far by profopt-record and by the session daemon daemon_pid (0: none)
 * with its children, in nanoseconds; -1 when the daemon's cannot be read.
 */
int64_t rec_recorder_cpu_ns(pid_t daemon_pid);
/* Draws the id and exports PROFOPT_RECORDING; call before rec_command_resolve(). */
enum rec_status rec_recording_init(struct rec_recording *recording,
				   struct po_error *err) PO_NODISCARD;
/* (Re)writes TRACE_DIR/profopt-recording.txt; a failure is a warning on stderr. */
void rec_recording_write(const struct rec_recording *recording, const char *trace_dir);

/*
 * --live (live.c): a private relay started here on ports of 127.0.0.1 the kernel chose, a
 * live session with per-user buffers, and profopt-analyze --live attached to it, which
 * checks its --alerts target and TRACE-report before it attaches (refusing either stops
 * the recording before the command runs) and writes TRACE-report when the session ends.
 * Start it before the command: a viewer sees only what is recorded after it attached.
 */
#define REC_DEFAULT_LIVE_TIMER_US 100000u
#define REC_RELAY_PORTS 3 /* control, data, live */
struct rec_live {
	pid_t relay_pid;  /* started here; 0 otherwise */
	pid_t viewer_pid; /* profopt-analyze --live; 0 when none runs */
	int done_fd;	  /* the view's --trace-done-fd, our end; -1 */
	int relay_ports[REC_RELAY_PORTS];
	char relay_dir[640];
	bool keep_relay_dir; /* it holds the log of a relay that failed */
	int held_messages;   /* rec_live_hold_messages(): where stderr goes meanwhile; 0: none */
	int saved_stderr;    /* the stderr it replaced */
	char session[128];
	bool session_created;
	char url[512];
	char report_dir[4200];
};

enum rec_status rec_live_start(struct rec_live *live, const struct rec_options *options,
			       const char *recording_id, const char *trace_dir,
			       struct po_error *err) PO_NODISCARD;
/*
 * The command ended: when the view draws its panel on the terminal, profopt-record's own
 * messages are held until rec_live_finish() (the panel's last frame would be drawn over
 * them), and written then, after the view's last line.
 */
void rec_live_hold_messages(struct rec_live *live);
/*
 * After the recording session ended: tells the view whether the trace is complete (it
 * writes TRACE-report only then), ends the live session, waits for the view (a view that
 * has no report to write, or was sent a signal, gets a deadline), stops the relay, removes
 * its scratch directory and writes the held messages. Returns the view's exit status, -1
 * when none ran. Safe to call after a failed rec_live_start() (zero-initialize live).
 */
int rec_live_finish(struct rec_live *live, bool trace_complete);

/*
 * What the recording holds, checked after the session stopped (verify.c): the trace
 * directories, their metadata and stream files, the trace's end against the command's, the
 * processes that libprofopt noted as unregistered, and the events discarded.
 */
struct rec_verify_input {
	const char *trace_dir;	   /* weak */
	const char *notes_path;	   /* weak: the processes' notes file, NULL when none */
	long command_pid;	   /* the command's process; 0 when unknown */
	int64_t command_end_ns;	   /* CLOCK_MONOTONIC; 0 when unknown */
	uint64_t daemon_discarded; /* the session daemon's own count of discarded events */
	bool daemon_discarded_known;
	/* the daemon ended while the command ran: the cause of what was not recorded */
	bool sessiond_ended;
};

/* Below this much room on the trace's file system, a cut is put down to a full one. */
#define REC_ROOM_LOW_BYTES (4u * 1024 * 1024)

#define REC_VERIFY_SHOWN 4
#define REC_VERIFY_LINES 12
struct rec_verification {
	int trace_dirs;	      /* trace directories found (processes, or users' buffers) */
	int recorded_dirs;    /* those that declare or hold events */
	int problems;	      /* directories or stream files that lost data */
	int unregistered;     /* processes that emitted events before they were registered */
	int missing_dirs;     /* of those, with --buffers pid: no trace directory at all */
	int64_t trace_end_ns; /* the end of the trace's last packet; -1 if none */
	int64_t free_bytes;   /* room left on the trace's file system; -1 if unknown */
	bool room_low;	      /* less than 4 MiB left: the named cause when something was cut */
	bool incomplete;      /* something was lost besides discarded events */
	uint64_t discarded_events;
	/* What to say, in order, each without the "profopt-record: " prefix. */
	int line_count;
	char lines[REC_VERIFY_LINES][700];
};

void rec_verify(const struct rec_verify_input *input, struct rec_verification *result);

#endif /* PO_RECORD_H */
