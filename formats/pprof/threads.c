/*
 * The thread of an imported pprof sample, from its labels.
 *
 * pprof has no threads, only labels on samples, and producers spell the
 * thread's in different ways (found in their sources):
 *  - ids, numbers or decimal strings: "tid" and "pid" (microscope,
 *    perf_data_converter's perf_to_profile), "thread_id" (Pyroscope's
 *    py-spy, rbspy and pprof-rs backends, as text), "thread native id"
 *    and "thread id" (Datadog's profilers; "thread id" is the runtime's,
 *    Python's a pthread_t address), "os thread id" (Datadog's Node.js),
 *    "thread.id" and "process.pid" (OpenTelemetry's names);
 *  - names: "thread" (microscope, pprof-rs, async-profiler's converter,
 *    which writes "name [tid=N]"), "thread_name" and "threadname"
 *    (Pyroscope and others), "thread name" (Datadog), "thread.name"
 *    (OpenTelemetry), "thread_comm" (perf_to_profile).
 * A sample's thread id is its first id label in the order above (the OS's
 * id before a runtime's); its pid the first of "pid", "process_id",
 * "process.pid"; its name the first name label in the order above.
 *
 * A thread is (pid, tid): the id when it is a number up to 2^31-1 (the
 * most Linux ever gives). A thread known only by its name, or by an id
 * that is no OS id (text, or past 2^31-1: a runtime's handle), is
 * numbered: tids past the largest the file gives, one per distinct
 * (pid, name or id), in the order the file first shows them, so that
 * distinct threads stay distinct and the same file gives the same tids.
 * A sample without any of these labels is thread (pid, 0) as before.
 *
 * A thread keeps the first name the samples give it, cut to 255 bytes at
 * a character boundary; samples that name it otherwise are counted in the
 * problem "import-thread-renamed" (a label in conflict is not a silent
 * choice). Hostile labels cost memory in proportion to the file: each
 * distinct string is hashed once, whatever its length or how many samples
 * name it.
 */
#include "config.h"

#include "formats/pprof/threads.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "formats/internal.h"
#include "stream/records.h"
#include "util/error.h"
#include "util/grow.h"

typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;

/* The largest id kept as a tid (or pid): Linux's pid_max is at most 2^22. */
#define TID_MAX INT32_MAX

enum kind { KIND_PID, KIND_ID, KIND_NAME };

/* In order of preference within each kind. */
static const struct {
	const char *key;
	enum kind kind;
} keys[] = {
	{ "pid", KIND_PID },
	{ "process_id", KIND_PID },
	{ "process.pid", KIND_PID },
	{ "tid", KIND_ID },
	{ "thread_id", KIND_ID },
	{ "thread native id", KIND_ID },
	{ "os thread id", KIND_ID },
	{ "thread.id", KIND_ID },
	{ "thread id", KIND_ID },
	{ "thread", KIND_NAME },
	{ "thread_name", KIND_NAME },
	{ "threadname", KIND_NAME },
	{ "thread name", KIND_NAME },
	{ "thread.name", KIND_NAME },
	{ "thread_comm", KIND_NAME },
};
#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

/* What a sample's labels say of its thread; rank N_KEYS: not said. */
struct said {
	unsigned pid_rank, id_rank, name_rank;
	uint64_t pid, id;
	bool pid_ok, id_ok;	/* a whole number (else the label is no id) */
	int64_t name;		/* string index */
};

static int key_of(const char *key)
{
	/* the keys all start "p", "t" or "o": most labels are passed over at once */
	if (key[0] != 'p' && key[0] != 't' && key[0] != 'o')
		return -1;
	for (unsigned i = 0; i < N_KEYS; i++)
		if (!strcmp(key, keys[i].key))
			return (int)i;
	return -1;
}

bool ms_pprof_threads_key(const char *key)
{
	return key_of(key) >= 0;
}

