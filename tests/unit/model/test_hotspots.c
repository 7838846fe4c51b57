/*
 * test_hotspots.c: function-level samples through the whole model. Each sample goes to its
 * process's role and the stage open on its thread (none open: stage -1); self shares weigh
 * the CPU time a sample stands for, total shares count a function once per sample however
 * often it recurses; code ids are per process; a code never described is "(unknown code)";
 * frames that do not fit their bytes are dropped; a run without samples has no hotspots.
 * Each group counts the samples per label of the span they were taken in. Each role gets a
 * flame graph: its call paths depth first, siblings by name, recursion kept as paths, with
 * the time their samples stand for; paths under one per mille of the role's time (of its
 * samples when they carry none) left out.
 */
#include <stdio.h>
#include <string.h>

#include "builder.h"

#define MAIN 100
#define WORKER 200

static void code(struct po_model *model, int64_t t, int32_t pid, uint32_t id, const char *name,
		 int32_t line)
{
	struct po_event event = event_at(PO_EV_CODE, t, pid, pid);

	event.u.code.code_id = id;
	event.u.code.function = str_of(name);
	event.u.code.file = str_of("dataset.py");
	event.u.code.first_line = line;
	feed(model, &event);
}

/* A sample of thread tid: ids innermost first, count of them. */
static void sample(struct po_model *model, int64_t t, int32_t pid, int32_t tid, int64_t cpu_ns,
		   const uint32_t *ids, uint32_t count)
{
	struct po_stack_frame frames[8];
	struct po_event event = event_at(PO_EV_STACK_SAMPLE, t, pid, tid);

	CHECK(count <= 8);
	for (uint32_t i = 0; i < count; i++)
		frames[i] = (struct po_stack_frame){ids[i], 10 + i};
	event.u.stack_sample.tid = tid;
	event.u.stack_sample.cpu_ns = cpu_ns;
	event.u.stack_sample.depth = count;
	event.u.stack_sample.frames =
	    (struct po_str){(const char *)frames, count * sizeof(frames[0])};
	feed(model, &event);
}

static const struct po_hotspot_group *group_of(const struct po_analysis *analysis,
					       enum po_role role, int stage)
{
	for (size_t i = 0; i < analysis->hotspot_group_count; i++) {
		const struct po_hotspot_group *group = &analysis->hotspot_groups[i];

		if (group->role == role && group->stage == stage)
			return group;
	}
	return NULL;
}

static const struct po_hotspot *function_of(const struct po_hotspot_group *group, const char *name)
{
	for (size_t i = 0; group && i < group->hotspot_count; i++)
		if (strcmp(group->hotspots[i].function, name) == 0)
			return &group->hotspots[i];
	return NULL;
}

static bool near(double value, double want)
{
	return value > want - 0.01 && value < want + 0.01;
}

/*
 * The worker (its code ids 1..3 mean other functions than the main process's 1..3) loads
 * with three samples in load: decode twice (once for 20 ms of CPU, once for 10), resize
 * once (10 ms), each weight within the time since the thread's sample before the previous. The main
 * process samples forward twice and one sample between stages.
 */
static struct po_analysis *two_processes(void)
{
	static const uint32_t decode[] = {1, 2, 3}, resize[] = {2, 3}, forward[] = {1, 2, 2, 1},
			      loop[] = {2};
	struct po_model *model = model_new(NULL);

	worker_begin(model, 1 * MS, WORKER, 0, MAIN);
	code(model, 1 * MS, WORKER, 1, "decode", 40);
	code(model, 1 * MS, WORKER, 2, "__getitem__", 30);
	code(model, 1 * MS, WORKER, 3, "_worker_loop", 200);
	stage_begin(model, 2 * MS, WORKER, WORKER, PO_STAGE_LOAD, "a.jpg", 0);
	sample(model, 30 * MS, WORKER, WORKER, 20 * MS, decode, 3);
	sample(model, 40 * MS, WORKER, WORKER, 10 * MS, decode, 3);
	stage_end(model, 40 * MS, WORKER, WORKER, PO_STAGE_LOAD, 0);
	stage_begin(model, 40 * MS, WORKER, WORKER, PO_STAGE_LOAD, "b.jpg", 1);
	sample(model, 50 * MS, WORKER, WORKER, 10 * MS, resize, 2);
	stage_end(model, 60 * MS, WORKER, WORKER, PO_STAGE_LOAD, 1);

