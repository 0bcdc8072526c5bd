/*
 * Indexed units kept in the cache (the DWARF index's second file; see
 * dwarfidx-impl.h).
 */
#include "dwarf/dwarfidx-impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/crc32c.h"
#include "util/cachedir.h"
#include "util/cachefile.h"
#include "util/grow.h"
#include "util/publish.h"

/*
 * Indexing a unit (the walk of its DIEs for scopes, its line program for
 * rows) is most of a short ms-symbolize run, and its result only changes
 * with the DWARF. So each unit indexed in a run is kept in a file beside
 * the inflated debug copy (dcache.h), keyed by the build id and the sizes
 * of every section the index reads, and a later run maps the file and
 * takes a unit from it instead of reading the DWARF.
 *
 * The file is trusted for answers, so nothing of it is used unproved:
 *  - at ms_dwarfidx_index_cache(): the headers (the common one of
 *    util/cachefile.h; then the sizes of the structures, the key), then
 *    the directory (its CRC, entries sorted by unit, each unit's bytes
 *    inside the file, in order, not overlapping); anything wrong ignores
 *    the whole file;
 *  - on a unit's first use: the CRC-32C of its bytes, then every count,
 *    index and offset (scopes' parents, children and siblings, their
 *    ranges, names and strings, tops, rows in order, files); anything
 *    wrong ignores that unit's entry: it is indexed from the DWARF.
 * A unit from aranges is checked as usual unless its entry holds the very
 * ranges its DIE gave when it was indexed (the check's result). Its line
 * table is kept only when the unit read it itself (a table shared with a
 * unit of another compilation directory names files differently), and
 * installed where ms_dwi_unit_lines() would have read it, so that sharing by
 * offset is as without the file. Names of scopes are kept once some run
 * read them.
 *
 * ms_dwarfidx_save() writes the file again when units were indexed from
 * the DWARF, a cached unit learnt a name or its lines, or an entry was
 * damaged: units used in the run first, then the file's other entries, up
 * to MS_DWARFIDX_CACHE_MAX bytes (what does not fit is left out: those
 * units are read from the DWARF when used and take the room of units not
 * used). It is published atomically (util/publish.h): concurrent runs
 * each write a whole file, the last rename wins.
 *
 * Layout (host byte order, 8-byte aligned): the common header of every
 * cache file (util/cachefile.h, magic "MSUNIDX"), struct ic_header,
 * n_entries struct ic_entry sorted by unit header offset, then each
 * entry's bytes:
 * struct ic_blob, its unit's ranges per its DIE (struct range), scopes
 * (struct scope; name: 1 + an index in the names below, 0 for none), the
 * scopes' ranges (struct range), tops (struct top), names (struct
 * ic_name), rows (struct ms_rkey), files (uint32_t string offsets; NONE
 * for ms_linetab_unknown), strings (NUL-terminated), zeros to 8 bytes.
 */
/*
 * 3: the common header's producer and CRCs (util/cachefile.h). The file is
 * checked by parts: its own header against the common header's CRC, the
 * directory against dir_crc, each entry against its crc on first use.
 */
#define IC_VERSION 3
#define IC_MAGIC "MSUNIDX"

/* The cache's own header, after the common one. */
struct ic_header {
	uint32_t scope_size, range_size, top_size, name_size, row_size, blob_size, entry_size;
	uint32_t bid_len;
	uint8_t bid[MS_BUILD_ID_MAX];
	uint32_t zero;
	uint64_t sec_size[SEC_N];
	uint64_t n_entries;
	uint32_t dir_crc;
	uint32_t pad;
};

struct ic_entry {
	uint64_t hdr;		/* the unit's header offset */
	uint64_t pos, len;	/* its bytes in the file */
	uint32_t crc;		/* their CRC-32C */
	uint32_t pad;
};

enum { IC_LINES = 1, IC_COMP_DIR = 2 };