/* A label's whole number: its number, or its text of 1 to 20 digits. */
static bool number_of(const struct ms_pprof_threads *t, const Label *lb, uint64_t *out)
{
	const char *s;
	uint64_t v = 0;
	size_t i;

	if (!lb->str) {
		*out = (uint64_t)lb->num;
		return lb->num >= 0;
	}
	s = t->strings[lb->str];
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9' || i == 20 ||
		    v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return i > 0;
}

static void read_labels(const struct ms_pprof_threads *t, const Sample *s, struct said *w)
{
	memset(w, 0, sizeof(*w));
	w->pid_rank = w->id_rank = w->name_rank = N_KEYS;
	for (size_t k = 0; k < s->n_label; k++) {
		const Label *lb = s->label[k];
		int i = key_of(t->strings[lb->key]);
		unsigned r = (unsigned)i;

		if (i < 0)
			continue;
		switch (keys[i].kind) {
		case KIND_PID:
			if (r < w->pid_rank) {
				w->pid_rank = r;
				w->pid_ok = number_of(t, lb, &w->pid);
			}
			break;
		case KIND_ID:
			if (r < w->id_rank) {
				w->id_rank = r;
				w->id_ok = number_of(t, lb, &w->id);
			}
			break;
		case KIND_NAME:
			/* an empty or numeric name names nothing */
			if (r < w->name_rank && lb->str) {
				w->name_rank = r;
				w->name = lb->str;
			}
			break;
		}
	}
}

int ms_pprof_threads_init(struct ms_pprof_threads *t, char *const *strings, size_t n_strings)
{
	memset(t, 0, sizeof(*t));
	t->strings = strings;
	t->n_strings = n_strings;
	t->next_tid = 1;
	t->canon = malloc((n_strings ? n_strings : 1) * sizeof(*t->canon));
	if (!t->canon)
		return ms_error("out of memory");
	for (size_t i = 0; i < n_strings; i++)
		t->canon[i] = MS_NONE;
	return 0;
}

void ms_pprof_threads_release(struct ms_pprof_threads *t)
{
	free(t->canon);
	ms_index_release(&t->canon_ix);
	ms_pairmap_release(&t->big_ids);
	ms_pairmap_release(&t->numbered);
	ms_pairmap_release(&t->named);
	free(t->names);
	memset(t, 0, sizeof(*t));
}

void ms_pprof_threads_check(struct ms_pprof_threads *t, const Sample *s)
{
	struct said w;

	read_labels(t, s, &w);
	if (w.id_rank < N_KEYS && w.id_ok && w.id <= TID_MAX && w.id + 1 > t->next_tid)
		t->next_tid = (uint32_t)w.id + 1;
	if ((w.id_rank < N_KEYS && (!w.id_ok || w.id > TID_MAX)) ||
	    (w.pid_rank < N_KEYS && (!w.pid_ok || w.pid > TID_MAX)))
		t->loss |= MS_PPROF_THREADS_LOSS_IDS;
}

static bool canon_eq(const void *ctx, uint32_t e, const void *key)
{
	const struct ms_pprof_threads *t = ctx;

	return !strcmp(t->strings[e], key);
}

/*
 * The first string index with the bytes of string s: a file may hold a
 * string twice. Each index is hashed once, so a long name that a million
 * samples give costs one pass over it.
 */
static uint32_t canon(struct ms_pprof_threads *t, int64_t s)
{
	const char *str = t->strings[s];
	uint32_t h, e;

	if (t->canon[s] != MS_NONE)
		return t->canon[s];
	h = ms_hash_bytes(str, strlen(str));
	e = ms_index_find(&t->canon_ix, h, canon_eq, t, str);
	if (e == MS_INDEX_EMPTY) {
		if (ms_index_add(&t->canon_ix, h, (uint32_t)s) < 0) {
			ms_error("out of memory");
			return MS_NONE;
		}
		e = (uint32_t)s;
	}
	t->canon[s] = e;
	return e;
}