	code(model, 1 * MS, MAIN, 1, "Linear.forward", 110);
	code(model, 1 * MS, MAIN, 2, "train", 5);
	step_begin(model, 2 * MS, MAIN, MAIN, 0);
	stage_begin(model, 3 * MS, MAIN, MAIN, PO_STAGE_FORWARD, "", -1);
	sample(model, 4 * MS, MAIN, MAIN, 1 * MS, forward, 4);
	sample(model, 5 * MS, MAIN, MAIN, 1 * MS, forward, 4);
	stage_end(model, 6 * MS, MAIN, MAIN, PO_STAGE_FORWARD, -1);
	sample(model, 7 * MS, MAIN, MAIN, 1 * MS, loop, 1);
	step_end_sized(model, 8 * MS, MAIN, MAIN, 0, 4);
	return model_done(model);
}

static void test_roles_and_stages(void)
{
	struct po_analysis *analysis = two_processes();
	const struct po_hotspot_group *load = group_of(analysis, PO_ROLE_WORKER, PO_STAGE_LOAD);
	const struct po_hotspot_group *forward = group_of(analysis, PO_ROLE_MAIN, PO_STAGE_FORWARD);
	const struct po_hotspot_group *none = group_of(analysis, PO_ROLE_MAIN, -1);
	const struct po_hotspot *decode = function_of(load, "decode");
	const struct po_hotspot *getitem = function_of(load, "__getitem__");

	CHECK(analysis->stack_samples == 6);
	CHECK(analysis->hotspot_group_count == 3);
	CHECK(load && load->samples == 3 && load->cpu_ns == 40 * MS);
	/* decode: innermost in 30 of the 40 ms; __getitem__ innermost in 10, on every stack */
	CHECK(decode && decode->samples == 2 && near(decode->self_pct, 75.0));
	CHECK(near(decode->total_pct, 75.0) && decode->total_samples == 2);
	CHECK(getitem && getitem->samples == 1 && near(getitem->self_pct, 25.0));
	CHECK(near(getitem->total_pct, 100.0) && getitem->total_samples == 3);
	CHECK(strcmp(load->hotspots[0].function, "decode") == 0); /* largest self share first */
	CHECK(load->hotspots[0].line == 40 && strcmp(load->hotspots[0].file, "dataset.py") == 0);
	/* the labels of the spans the samples fell in: a.jpg's 30 ms, b.jpg's 10 */
	CHECK(load->label_count == 2 && strcmp(load->labels[0].label, "a.jpg") == 0);
	CHECK(load->labels[0].samples == 2 && near(load->labels[0].pct, 75.0));
	CHECK(strcmp(load->labels[1].label, "b.jpg") == 0 && near(load->labels[1].pct, 25.0));
	/* the main process's code 1 is its own Linear.forward, counted once per sample */
	CHECK(forward && forward->samples == 2);
	CHECK(function_of(forward, "decode") == NULL);
	CHECK(near(function_of(forward, "Linear.forward")->self_pct, 100.0));
	CHECK(function_of(forward, "train")->total_samples == 2);
	CHECK(near(function_of(forward, "train")->total_pct, 100.0));
	CHECK(none && none->samples == 1 && near(function_of(none, "train")->self_pct, 100.0));
	CHECK(none->label_count == 0 && forward->label_count == 1);
	/* groups by role, then stage, samples outside any stage last */
	CHECK(analysis->hotspot_groups[0].role == PO_ROLE_MAIN &&
	      analysis->hotspot_groups[0].stage == PO_STAGE_FORWARD);
	CHECK(analysis->hotspot_groups[1].stage == -1);
	po_analysis_destroy(analysis);
}