struct ic_blob {
	uint64_t hdr, off;	/* the unit's header and first DIE */
	uint64_t line_off;	/* IC_LINES: its table's offset in .debug_line */
	uint32_t n_cu_ranges, n_scopes, n_ranges, n_tops;
	uint32_t n_names, n_rows, n_files, str_len;
	uint32_t flags;		/* IC_* */
	uint32_t comp_dir;	/* IC_COMP_DIR: its DW_AT_comp_dir in the strings */
};

struct ic_name {
	uint64_t entry;
	uint32_t function;	/* NONE when the DWARF gives none */
	uint32_t system_name;
	uint32_t decl_line;
	uint32_t pad;
};

enum { IC_UNSEEN, IC_GOOD, IC_BAD };

/* Where the directory starts: after both headers. */
#define IC_DIR_AT (sizeof(struct ms_cachefile) + sizeof(struct ic_header))
_Static_assert(IC_DIR_AT % 8 == 0, "the directory and entries are 8-byte aligned");

/* The file's size at most: see above. */
static uint64_t ic_max = MS_DWARFIDX_CACHE_MAX;

void ms_dwarfidx_cache_max(uint64_t bytes)
{
	ic_max = bytes ? bytes : MS_DWARFIDX_CACHE_MAX;
}

static uint64_t round8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

/* The header d's DWARF with build id bid would have (n_entries, dir_crc 0). */
static void ic_key(const struct ms_dwarfidx *d, const uint8_t *bid, uint32_t bid_len,
		   struct ic_header *h)
{
	memset(h, 0, sizeof(*h));
	h->scope_size = sizeof(struct scope);
	h->range_size = sizeof(struct range);
	h->top_size = sizeof(struct top);
	h->name_size = sizeof(struct ic_name);
	h->row_size = sizeof(struct ms_rkey);
	h->blob_size = sizeof(struct ic_blob);
	h->entry_size = sizeof(struct ic_entry);
	h->bid_len = bid_len;
	memcpy(h->bid, bid, bid_len);
	for (int k = 0; k < SEC_N; k++)
		h->sec_size[k] = d->sec[k] ? d->sec[k]->d_size : 0;
}

/* The headers and directory of the mapped file: its own header when they hold, else NULL. */
static const struct ic_header *ic_dir_valid(const uint8_t *map, size_t len,
					    const struct ic_header *key)
{
	const struct ic_header *h;
	const struct ic_entry *e;
	uint64_t n, end, i;

	if (len < IC_DIR_AT || len % 8 ||
	    !(h = ms_cachefile_check_head(map, len, IC_MAGIC, IC_VERSION, sizeof(*h), NULL)) ||
	    memcmp(h, key, offsetof(struct ic_header, n_entries)))
		return NULL;
	n = h->n_entries;
	if (n > (len - IC_DIR_AT) / sizeof(*e) || n > UINT32_MAX)
		return NULL;
	e = (const void *)(map + IC_DIR_AT);
	if (ms_crc32c(0, e, n * sizeof(*e)) != h->dir_crc)
		return NULL;
	end = IC_DIR_AT + n * sizeof(*e);
	for (i = 0; i < n; i++) {
		if ((i && e[i].hdr <= e[i - 1].hdr) || e[i].pos < end || e[i].pos % 8 ||
		    e[i].len < sizeof(struct ic_blob) || e[i].len % 8 || e[i].pos > len ||
		    e[i].len > len - e[i].pos)
			return NULL;
		end = e[i].pos + e[i].len;
	}
	return end == len ? h : NULL;	/* nothing after the last entry */
}

void ms_dwarfidx_index_cache(struct ms_dwarfidx *d, const char *path, const uint8_t *bid,
			     uint32_t bid_len)
{
	const struct ic_header *h;
	struct ic_header key;
	size_t len;
	void *map;

	if (!path || !bid_len || bid_len > MS_BUILD_ID_MAX || !d->dsec.info || d->ic_path ||
	    !(d->ic_path = strdup(path)))
		return;
	memcpy(d->ic_bid, bid, bid_len);
	d->ic_bid_len = bid_len;
	ic_key(d, bid, bid_len, &key);
	if (!(map = ms_cache_map(path, IC_DIR_AT, ic_max, &len)))
		return;
	if (!(h = ic_dir_valid(map, len, &key)) || !(d->ic_state = calloc(h->n_entries + 1, 1))) {
		munmap(map, len);
		d->ic_bad = true;
		return;
	}
	d->ic_map = map;
	d->ic_len = len;
	d->ic_n = (uint32_t)h->n_entries;
	d->ic_dir = (const void *)((uint8_t *)map + IC_DIR_AT);
}

