/* The file both symbol caches share: see symfile.h. */
#include "symbols/symfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/cachedir.h"
#include "util/cachefile.h"
#include "util/crc32c.h"
#include "util/error.h"
#include "util/publish.h"

#define SYMFILE_PAGE 4096
#define SYMFILE_SYMS_OFF SYMFILE_PAGE

/* The cache's own header, after the common one. */
struct symfile_header {
	uint32_t sym_size;
	uint32_t span;
	uint32_t key_len;
	uint32_t zero;
	uint8_t key[MS_SYMFILE_KEY_MAX];	/* key_len bytes, zeros after */
	uint64_t n[MS_SYMS_TIERS];
	uint64_t n_fences;
	uint64_t names_len;
};

_Static_assert(sizeof(struct ms_sym) == 32, "the file's symbol record");
_Static_assert(MS_SYMS_SPAN * sizeof(struct ms_sym) == SYMFILE_PAGE, "a span is a page");
_Static_assert(sizeof(struct ms_cachefile) + sizeof(struct symfile_header) <= SYMFILE_SYMS_OFF,
	       "the headers fit their page");
_Static_assert(sizeof(struct ms_span_check) == 8, "the file's check record");

static uint64_t fences_of(uint64_t n)
{
	return (n + MS_SYMS_SPAN - 1) / MS_SYMS_SPAN;
}

/* Bytes of a tier's symbols in the file: whole pages, so the next tier starts on one. */
static uint64_t tier_bytes(uint64_t n)
{
	return (n * sizeof(struct ms_sym) + SYMFILE_PAGE - 1) / SYMFILE_PAGE * SYMFILE_PAGE;
}

/*
 * The checks of the whole file: header (its CRC, not the body's: the
 * file is checked by parts), key and sizes. Each fence and span is
 * checked when a lookup meets it (symtab.c): a span against its CRC.
 */
static int valid(const uint8_t *map, size_t len, const struct ms_symfile_kind *kind,
		 const void *key, uint32_t key_len, const struct symfile_header **out)
{
	const struct symfile_header *h;
	uint64_t at = SYMFILE_SYMS_OFF, n_all = 0, n_fences = 0, rest;
	int i;

	if (len < SYMFILE_SYMS_OFF ||
	    !(h = ms_cachefile_check_head(map, len, kind->magic, kind->version, sizeof(*h),
					  NULL)) ||
	    h->sym_size != sizeof(struct ms_sym) || h->span != MS_SYMS_SPAN ||
	    h->key_len != key_len || h->zero || memcmp(h->key, key, key_len))
		return -1;
	for (i = 0; i < MS_SYMS_TIERS; i++) {
		if (h->n[i] > UINT32_MAX || h->n[i] > (len - at) / sizeof(struct ms_sym))
			return -1;
		at += tier_bytes(h->n[i]);
		if (at > len)
			return -1;
		n_all += h->n[i];
		n_fences += fences_of(h->n[i]);
	}
	if (!n_all || h->n_fences != n_fences)
		return -1;
	rest = len - at;
	/* A fence and a check per span, then the names: sizes add up exactly. */
	if (n_fences > rest / (sizeof(uint64_t) + sizeof(struct ms_span_check)) ||
	    !h->names_len || h->names_len > UINT32_MAX ||
	    h->names_len != rest - n_fences * (sizeof(uint64_t) + sizeof(struct ms_span_check)))
		return -1;
	/* Every name ends inside the names. */
	if (map[len - 1] != '\0')
		return -1;
	*out = h;
	return 0;
}