/* Without CPU times the shares are by count; unknown code and malformed frames. */
static void test_counts_unknown_malformed(void)
{
	static const uint32_t known[] = {1}, unknown[] = {9, 1};
	struct po_model *model = model_new(NULL);
	struct po_event broken = event_at(PO_EV_STACK_SAMPLE, 6 * MS, MAIN, MAIN);
	struct po_analysis *analysis;
	const struct po_hotspot_group *group;

	code(model, 1 * MS, MAIN, 1, "work", 1);
	sample(model, 2 * MS, MAIN, MAIN, -1, known, 1);
	sample(model, 3 * MS, MAIN, MAIN, -1, known, 1);
	sample(model, 4 * MS, MAIN, MAIN, -1, known, 1);
	sample(model, 5 * MS, MAIN, MAIN, -1, unknown, 2);
	broken.u.stack_sample.depth = 3; /* three frames in no bytes */
	feed(model, &broken);
	analysis = model_done(model);
	group = analysis->hotspot_groups;
	CHECK(analysis->stack_samples == 4 && analysis->hotspot_group_count == 1);
	CHECK(group->samples == 4 && group->cpu_ns == 0);
	CHECK(near(function_of(group, "work")->self_pct, 75.0));
	CHECK(near(function_of(group, "work")->total_pct, 100.0));
	CHECK(near(function_of(group, "(unknown code)")->self_pct, 25.0));
	po_analysis_destroy(analysis);
}

static bool flame_node_is(const struct po_flame_node *node, int32_t depth, const char *function,
			  int64_t samples, int64_t self)
{
	return node->depth == depth && strcmp(node->function, function) == 0 &&
	       node->samples == samples && node->self_samples == self;
}

static void test_flames(void)
{
	struct po_analysis *analysis = two_processes();
	const struct po_flame *main_flame, *worker;

	CHECK(analysis->flame_count == 2);
	main_flame = &analysis->flames[0];
	worker = &analysis->flames[1];
	CHECK(main_flame->role == PO_ROLE_MAIN && worker->role == PO_ROLE_WORKER);
	/* the worker: _worker_loop > __getitem__ > decode twice, __getitem__ itself once */
	CHECK(worker->samples == 3 && worker->node_count == 3 && worker->max_depth == 2);
	CHECK(flame_node_is(&worker->nodes[0], 0, "_worker_loop", 3, 0));
	CHECK(flame_node_is(&worker->nodes[1], 1, "__getitem__", 3, 1));
	CHECK(flame_node_is(&worker->nodes[2], 2, "decode", 2, 2));
	CHECK(worker->nodes[2].line == 40 && strcmp(worker->nodes[2].file, "dataset.py") == 0);
	/* and their times: decode 20 + 10 ms, resize's 10 ms in __getitem__ itself */
	CHECK_INT_EQ(worker->time_ns, 40 * MS);
	CHECK_INT_EQ(worker->nodes[0].time_ns, 40 * MS);
	CHECK_INT_EQ(worker->nodes[0].self_time_ns, 0);
	CHECK_INT_EQ(worker->nodes[1].time_ns, 40 * MS);
	CHECK_INT_EQ(worker->nodes[1].self_time_ns, 10 * MS);
	CHECK_INT_EQ(worker->nodes[2].time_ns, 30 * MS);
	CHECK_INT_EQ(worker->nodes[2].self_time_ns, 30 * MS);
	/* the loop: its recursion stays a path; roots by name ("Linear..." before "train") */
	CHECK(main_flame->samples == 3 && main_flame->node_count == 5 &&
	      main_flame->max_depth == 3);
	CHECK(flame_node_is(&main_flame->nodes[0], 0, "Linear.forward", 2, 0));
	CHECK(flame_node_is(&main_flame->nodes[1], 1, "train", 2, 0));
	CHECK(flame_node_is(&main_flame->nodes[2], 2, "train", 2, 0));
	CHECK(flame_node_is(&main_flame->nodes[3], 3, "Linear.forward", 2, 2));
	CHECK(flame_node_is(&main_flame->nodes[4], 0, "train", 1, 1));
	po_analysis_destroy(analysis);
}

/* A path in less than one per mille of the samples is left out, with its callees. */
static void test_flame_small_paths(void)
{
	static const uint32_t big[] = {1}, small[] = {3, 2};
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	code(model, 1 * MS, MAIN, 1, "big", 1);
	code(model, 1 * MS, MAIN, 2, "small", 2);
	code(model, 1 * MS, MAIN, 3, "smaller", 3);
	for (int i = 0; i < 1001; i++)
		sample(model, 2 * MS + i, MAIN, MAIN, -1, big, 1);
	sample(model, 3 * MS, MAIN, MAIN, -1, small, 2);
	analysis = model_done(model);
	CHECK(analysis->flame_count == 1 && analysis->flames[0].samples == 1002);
	CHECK(analysis->flames[0].node_count == 1);
	CHECK(flame_node_is(&analysis->flames[0].nodes[0], 0, "big", 1001, 1001));
	po_analysis_destroy(analysis);
}