/* How many bytes of s, at most max, end at a character boundary (not inside a UTF-8 sequence). */
static int cut(const char *s, size_t max)
{
	size_t len = strlen(s);

	if (len > max) {
		len = max;
		while (len && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	return (int)len;
}

/* The name as kept: at most MS_PPROF_THREAD_NAME_MAX bytes, cut before a character. */
static struct ms_str kept_name(struct ms_pprof_threads *t, const char *name)
{
	int len = cut(name, MS_PPROF_THREAD_NAME_MAX);

	if (name[len])
		t->loss |= MS_PPROF_THREADS_LOSS_NAMES;
	return (struct ms_str){ name, (uint32_t)len };
}

/* Name thread (pid, tid) when it has no name yet; count a different one. */
static int name_thread(struct ms_pprof_threads *t, struct ms_capture_builder *b, uint32_t pid,
		       uint32_t tid, uint32_t name)
{
	bool added;
	uint32_t row = ms_pairmap_get(&t->named, pid, tid, &added);
	struct ms_comm c;

	if (row == UINT32_MAX)
		return -1;
	if (!added) {
		if (t->names[row] != name && !t->renamed++) {
			t->renamed_pid = pid;
			t->renamed_tid = tid;
			t->renamed_first = t->names[row];
			t->renamed_other = name;
		}
		return 0;
	}
	if (MS_GROW(t->names, row, t->alloc_names) < 0)
		return -1;
	t->names[row] = name;
	memset(&c, 0, sizeof(c));
	c.pid = pid;
	c.tid = tid;
	c.comm = kept_name(t, t->strings[name]);
	return ms_capture_builder_comm(b, &c);
}

int ms_pprof_threads_of(struct ms_pprof_threads *t, struct ms_capture_builder *b,
			const Sample *s, uint32_t *pid, uint32_t *tid)
{
	struct said w;
	uint32_t key = MS_NONE, name = MS_NONE, row;

	read_labels(t, s, &w);
	*pid = w.pid_rank < N_KEYS && w.pid_ok && w.pid <= TID_MAX ? (uint32_t)w.pid : 0;
	*tid = 0;
	if (w.name_rank < N_KEYS && (name = canon(t, w.name)) == MS_NONE)
		return -1;
	if (w.id_rank < N_KEYS && w.id_ok && w.id <= TID_MAX) {
		*tid = (uint32_t)w.id;
	} else if (w.id_rank < N_KEYS && w.id_ok) {
		/* a runtime's handle: numbered by the id (2^31 and up: apart from names) */
		row = ms_pairmap_get(&t->big_ids, (uint32_t)w.id, (uint32_t)(w.id >> 32), NULL);
		if (row == UINT32_MAX)
			return -1;
		key = (uint32_t)1 << 31 | row;
	} else if (name != MS_NONE) {
		/* known by its name alone (string indexes are below 2^31: 1 GiB at most) */
		key = name;
	}
	if (key != MS_NONE) {
		row = ms_pairmap_get(&t->numbered, *pid, key, NULL);
		if (row == UINT32_MAX)
			return -1;
		*tid = t->next_tid + row;
	}
	if (name != MS_NONE && name_thread(t, b, *pid, *tid, name) < 0)
		return -1;
	return 0;
}

int ms_pprof_threads_finish(struct ms_pprof_threads *t, struct ms_capture_builder *b)
{
	const char *first, *other;
	char detail[256];
	struct ms_problem pr;

	if (!t->renamed)
		return 0;
	first = t->strings[t->renamed_first];
	other = t->strings[t->renamed_other];
	snprintf(detail, sizeof(detail),
		 "thread %" PRIu32 "/%" PRIu32 " is named \"%.*s\" by a sample's labels and "
		 "\"%.*s\" by another's: a thread keeps the first name",
		 t->renamed_pid, t->renamed_tid, cut(first, 64), first, cut(other, 64), other);
	pr.stage = ms_str_of("ms-capture");
	pr.code = ms_str_of("import-thread-renamed");
	pr.count = t->renamed;
	pr.detail = ms_str_of(detail);
	return ms_capture_builder_problem(b, &pr);
}