int ms_symfile_load(struct ms_symtab *t, const char *path, const struct ms_symfile_kind *kind,
		    const void *key, uint32_t key_len)
{
	const struct symfile_header *h;
	uint8_t *at, *checked;
	uint32_t fence = 0;
	size_t len;
	uint8_t *map = ms_cache_map(path, SYMFILE_SYMS_OFF, (uint64_t)1 << 36, &len);
	int i;

	if (!map)
		return -1;
	if (key_len > MS_SYMFILE_KEY_MAX || valid(map, len, kind, key, key_len, &h) < 0 ||
	    !(checked = calloc(h->n_fences, 1))) {
		munmap(map, len);
		return -1;
	}
	ms_symtab_init(t);
	t->map = map;
	t->map_len = len;
	at = map + SYMFILE_SYMS_OFF;
	for (i = 0; i < MS_SYMS_TIERS; i++) {
		struct ms_symlist *l = &t->tier[i];

		l->syms = (struct ms_sym *)at;
		l->n = l->alloc = (uint32_t)h->n[i];
		l->fence = fence;
		fence += (uint32_t)fences_of(h->n[i]);
		at += tier_bytes(h->n[i]);
	}
	t->fences = (const uint64_t *)at;
	t->n_fences = fence;
	t->checks = (const struct ms_span_check *)(t->fences + fence);
	t->checked = checked;
	t->names = (char *)(t->checks + fence);
	t->names_len = t->names_alloc = h->names_len;
	return 0;
}

/*
 * Span first.. (m symbols) of l as the file has it: no display pointer,
 * each name at *names, where the file's names go on (*names advances).
 * The checksum of the records and of their names in *crc.
 */
static void span_records(const struct ms_symtab *t, const struct ms_symlist *l, uint32_t first,
			 uint32_t m, struct ms_sym *out, uint64_t *names, uint32_t *crc)
{
	uint32_t j, c;

	for (j = 0; j < m; j++) {
		const char *name = ms_symtab_name(t, &l->syms[first + j]);

		out[j] = l->syms[first + j];
		out[j].display = NULL;	/* pointers of this process */
		out[j].name = (uint32_t)*names;
		*names += strlen(name) + 1;
	}
	c = ms_crc32c(0, out, (size_t)m * sizeof(*out));
	for (j = 0; j < m; j++) {
		const char *name = ms_symtab_name(t, &l->syms[first + j]);

		c = ms_crc32c(c, name, strlen(name) + 1);
	}
	*crc = c;
}

/* Write the names of l in the symbols' order through buf (cap bytes, *fill used). */
static int write_names(struct ms_cachefile_out *o, const struct ms_symtab *t,
		       const struct ms_symlist *l, char *buf, size_t cap, size_t *fill)
{
	uint32_t i;

	for (i = 0; i < l->n; i++) {
		const char *name = ms_symtab_name(t, &l->syms[i]);
		size_t len = strlen(name) + 1;

		if (*fill + len > cap) {
			if (ms_cachefile_put(o, buf, *fill) < 0)
				return -1;
			*fill = 0;
		}
		if (len > cap) {
			if (ms_cachefile_put(o, name, len) < 0)
				return -1;
			continue;
		}
		memcpy(buf + *fill, name, len);
		*fill += len;
	}
	return 0;
}