/*
 * Where samples carry time, a path is left out by its share of the time: ten samples of a
 * nanosecond each beside one of 5 ms are under one per mille, though most of the samples.
 */
static void test_flame_small_times(void)
{
	static const uint32_t big[] = {1}, small[] = {2};
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	code(model, 1 * MS, MAIN, 1, "big", 1);
	code(model, 1 * MS, MAIN, 2, "small", 2);
	sample(model, 10 * MS, MAIN, MAIN, 5 * MS, big, 1);
	for (int i = 0; i < 10; i++)
		sample(model, 11 * MS + i, MAIN, MAIN, 1, small, 1);
	analysis = model_done(model);
	CHECK(analysis->flame_count == 1 && analysis->flames[0].samples == 11);
	CHECK_INT_EQ(analysis->flames[0].time_ns, 5 * MS + 10);
	CHECK_INT_EQ(analysis->flames[0].node_count, 1);
	CHECK(flame_node_is(&analysis->flames[0].nodes[0], 0, "big", 1, 1));
	po_analysis_destroy(analysis);
}

static void test_no_samples(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	step_begin(model, 1 * MS, MAIN, MAIN, 0);
	step_end_sized(model, 2 * MS, MAIN, MAIN, 0, 4);
	analysis = model_done(model);
	CHECK(analysis->stack_samples == 0 && analysis->hotspot_group_count == 0);
	CHECK(analysis->hotspot_groups == NULL);
	CHECK(analysis->flame_count == 0 && analysis->flames == NULL);
	po_analysis_destroy(analysis);
}

/* ---- native frames ---- */

/* The namer of these tests: a table of (object, offset range) -> function; counts calls. */
static int namer_calls, namer_interrupted_calls;

static enum po_status test_namer(void *ctx, const char *path, const char *build_id, uint64_t offset,
				 bool interrupted, struct po_native_name *out)
{
	static const struct {
		const char *path;
		uint64_t from, to;
		const char *function;
	} table[] = {
	    {"/lib/libjpeg.so.62", 0x10, 0x100, "decode_mcu"},
	    {"/lib/libm.so.6", 0x40, 0x80, "sin"},
	    {"/bin/prog", 0x100, 0x180, "compute"},
	    {"/bin/prog", 0x200, 0x280, "main"},
	    {"/bin/prog", 0x300, 0x380, "spin"},
	};

	(void)ctx;
	(void)build_id;
	namer_calls++;
	namer_interrupted_calls += interrupted;
	*out = (struct po_native_name){NULL, NULL, -1};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(path, table[i].path) == 0 && offset >= table[i].from &&
		    offset < table[i].to)
			*out =
			    (struct po_native_name){table[i].function, "src.c", (int32_t)(i + 1)};
	return PO_STATUS_OK;
}

static struct po_model *native_model(void)
{
	struct po_model_config config;

	po_model_config_init(&config);
	config.native_namer = (struct po_native_namer){.name = test_namer};
	namer_calls = namer_interrupted_calls = 0;
	return model_new(&config);
}

/* A Python sample whose frames carry their own lines (a native frame: the offset). */
static void sample_at(struct po_model *model, int64_t t, int32_t pid, const uint32_t *ids,
		      const uint32_t *lines, uint32_t count)
{
	struct po_stack_frame frames[8];
	struct po_event event = event_at(PO_EV_STACK_SAMPLE, t, pid, pid);

	for (uint32_t i = 0; i < count; i++)
		frames[i] = (struct po_stack_frame){ids[i], lines[i]};
	event.u.stack_sample.tid = pid;
	event.u.stack_sample.cpu_ns = 1 * MS;
	event.u.stack_sample.depth = count;
	event.u.stack_sample.frames =
	    (struct po_str){(const char *)frames, count * sizeof(frames[0])};
	feed(model, &event);
}

/*
 * A Python worker's native frames (code described with first line -1, the frame's line the
 * offset in the object): a named offset becomes the function inside the object's frame, an
 * unnamed one the object alone, an offset 0 (a libprofopt older than the offsets) too; each
 * (code, offset) is named once.
 */