/* The entry of the unit whose header is at hdr, or NONE. */
static uint32_t ic_find(const struct ms_dwarfidx *d, uint64_t hdr)
{
	uint32_t lo = 0, hi = d->ic_n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (d->ic_dir[mid].hdr < hdr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->ic_n && d->ic_dir[lo].hdr == hdr ? lo : NONE;
}

/* The parts of an entry's bytes. */
struct ic_parts {
	const struct ic_blob *b;
	const struct range *cu_ranges, *ranges;
	const struct scope *scopes;
	const struct top *tops;
	const struct ic_name *names;
	const struct ms_rkey *rows;
	const uint32_t *files;
	const char *str;
};

/* Split p (len bytes) into its parts: whether the counts add up to len exactly. */
static bool ic_split(const uint8_t *p, uint64_t len, struct ic_parts *o)
{
	const struct ic_blob *b = (const void *)p;
	uint64_t need = sizeof(*b);

	o->b = b;
	/* Each count is 32 bits: the sum cannot overflow 64. */
	o->cu_ranges = (const void *)(p + need);
	need += (uint64_t)b->n_cu_ranges * sizeof(struct range);
	o->scopes = (const void *)(p + need);
	need += (uint64_t)b->n_scopes * sizeof(struct scope);
	o->ranges = (const void *)(p + need);
	need += (uint64_t)b->n_ranges * sizeof(struct range);
	o->tops = (const void *)(p + need);
	need += (uint64_t)b->n_tops * sizeof(struct top);
	o->names = (const void *)(p + need);
	need += (uint64_t)b->n_names * sizeof(struct ic_name);
	o->rows = (const void *)(p + need);
	need += (uint64_t)b->n_rows * sizeof(struct ms_rkey);
	o->files = (const void *)(p + need);
	need += (uint64_t)b->n_files * sizeof(uint32_t);
	o->str = (const char *)(p + need);
	need += b->str_len;
	return round8(need) == len;
}

static bool ic_str_ok(const struct ic_parts *c, uint32_t off)
{
	return off < c->b->str_len;
}

/*
 * Every index and offset of an entry whose CRC held, for unit u of d:
 * whether nothing in it can make a lookup read out of bounds, loop or
 * answer from another unit.
 */
static bool ic_blob_valid(const struct ms_dwarfidx *d, const struct unit *u,
			  const struct ic_parts *c)
{
	const struct ic_blob *b = c->b;
	uint32_t i, n = b->n_scopes;

	if (b->hdr != u->hdr || b->off != u->off || !b->n_cu_ranges ||
	    (b->str_len && c->str[b->str_len - 1]) || (b->flags & ~(IC_LINES | IC_COMP_DIR)) ||
	    ((b->flags & IC_COMP_DIR) && !ic_str_ok(c, b->comp_dir)))
		return false;
	for (i = 0; i < b->n_cu_ranges; i++)
		if (c->cu_ranges[i].lo >= c->cu_ranges[i].hi ||
		    (i && ms_dwi_cmp_range(&c->cu_ranges[i - 1], &c->cu_ranges[i]) > 0))
			return false;
	for (i = 0; i < b->n_ranges; i++)
		if (c->ranges[i].lo >= c->ranges[i].hi)
			return false;
	/*
	 * Scopes are numbered as the walk met them: a parent before its
	 * calls, and each call's next sibling (pushed in front) before it,
	 * so that every chain followed by a lookup strictly moves one way.
	 */
	for (i = 0; i < n; i++) {
		const struct scope *s = &c->scopes[i];

		if (s->off <= u->off || s->off >= d->dsec.info_size ||
		    (s->parent != NONE && s->parent >= i) ||
		    (s->first_child != NONE && (s->first_child <= i || s->first_child >= n ||
						c->scopes[s->first_child].parent != i)) ||
		    (s->next_sibling != NONE && (s->next_sibling >= i || s->parent == NONE ||
						 c->scopes[s->next_sibling].parent != s->parent)) ||
		    !s->n_ranges || s->range > b->n_ranges || s->n_ranges > b->n_ranges - s->range ||
		    s->name > b->n_names ||
		    (s->parent == NONE && (s->call_file || s->call_line)))
			return false;
	}
	for (i = 0; i < b->n_tops; i++) {
		const struct top *t = &c->tops[i];

		if (t->scope >= n || c->scopes[t->scope].parent != NONE || t->lo >= t->hi ||
		    (i && ms_dwi_cmp_top(&c->tops[i - 1], t) > 0))
			return false;
	}
	for (i = 0; i < b->n_names; i++)
		if ((c->names[i].function != NONE && !ic_str_ok(c, c->names[i].function)) ||
		    !ic_str_ok(c, c->names[i].system_name))
			return false;
	if (!(b->flags & IC_LINES))
		return !b->n_rows && !b->n_files && !b->line_off;
	/* A table lines.h read has at least one file (ms_linetab_unknown). */
	if (!b->n_files || !d->sec[SEC_LINE] || b->line_off >= d->sec[SEC_LINE]->d_size)
		return false;
	for (i = 1; i < b->n_rows; i++)
		if (c->rows[i - 1].key > c->rows[i].key)
			return false;
	for (i = 0; i < b->n_files; i++)
		if (c->files[i] != NONE && !ic_str_ok(c, c->files[i]))
			return false;
	return true;
}

/* Take unit u's index from entry e (proved): scopes, ranges, tops, names, comp_dir, lines. */
static int ic_install(struct ms_dwarfidx *d, struct unit *u, const struct ic_parts *c)
{
	const struct ic_blob *b = c->b;
	uint32_t i;

	if (b->n_scopes && !(u->scopes = malloc((size_t)b->n_scopes * sizeof(*u->scopes))))
		return -1;
	if (b->n_scopes)
		memcpy(u->scopes, c->scopes, (size_t)b->n_scopes * sizeof(*u->scopes));
	u->n_scopes = u->alloc_scopes = b->n_scopes;
	for (i = 0; i < u->n_scopes; i++) {
		struct scope *s = &u->scopes[i];
		const struct ic_name *cn;

		if (!s->name)
			continue;
		cn = &c->names[s->name - 1];
		if (!ms_reserve((void **)&d->names, &d->alloc_names, (uint64_t)d->n_names + 1,
				sizeof(*d->names))) {
			free(u->scopes);
			u->scopes = NULL;
			u->n_scopes = u->alloc_scopes = 0;
			return -1;
		}
		d->names[d->n_names++] = (struct name){
			cn->function == NONE ? NULL : c->str + cn->function,
			c->str + cn->system_name, cn->decl_line, cn->entry,
		};
		s->name = d->n_names;
	}
	u->ranges = (struct range *)c->ranges;
	u->n_ranges = b->n_ranges;
	u->tops = (struct top *)c->tops;
	u->n_tops = b->n_tops;
	u->mapped = true;
	u->comp_dir_read = true;
	u->comp_dir = b->flags & IC_COMP_DIR ? c->str + b->comp_dir : NULL;
	if (b->flags & IC_LINES) {
		u->c_lines = true;
		u->c_line_off = b->line_off;
		u->c_rows = c->rows;
		u->c_n_rows = b->n_rows;
		u->c_files = c->files;
		u->c_n_files = b->n_files;
		u->c_str = c->str;
	}
	u->state = UNIT_INDEXED;
	d->stats.units_indexed++;
	d->stats.units_index_cached++;
	d->stats.scopes += u->n_scopes;
	return 0;
}

/*
 * Unit i's index from the cache, when its entry is there and proves
 * intact (see above); else u stays as it is, to be indexed from the DWARF.
 */
void ms_dwi_ic_attach(struct ms_dwarfidx *d, uint32_t i, struct unit *u)
{
	uint32_t e = ic_find(d, u->hdr);
	const struct ic_entry *en;
	struct ic_parts c;

	if (e == NONE || d->ic_state[e] == IC_BAD)
		return;
	en = &d->ic_dir[e];
	if (d->ic_state[e] == IC_UNSEEN) {
		const uint8_t *p = d->ic_map + en->pos;

		if (ms_crc32c(0, p, en->len) != en->crc || !ic_split(p, en->len, &c) ||
		    !ic_blob_valid(d, u, &c)) {
			d->ic_state[e] = IC_BAD;
			d->ic_bad = true;
			return;
		}
		d->ic_state[e] = IC_GOOD;
	} else if (!ic_split(d->ic_map + en->pos, en->len, &c)) {
		return;
	}
	/*
	 * A unit from aranges is still to be checked against its DIE, unless
	 * the entry holds that DIE's ranges and they are aranges'.
	 */
	if (!d->units[i].from_dies) {
		if (c.b->n_cu_ranges != u->n_ar)
			return;
		for (uint32_t k = 0; k < u->n_ar; k++)
			if (c.cu_ranges[k].lo != d->ar[u->ar + k].lo ||
			    c.cu_ranges[k].hi != d->ar[u->ar + k].hi)
				return;
		u->checked = true;
	}
	if (ic_install(d, u, &c) == 0)
		u->ic_entry = e;
}

/*
 * ms_dwi_unit_lines() for a unit whose table is cached: the table read before at
 * that offset when there is one (as without the cache), else the cached
 * one. NULL when libdw answers.
 */
const struct ms_linetab *ms_dwi_cached_lines(struct ms_dwarfidx *d, struct unit *u)
{
	struct tab *t;
	bool refused;

	if ((t = ms_dwi_find_tab(d, u->c_line_off, &refused))) {
		if (refused)
			return NULL;
		u->lines = &t->t;
		u->lines_state = LINES_OURS;
		return u->lines;
	}
	if (!(t = ms_dwi_new_tab(d, u)))
		return NULL;
	t->mapped = true;
	t->t.offset = u->c_line_off;
	if (!(t->t.files = malloc((size_t)u->c_n_files * sizeof(*t->t.files)))) {
		/* Looks refused to later units at this offset: libdw answers them alike. */
		return NULL;
	}
	for (uint32_t i = 0; i < u->c_n_files; i++)
		t->t.files[i] = u->c_files[i] == NONE ? ms_linetab_unknown :
				u->c_str + u->c_files[i];
	t->t.n_files = u->c_n_files;
	t->t.rows = u->c_n_rows ? (struct ms_rkey *)u->c_rows : NULL;
	t->t.n_rows = u->c_n_rows;
	u->lines = &t->t;
	u->lines_state = LINES_OURS;
	return u->lines;
}

/* ---- writing the cache ---- */

/* n more bytes at the end of o, not cleared: NULL when out of memory (o->failed). */
static void *ob_grow(struct obuf *o, size_t n)
{
	void *at;

	if (o->failed)
		return NULL;
	if (n > o->cap - o->len) {
		size_t cap = o->cap ? o->cap : 65536;
		uint8_t *p;

		while (cap - o->len < n) {
			if (cap > SIZE_MAX / 2) {
				o->failed = true;
				return NULL;
			}
			cap *= 2;
		}
		if (!(p = realloc(o->p, cap))) {
			o->failed = true;
			return NULL;
		}
		o->p = p;
		o->cap = cap;
	}
	at = o->p + o->len;
	o->len += n;
	return at;
}

/* n more bytes, zeroed. */
static void *ob_room(struct obuf *o, size_t n)
{
	void *at = ob_grow(o, n);

	if (at)
		memset(at, 0, n);
	return at;
}

static void ob_put(struct obuf *o, const void *p, size_t n)
{
	void *at = ob_grow(o, n);

	if (at && n)
		memcpy(at, p, n);
}

/* Strings of an entry being made: appended to strs, their offsets returned. */
static uint32_t ob_str(struct obuf *strs, const char *s)
{
	size_t at = strs->len;

	ob_put(strs, s, strlen(s) + 1);
	return at > UINT32_MAX - 1 ? (strs->failed = true, 0) : (uint32_t)at;
}

/* Whether unit u (number i) has the ranges of its DIE at hand: into *o (sorted), else false. */
static bool cu_ranges(struct ms_dwarfidx *d, uint32_t i, const struct unit *u, struct obuf *o)
{
	size_t at = o->len;
	uint32_t n = 0;

	if (!d->units[i].from_dies) {
		/* Checked before it was indexed: its DIE's ranges are its aranges. */
		if (!u->checked)
			return false;
		ob_put(o, d->ar + u->ar, (size_t)u->n_ar * sizeof(struct range));
		return u->n_ar > 0 && !o->failed;
	}
	/* Read from the DIEs (ms_dwi_read_units()): its ranges are in the unit list. */
	for (uint32_t k = 0; k < d->n_uranges; k++)
		if (d->uranges[k].unit == i) {
			struct range r = { d->uranges[k].lo, d->uranges[k].hi };

			ob_put(o, &r, sizeof(r));
			n++;
		}
	if (o->failed || !n)
		return false;
	ms_dwi_sort_ranges((struct range *)(o->p + at), n);
	return true;
}

/* Unit i's entry appended to o (8-aligned): 0, or -1 when it cannot be made (nothing kept). */
static int ic_make(struct ms_dwarfidx *d, uint32_t i, struct unit *u, struct obuf *o)
{
	struct obuf strs = { 0 }, names = { 0 };
	struct ic_blob b = { 0 };
	size_t start = o->len, at;
	const char *comp_dir = ms_dwi_unit_comp_dir(d, u);
	uint32_t k, n_names = 0;
	struct tab *t = NULL;

	b.hdr = u->hdr;
	b.off = u->off;
	ob_room(o, sizeof(b));
	at = o->len;
	if (!cu_ranges(d, i, u, o))
		goto fail;
	b.n_cu_ranges = (uint32_t)((o->len - at) / sizeof(struct range));
	if (comp_dir) {
		b.flags |= IC_COMP_DIR;
		b.comp_dir = ob_str(&strs, comp_dir);
	}
	/* Scopes, their names numbered anew. */
	at = o->len;
	ob_put(o, u->scopes, (size_t)u->n_scopes * sizeof(*u->scopes));
	for (k = 0; k < u->n_scopes && !o->failed; k++) {
		struct scope *s = (struct scope *)(o->p + at) + k;
		const struct name *nm;
		struct ic_name cn = { 0 };

		if (!s->name)
			continue;
		nm = &d->names[s->name - 1];
		cn.entry = nm->entry;
		cn.function = nm->function ? ob_str(&strs, nm->function) : NONE;
		cn.system_name = ob_str(&strs, nm->system_name);
		cn.decl_line = nm->decl_line;
		ob_put(&names, &cn, sizeof(cn));
		s->name = ++n_names;
	}
	b.n_scopes = u->n_scopes;
	ob_put(o, u->ranges, (size_t)u->n_ranges * sizeof(*u->ranges));
	b.n_ranges = u->n_ranges;
	for (k = 0; k < u->n_tops; k++) {
		struct top *tp = ob_room(o, sizeof(*tp));

		if (tp) {
			tp->lo = u->tops[k].lo;
			tp->hi = u->tops[k].hi;
			tp->scope = u->tops[k].scope;
		}
	}
	b.n_tops = u->n_tops;
	ob_put(o, names.p, names.len);
	b.n_names = n_names;
	/* Lines only when this unit read the table (see above). */
	if (u->lines_state == LINES_OURS)
		for (k = 0; k < d->n_tabs; k++)
			if (&d->tabs[k]->t == u->lines && d->tabs[k]->reader == u->hdr)
				t = d->tabs[k];
	if (t && t->t.n_files) {
		b.flags |= IC_LINES;
		b.line_off = t->t.offset;
		b.n_rows = t->t.n_rows;
		b.n_files = t->t.n_files;
		ob_put(o, t->t.rows, (size_t)t->t.n_rows * sizeof(*t->t.rows));
		for (k = 0; k < t->t.n_files; k++) {
			uint32_t f = t->t.files[k] == ms_linetab_unknown ? NONE :
				     ob_str(&strs, t->t.files[k]);

			ob_put(o, &f, sizeof(f));
		}
	}
	if (strs.len > UINT32_MAX)
		strs.failed = true;
	b.str_len = (uint32_t)strs.len;
	ob_put(o, strs.p, strs.len);
	ob_room(o, (size_t)(round8(o->len) - o->len));
	if (o->failed || strs.failed || names.failed)
		goto fail;
	memcpy(o->p + start, &b, sizeof(b));
	free(strs.p);
	free(names.p);
	return 0;
fail:
	o->len = start;
	o->failed = false;
	free(strs.p);
	free(names.p);
	return -1;
}

/* One entry of the file to write: an old one (its bytes in the mapping) or one made now. */
enum { FROM_MAP, FROM_MADE, FROM_KEPT };

struct ic_out {
	uint64_t hdr;
	uint64_t pos, len;	/* in the mapping, or in the buffer of entries made */
	uint32_t crc;
	uint8_t from;		/* FROM_* */
	bool used, keep;
};

static int cmp_out(const void *a, const void *b)
{
	const struct ic_out *x = a, *y = b;

	return x->hdr < y->hdr ? -1 : x->hdr > y->hdr;
}

/*
 * Entries for the units indexed or learnt so far (unit i's state u), made
 * into o: one each, in *out (n of them). Units taken from the cache as
 * they were are given as their entries (FROM_MAP); taken[] marks each
 * entry of the file that a unit has here.
 */
static int ic_collect(struct ms_dwarfidx *d, struct obuf *o, uint8_t from, struct ic_out *out,
		      uint8_t *taken)
{
	uint32_t n = 0;

	for (uint32_t i = 0; d->state && i < d->n_units; i++) {
		struct unit *u = d->state[i];
		size_t at = o->len;
		uint32_t old;

		if (!u || u->state != UNIT_INDEXED)
			continue;
		/* An entry of this unit not used (its ranges were not aranges') is replaced. */
		if (taken && d->ic_map && (old = ic_find(d, u->hdr)) != NONE)
			taken[old] = 1;
		if (u->ic_entry != NONE && !u->dirty) {
			const struct ic_entry *e = &d->ic_dir[u->ic_entry];

			if (out)
				out[n++] = (struct ic_out){ e->hdr, e->pos, e->len, e->crc,
							    FROM_MAP, true, false };
			continue;
		}
		if ((!u->fresh && !u->dirty) || ic_make(d, i, u, o) < 0)
			continue;
		if (!out && !ms_reserve((void **)&d->ic_kept_out, &d->alloc_kept,
					(uint64_t)d->n_kept + 1, sizeof(*d->ic_kept_out))) {
			o->len = at;
			continue;
		}
		(out ? &out[n++] : &d->ic_kept_out[d->n_kept++])[0] = (struct ic_out){
			u->hdr, at, o->len - at, ms_crc32c(0, o->p + at, o->len - at), from, true,
			false,
		};
	}
	return (int)n;
}

/* Before ms_dwi_reread_units() drops the units' states: their entries, made now. */
void ms_dwi_ic_keep(struct ms_dwarfidx *d)
{
	if (!d->ic_path || !d->ic_pending ||
	    (!d->ic_kept && !(d->ic_kept = calloc(1, sizeof(*d->ic_kept)))))
		return;
	ic_collect(d, d->ic_kept, FROM_KEPT, NULL, NULL);
}

/* Write the n_keep entries of out kept (sorted) to d's cache path. */
static void ic_write(struct ms_dwarfidx *d, const struct ic_out *out, uint32_t n, uint32_t n_keep,
		     const struct obuf *made)
{
	struct ms_cachefile_out o;
	struct ic_header h;
	struct ic_entry *dir = calloc((size_t)n_keep + 1, sizeof(*dir));
	struct ms_publish pub;
	uint64_t pos = IC_DIR_AT + (uint64_t)n_keep * sizeof(*dir);
	uint32_t i, k = 0;
	int fd;

	if (!dir)
		return;
	for (i = 0; i < n; i++)
		if (out[i].keep) {
			dir[k++] = (struct ic_entry){ out[i].hdr, pos, out[i].len, out[i].crc, 0 };
			pos += out[i].len;
		}
	ic_key(d, d->ic_bid, d->ic_bid_len, &h);
	h.n_entries = n_keep;
	h.dir_crc = ms_crc32c(0, dir, (size_t)n_keep * sizeof(*dir));
	if ((fd = ms_cache_publish(&pub, d->ic_path)) < 0) {
		free(dir);
		return;
	}
	if (ms_cachefile_begin(&o, fd, IC_MAGIC, IC_VERSION, sizeof(h)) < 0 ||
	    ms_cachefile_put(&o, &h, sizeof(h)) < 0 ||
	    ms_cachefile_put(&o, dir, (size_t)n_keep * sizeof(*dir)) < 0)
		goto fail;
	for (i = 0; i < n; i++)
		if (out[i].keep &&
		    ms_cachefile_put(&o, (out[i].from == FROM_MAP ? d->ic_map :
					  out[i].from == FROM_MADE ? made->p : d->ic_kept->p) +
					 out[i].pos, (size_t)out[i].len) < 0)
			goto fail;
	/* pos: past the last entry, the file's length, as written. */
	if (ms_cachefile_end(&o) < 0 || o.len != pos)
		goto fail;
	free(dir);
	pub.cache = true;	/* checked before use: see publish.h */
	ms_publish_commit(&pub);
	return;
fail:
	free(dir);
	ms_publish_abort(&pub);
}

void ms_dwarfidx_save(struct ms_dwarfidx *d)
{
	struct obuf made = { 0 };
	struct ic_out *out = NULL;
	uint8_t *taken = NULL;
	uint32_t n = 0, n_now, cap, i, n_keep = 0;
	uint64_t size = IC_DIR_AT;
	bool made_kept = false;

	/* A file its gate refused taught nothing: the index made in its place saves. */
	if (!d->ic_path || (!d->ic_pending && !d->ic_bad) || ms_dwarfidx_refused(d))
		goto done;
	cap = d->n_units + d->ic_n + d->n_kept;
	if (!(out = calloc((size_t)cap + 1, sizeof(*out))) ||
	    !(taken = calloc((size_t)d->ic_n + 1, 1)))
		goto done;
	/* The units used in this run: new or learnt entries made, the others as they were. */
	n = n_now = (uint32_t)ic_collect(d, &made, FROM_MADE, out, taken);
	/* Those made before the units were read again, unless made again since. */
	qsort(out, n_now, sizeof(*out), cmp_out);
	for (i = 0; i < d->n_kept; i++) {
		const struct ic_out *k = &d->ic_kept_out[i];
		uint32_t old;

		if (bsearch(k, out, n_now, sizeof(*out), cmp_out))
			continue;
		if (d->ic_map && (old = ic_find(d, k->hdr)) != NONE)
			taken[old] = 1;
		out[n++] = *k;
	}
	/* The file's other entries, not known damaged (unchecked ones are checked when used). */
	for (i = 0; i < d->ic_n; i++)
		if (!taken[i] && d->ic_state[i] != IC_BAD) {
			const struct ic_entry *e = &d->ic_dir[i];

			out[n++] = (struct ic_out){ e->hdr, e->pos, e->len, e->crc, FROM_MAP, false,
						    false };
		}
	/* Units used first, then the others, as long as they fit. */
	for (int pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			uint64_t add = sizeof(struct ic_entry) + out[i].len;

			if (out[i].used != !pass || size + add > ic_max)
				continue;
			out[i].keep = true;
			made_kept |= out[i].from != FROM_MAP;
			size += add;
			n_keep++;
		}
	/*
	 * Written when it gains an entry or had a damaged one; else (nothing
	 * new, or nothing new that fits) it stays as it is.
	 */
	if (made_kept || d->ic_bad) {
		qsort(out, n, sizeof(*out), cmp_out);
		ic_write(d, out, n, n_keep, &made);
	}
done:
	/* Once a run. */
	free(d->ic_path);
	d->ic_path = NULL;
	free(taken);
	free(out);
	free(made.p);
}