int ms_symfile_store(const struct ms_symtab *t, const char *path,
		     const struct ms_symfile_kind *kind, const void *key, uint32_t key_len)
{
	struct symfile_header h = { 0 };
	struct ms_cachefile_out out;
	union {
		uint8_t page[SYMFILE_PAGE];
		struct ms_sym syms[MS_SYMS_SPAN];
		uint64_t fences[SYMFILE_PAGE / sizeof(uint64_t)];
	} buf;
	struct ms_span_check *checks = NULL;
	struct ms_publish pub;
	uint64_t names = 0, n_fences = 0;
	uint32_t c, f;
	size_t fill = 0;
	int fd, i;

	if (t->map || !ms_symtab_count(t) || key_len > MS_SYMFILE_KEY_MAX)
		return -1;
	for (i = 0; i < MS_SYMS_TIERS; i++)
		n_fences += fences_of(t->tier[i].n);
	if (!(checks = malloc(n_fences * sizeof(*checks))))
		return -1;
	/* The checks first: a span's covers its records as written and its names' run. */
	for (i = 0, c = 0; i < MS_SYMS_TIERS; i++) {
		const struct ms_symlist *l = &t->tier[i];

		for (uint32_t first = 0; first < l->n; first += MS_SYMS_SPAN, c++) {
			uint32_t m = l->n - first < MS_SYMS_SPAN ? l->n - first : MS_SYMS_SPAN;

			span_records(t, l, first, m, buf.syms, &names, &checks[c].crc);
			if (names > UINT32_MAX) {
				free(checks);
				return -1;
			}
			checks[c].names_end = (uint32_t)names;
		}
	}
	h.sym_size = sizeof(struct ms_sym);
	h.span = MS_SYMS_SPAN;
	h.key_len = key_len;
	memcpy(h.key, key, key_len);
	for (i = 0; i < MS_SYMS_TIERS; i++)
		h.n[i] = t->tier[i].n;
	h.n_fences = n_fences;
	h.names_len = names;
	if ((fd = ms_cache_publish(&pub, path)) < 0) {
		free(checks);
		return -1;
	}
	/* The headers, zeros up to the symbols' page. */
	memset(buf.page, 0, sizeof(buf.page));
	memcpy(buf.page, &h, sizeof(h));
	if (ms_cachefile_begin(&out, fd, kind->magic, kind->version, sizeof(h)) < 0 ||
	    ms_cachefile_put(&out, buf.page, SYMFILE_SYMS_OFF - sizeof(struct ms_cachefile)) < 0)
		goto fail;
	names = 0;
	for (i = 0; i < MS_SYMS_TIERS; i++) {
		const struct ms_symlist *l = &t->tier[i];

		for (uint32_t first = 0; first < l->n; first += MS_SYMS_SPAN) {
			uint32_t m = l->n - first < MS_SYMS_SPAN ? l->n - first : MS_SYMS_SPAN;
			uint32_t crc;

			/* A short last span is padded to its page: the next tier starts on one. */
			memset(buf.page, 0, sizeof(buf.page));
			span_records(t, l, first, m, buf.syms, &names, &crc);
			if (ms_cachefile_put(&out, buf.page, m == MS_SYMS_SPAN ? sizeof(buf.page) :
					 tier_bytes(m)) < 0)
				goto fail;
		}
	}
	fill = 0;
	for (i = 0; i < MS_SYMS_TIERS; i++) {
		const struct ms_symlist *l = &t->tier[i];
		uint32_t n = (uint32_t)fences_of(l->n);

		for (f = 0; f < n; f++) {
			buf.fences[fill++] = l->syms[f * MS_SYMS_SPAN].start;
			if (fill == sizeof(buf.fences) / sizeof(*buf.fences)) {
				if (ms_cachefile_put(&out, buf.fences, sizeof(buf.fences)) < 0)
					goto fail;
				fill = 0;
			}
		}
	}
	if (fill && ms_cachefile_put(&out, buf.fences, fill * sizeof(*buf.fences)) < 0)
		goto fail;
	if (ms_cachefile_put(&out, checks, n_fences * sizeof(*checks)) < 0)
		goto fail;
	fill = 0;
	for (i = 0; i < MS_SYMS_TIERS; i++)
		if (write_names(&out, t, &t->tier[i], (char *)buf.page, sizeof(buf.page), &fill) < 0)
			goto fail;
	if ((fill && ms_cachefile_put(&out, buf.page, fill) < 0) || ms_cachefile_end(&out) < 0)
		goto fail;
	free(checks);
	/* A cache (checked before use), mapped by every later run: see publish.h. */
	pub.cache = true;
	return ms_publish_commit(&pub);
fail:
	ms_warn("cannot write the symbol cache '%s': %s; the next run reads the symbols "
		"again (check the space and permissions of the cache directory)", path,
		errno ? strerror(errno) : "a write wrote nothing");
	free(checks);
	ms_publish_abort(&pub);
	return -1;
}