static void test_python_native_frames(void)
{
	static const uint32_t ids[] = {0x80000001u, 1}, named[] = {0x20, 30},
			      unnamed[] = {0x2000, 30}, old[] = {0, 30};
	struct po_model *model = native_model();
	struct po_event event = event_at(PO_EV_CODE, 1 * MS, WORKER, WORKER);
	const struct po_hotspot_group *load;
	const struct po_hotspot *mcu, *object, *getitem;
	struct po_analysis *analysis;

	worker_begin(model, 1 * MS, WORKER, 0, MAIN);
	code(model, 1 * MS, WORKER, 1, "__getitem__", 30);
	event.u.code.code_id = 0x80000001u;
	event.u.code.function = str_of("[native] libjpeg.so.62");
	event.u.code.file = str_of("/lib/libjpeg.so.62");
	event.u.code.first_line = -1;
	feed(model, &event);
	stage_begin(model, 2 * MS, WORKER, WORKER, PO_STAGE_LOAD, "", 0);
	sample_at(model, 3 * MS, WORKER, ids, named, 2);
	sample_at(model, 4 * MS, WORKER, ids, named, 2);
	sample_at(model, 5 * MS, WORKER, ids, unnamed, 2);
	sample_at(model, 6 * MS, WORKER, ids, old, 2);
	stage_end(model, 7 * MS, WORKER, WORKER, PO_STAGE_LOAD, 0);
	analysis = model_done(model);
	load = group_of(analysis, PO_ROLE_WORKER, PO_STAGE_LOAD);
	mcu = function_of(load, "decode_mcu");
	object = function_of(load, "[native] libjpeg.so.62");
	getitem = function_of(load, "__getitem__");
	CHECK(load && load->samples == 4);
	CHECK(mcu && mcu->samples == 2 && near(mcu->self_pct, 50) && near(mcu->total_pct, 50));
	CHECK(strcmp(mcu->file, "src.c") == 0 && mcu->line == 1);
	CHECK(object && object->samples == 2 && near(object->self_pct, 50) &&
	      near(object->total_pct, 100) && object->line == 0);
	CHECK(getitem && getitem->samples == 0 && near(getitem->total_pct, 100));
	CHECK(namer_calls == 2 && namer_interrupted_calls == 2); /* 0x20 once, 0x2000 once */
	po_analysis_destroy(analysis);
}

static void object_at(struct po_model *model, int32_t pid, uint64_t base, uint64_t size,
		      const char *path)
{
	struct po_event event = event_at(PO_EV_BIN_INFO, 1 * MS, pid, pid);

	event.u.bin.base = base;
	event.u.bin.size = size;
	event.u.bin.path = str_of(path);
	feed(model, &event);
}

/* A libprofopt sample of thread tid: pcs innermost first. */
static void native_sample(struct po_model *model, int64_t t, int32_t pid, int32_t tid,
			  const uint64_t *pcs, uint32_t count)
{
	struct po_event event = event_at(PO_EV_NATIVE_STACK, t, pid, tid);

	event.u.native_stack.tid = tid;
	event.u.native_stack.weight_ns = 1 * MS;
	event.u.native_stack.depth = count;
	event.u.native_stack.pcs = (struct po_str){(const char *)pcs, count * sizeof(*pcs)};
	feed(model, &event);
}

#define PROG 0x400000u
#define LIBM 0x7f0000000000u

/*
 * A C program's own samples (profopt:native_stack): each address is placed in its object
 * by the state dump and named; an object's frame closes each run of frames in it; a
 * caller's address is named as a return address, the innermost as interrupted; a sample
 * goes to the stage open on its own thread; an innermost address in no object is
 * an address in no known object adds no frame (the vDSO: its time is its caller's), a sample
 * with none in a known object is "(unmapped native code)"; a sample of no address is dropped.
 */
