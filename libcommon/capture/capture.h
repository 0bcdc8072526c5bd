/*
 * The capture (.msc): an immutable, validated set of dense tables. The
 * on-disk format is specified in man/microscope-capture.5; this is the
 * in-memory model every consumer (ms-analyze, ms-export, ms-capture --dump)
 * reads, and the builder that ms-capture and importers fill.
 *
 * Invariants a loaded capture guarantees (the reader checks them all before
 * returning, so consumers index without checking):
 *  - every string id < n_strings; string 0 is "" (the absent string);
 *  - every module, frame, stack and thread reference is < its table's count
 *    or MS_NONE where the field allows it;
 *  - stacks form a prefix tree: stacks[i].parent < i or MS_NONE (the
 *    outermost frame's node has parent MS_NONE);
 *  - samples are sorted by (time, thread, cpu, stack);
 *  - tables are in deterministic order: the same stream gives the same
 *    tables and the same file bytes.
 *
 * Ownership: ms_capture_load() returns a capture the caller frees with
 * ms_capture_free(); pointers into it live as long as it does.
 */
#ifndef MS_CAPTURE_CAPTURE_H
#define MS_CAPTURE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MS_CAPTURE_MAGIC "MSCAPT\r\n"	/* 8 bytes */
#define MS_CAPTURE_MAJOR 1
#define MS_CAPTURE_MINOR 0
#define MS_NONE UINT32_MAX

enum ms_capture_flags {
	MS_CAPTURE_INCOMPLETE = 1 << 0,	/* salvaged from a stream cut short */
};

struct ms_cap_module {
	uint32_t path;		/* string: a hint, never identity */
	uint32_t kind;		/* enum ms_module_kind (stream/records.h) */
	uint32_t build_id_len;
	uint8_t build_id[20];
	uint32_t dev_maj, dev_min;
	uint64_t ino, size, mtime;
};

/* A frame: one (module, address) with what symbolization found. */
struct ms_cap_frame {
	uint32_t module;	/* MS_NONE for an address in no module */
	uint32_t flags;		/* enum ms_frame_flags */
	uint64_t address;	/* module-relative, as in the stream */
	uint32_t name;		/* string; 0 when unnamed */
	uint64_t symbol_start;
	uint32_t reason;	/* enum ms_frame_reason, or MS_CAP_UNSYMBOLIZED */
};

/*
 * A frame's reason when the stream held no frame fact for its (module,
 * address): the pipeline had no ms-symbolize stage, or it skipped the frame.
 */
#define MS_CAP_UNSYMBOLIZED UINT32_MAX

/* A node of the stack prefix tree, root = outermost frame. */
struct ms_cap_stack {
	uint32_t parent;	/* MS_NONE at the root */
	uint32_t frame;
	uint32_t depth;		/* 1 at the root */
};

struct ms_cap_thread {
	uint32_t pid, tid;
	uint32_t name;		/* string: last comm seen */
	uint64_t first_time, last_time;	/* of its samples; 0 when none */
};

struct ms_cap_sample {
	uint64_t time;
	uint32_t thread;
	uint32_t cpu;
	uint32_t stack;		/* innermost frame's node; MS_NONE if no frames */
	uint32_t end;		/* enum ms_stack_end */
	uint64_t period;	/* weight: nanoseconds for cpu-clock */
};

struct ms_cap_problem {
	uint32_t stage, code, detail;	/* strings */
	uint64_t count;
};

/* key/value facts from MS_REC_INFO (value_text 0 when numeric). */
struct ms_cap_info {
	uint32_t key;
	uint32_t value_text;
	uint64_t value_number;
};

struct ms_capture {
	uint32_t major, minor;
	uint32_t flags;		/* enum ms_capture_flags */

	uint32_t n_strings;
	const char **strings;	/* NUL-terminated */

	uint32_t n_info;
	struct ms_cap_info *info;	/* sorted by key string */
	uint32_t n_modules;
	struct ms_cap_module *modules;
	uint32_t n_frames;
	struct ms_cap_frame *frames;
	uint32_t n_stacks;
	struct ms_cap_stack *stacks;
	uint32_t n_threads;
	struct ms_cap_thread *threads;	/* sorted by (pid, tid) */
	uint32_t n_samples;
	struct ms_cap_sample *samples;
	uint32_t n_problems;
	struct ms_cap_problem *problems;

	/* totals from the stream */
	uint64_t lost_kernel;		/* records the kernel dropped */
	uint64_t lost_collector;	/* records ms-collect could not pass on */
	uint64_t throttled;		/* throttle events */
	uint64_t start_time, end_time;	/* perf clock, ns */
	int32_t target_exit_code;	/* -1 when unknown or attached */

	void *storage;		/* owned backing memory */
};

/* Load and validate; NULL after one message naming the file and section. */
struct ms_capture *ms_capture_load(const char *path);
/* The same over bytes in memory (not kept); name names them in messages. */
struct ms_capture *ms_capture_load_buffer(const void *buf, size_t len, const char *name);
void ms_capture_free(struct ms_capture *cap);

/*
 * Serialize cap to a new malloc'd buffer (*buf, *len): the same tables give
 * the same bytes. It writes what it is given without checking it: a capture
 * from the builder (capture/builder.h) or the loader holds the invariants.
 * Returns 0, or -1 after one message.
 */
int ms_capture_encode(const struct ms_capture *cap, unsigned char **buf, size_t *len);
/*
 * Write cap to path: to path.tmp.PID in the same directory, fsync'd, then
 * renamed over path, so path is never a partial file. On failure the
 * temporary file is removed and path is untouched. Returns 0 or -1.
 */
int ms_capture_write(const struct ms_capture *cap, const char *path);
/* Info value by key, or NULL / false when absent. */
const char *ms_capture_info_text(const struct ms_capture *cap, const char *key);
bool ms_capture_info_number(const struct ms_capture *cap, const char *key, uint64_t *out);

#endif