static void test_c_samples(void)
{
	static const uint64_t in_sin[] = {LIBM + 0x50, PROG + 0x110, PROG + 0x210},
			      in_spin[] = {PROG + 0x310, 0x1234, PROG + 0x210},
			      in_vdso[] = {0x1234, PROG + 0x110, PROG + 0x210},
			      unmapped[] = {0x1234};
	struct po_model *model = native_model();
	const struct po_hotspot_group *load, *preprocess;
	const struct po_flame *flame;
	struct po_analysis *analysis;
	const char *path[5] = {"[native] prog", "main", "compute", "[native] libm.so.6", "sin"};
	bool found = false;

	object_at(model, MAIN, PROG, 0x10000, "/bin/prog");
	object_at(model, MAIN, LIBM, 0x100000, "/lib/libm.so.6");
	step_begin(model, 2 * MS, MAIN, MAIN, 0);
	stage_begin(model, 2 * MS, MAIN, MAIN, PO_STAGE_LOAD, "", 0);
	stage_begin(model, 2 * MS, MAIN, MAIN + 1, PO_STAGE_PREPROCESS, "", 0);
	native_sample(model, 3 * MS, MAIN, MAIN, in_sin, 3);
	native_sample(model, 3 * MS, MAIN, MAIN, in_sin, 3);
	native_sample(model, 4 * MS, MAIN, MAIN + 1, in_spin, 3);
	native_sample(model, 5 * MS, MAIN, MAIN, in_vdso, 3);
	native_sample(model, 5 * MS, MAIN, MAIN, unmapped, 1);
	native_sample(model, 5 * MS, MAIN, MAIN, unmapped, 0);
	stage_end(model, 6 * MS, MAIN, MAIN + 1, PO_STAGE_PREPROCESS, 0);
	stage_end(model, 6 * MS, MAIN, MAIN, PO_STAGE_LOAD, 0);
	step_end_sized(model, 7 * MS, MAIN, MAIN, 0, 4);
	analysis = model_done(model);
	load = group_of(analysis, PO_ROLE_MAIN, PO_STAGE_LOAD);
	preprocess = group_of(analysis, PO_ROLE_MAIN, PO_STAGE_PREPROCESS);
	CHECK(analysis->stack_samples == 5);
	CHECK(load && load->samples == 4 && preprocess && preprocess->samples == 1);
	CHECK(function_of(load, "sin") && near(function_of(load, "sin")->self_pct, 50));
	CHECK(function_of(load, "(unmapped native code)") &&
	      function_of(load, "(unmapped native code)")->samples == 1);
	CHECK(function_of(load, "[native] libm.so.6") &&
	      near(function_of(load, "[native] libm.so.6")->total_pct, 50));
	CHECK(function_of(load, "compute") && function_of(load, "compute")->total_samples == 3 &&
	      function_of(load, "compute")->samples == 1);
	CHECK(function_of(preprocess, "spin") &&
	      near(function_of(preprocess, "spin")->self_pct, 100));
	/* sin (interrupted), compute, main, spin (interrupted); the rest remembered */
	CHECK(namer_calls == 4 && namer_interrupted_calls == 2);
	flame = &analysis->flames[0];
	CHECK(analysis->flame_count == 1 && flame->node_count >= 5);
	/* the path to sin, depth first: main's children by name, "(unmapped ...)" first */
	for (size_t i = 0, depth = 0; i < flame->node_count && depth < 5; i++)
		if (flame->nodes[i].depth == (int32_t)depth &&
		    strcmp(flame->nodes[i].function, path[depth]) == 0)
			found = ++depth == 5;
	CHECK(found);
	po_analysis_destroy(analysis);
}

/*
 * A sample's weight cannot exceed the time since the stamp of its thread's sample before the
 * previous one (the process's first event while there is none): one flipped bit made a
 * 3 ms sample weigh 2^40 ns and took every share. Such a sample, a negative weight other
 * than -1 (unknown), and a native sample likewise, are left out whole, counted as
 * implausible values, and the result is partial; the bound does not move the others.
 */
static void test_implausible_weights(void)
{
	static const uint32_t decode[] = {1}, augment[] = {2};
	static const uint64_t pcs[] = {0x1234};
	struct po_model *model = model_new(NULL);
	struct po_event native = event_at(PO_EV_NATIVE_STACK, 9 * MS, MAIN, MAIN + 1);
	const struct po_hotspot_group *group;
	struct po_analysis *analysis;

	code(model, 1 * MS, MAIN, 1, "hot_decode", 10);
	code(model, 1 * MS, MAIN, 2, "hot_augment", 20);
	sample(model, 2 * MS, MAIN, MAIN, 1 * MS, decode, 1);
	sample(model, 4 * MS, MAIN, MAIN, 3 * MS, decode, 1); /* 3 ms since the first event */
	sample(model, 6 * MS, MAIN, MAIN, 3 * MS | (1LL << 40), augment, 1);
	sample(model, 8 * MS, MAIN, MAIN, 2 * MS, augment, 1);
	sample(model, 10 * MS, MAIN, MAIN, -5, augment, 1);
	sample(model, 12 * MS, MAIN, MAIN, -1, decode, 1); /* unknown: a sample of no time */
	/* 5 ms of a thread whose first sample comes 8 ms after the process's first event */
	native.u.native_stack.tid = MAIN + 1;
	native.u.native_stack.weight_ns = 5 * MS;
	native.u.native_stack.depth = 1;
	native.u.native_stack.pcs = (struct po_str){(const char *)pcs, sizeof(pcs)};
	feed(model, &native);
	native.time_ns = 10 * MS;
	native.u.native_stack.weight_ns = 40 * MS; /* 40 ms in 9 */
	feed(model, &native);
	analysis = model_done(model);
	group = analysis->hotspot_group_count == 1 ? analysis->hotspot_groups : NULL;
	CHECK(analysis->stack_samples == 5);
	CHECK(analysis->quality.implausible_values == 3);
	CHECK(analysis->quality.partial);
	CHECK(group && group->samples == 5 && group->cpu_ns == 11 * MS);
	CHECK(function_of(group, "hot_decode") &&
	      near(function_of(group, "hot_decode")->self_pct, 400.0 / 11));
	CHECK(function_of(group, "hot_augment") &&
	      near(function_of(group, "hot_augment")->self_pct, 200.0 / 11));
	po_analysis_destroy(analysis);
}

/*
 * A user's function whose time is in the library functions it calls (60% total, no self
 * time) is listed in the report's tables by its total share, though six library functions
 * and four others come before it by self share; <module>, on every stack, is not.
 */
static void test_listed_by_total(void)
{
	static const char *const names[] = {"pil_0",   "pil_1",	  "pil_2",	 "pil_3",
					    "pil_4",   "pil_5",	  "other_0",	 "other_1",
					    "other_2", "other_3", "train_batch", "<module>"};
	struct po_model *model = model_new(NULL);
	const struct po_hotspot_group *group;
	const struct po_hotspot *user;
	struct po_analysis *analysis;
	size_t listed = 0;

	for (uint32_t i = 0; i < 12; i++)
		code(model, 1 * MS, MAIN, i + 1, names[i], 10 + (int32_t)i);
	for (uint32_t i = 0; i < 10; i++) {
		uint32_t in_user[] = {i + 1, 11, 12}, outside[] = {i + 1, 12};

		if (i < 6)
			sample(model, (2 + i) * MS, MAIN, MAIN, 1 * MS, in_user, 3);
		else
			sample(model, (2 + i) * MS, MAIN, MAIN, 1 * MS, outside, 2);
	}
	analysis = model_done(model);
	group = analysis->hotspot_group_count == 1 ? analysis->hotspot_groups : NULL;
	user = function_of(group, "train_batch");
	CHECK(user && near(user->self_pct, 0) && near(user->total_pct, 60));
	CHECK(user && user->total_rank == 1 && user->listed);
	CHECK(function_of(group, "<module>") == NULL || !function_of(group, "<module>")->listed);
	for (size_t i = 0; group && i < group->hotspot_count; i++) {
		listed += group->hotspots[i].listed;
		CHECK(!group->hotspots[i].listed || i < PO_HOTSPOT_LISTED_BY_SELF ||
		      (group->hotspots[i].total_rank > 0 &&
		       group->hotspots[i].total_rank <= PO_HOTSPOT_LISTED_BY_TOTAL));
	}
	CHECK(listed >= PO_HOTSPOT_LISTED_BY_SELF + 1 &&
	      listed <= PO_HOTSPOT_LISTED_BY_SELF + PO_HOTSPOT_LISTED_BY_TOTAL);
	po_analysis_destroy(analysis);
}

int main(void)
{
	test_roles_and_stages();
	test_counts_unknown_malformed();
	test_flames();
	test_flame_small_paths();
	test_flame_small_times();
	test_no_samples();
	test_python_native_frames();
	test_c_samples();
	test_implausible_weights();
	test_listed_by_total();
	return CHECK_SUMMARY();
}
