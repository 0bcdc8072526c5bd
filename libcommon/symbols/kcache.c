#include "symbols/kcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf/kernel.h"
#include "util/cachefile.h"
#include "util/cachelayout.h"
#include "util/publish.h"

/* 4: the common header's producer and CRCs (util/cachefile.h). */
#define KCACHE_VERSION 4
#define KCACHE_MAGIC "MSKSYMS"
#define KEY_BOOT_OFF 24		/* key: [0] build id length, [1..] build id */
#define KEY_BOOT_LEN 40
#define KEY_MODS_OFF 64

/* The cache's own header, after the common one. */
struct kcache_header {
	uint32_t sym_size;
	uint32_t zero;
	uint8_t key[MS_KCACHE_KEY];
	uint64_t n_syms;
	uint64_t names_len;
	uint64_t n_fences;
};

/*
 * The symbols start at one page, so that each span of them (the symbols
 * one fence indexes) is one page of the map: a constant of the file, not
 * the host's page size.
 */
#define KCACHE_SYMS_OFF 4096
_Static_assert(sizeof(struct ms_sym) == 32, "the file's symbol record");
_Static_assert(MS_SYMS_SPAN * sizeof(struct ms_sym) == KCACHE_SYMS_OFF, "a span is a page");
_Static_assert(sizeof(struct ms_cachefile) + sizeof(struct kcache_header) <= KCACHE_SYMS_OFF,
	       "the headers fit their page");

/* One fence per span, the last one maybe partial. */
static uint64_t n_fences_of(uint64_t n)
{
	return (n + MS_SYMS_SPAN - 1) / MS_SYMS_SPAN;
}

/* Read a small file whole into buf (NUL-terminated); its length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (len + 1 < cap && (n = read(fd, buf + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

static uint64_t fnv1a(uint64_t h, const char *p, size_t n)
{
	while (n--) {
		h ^= (unsigned char)*p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * Hash of each module's name, size, state and address (fields 1, 2, 5, 6
 * of /proc/modules): the use counts and users change while the kernel's
 * symbols do not. No file (a kernel without modules) hashes as empty.
 */
static int modules_hash(const char *path, uint64_t *out)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	uint64_t h = 0xcbf29ce484222325ULL;

	if (!f) {
		*out = h;
		return errno == ENOENT ? 0 : -1;
	}
	while (getline(&line, &cap, f) > 0) {
		char *p = line;
		int field;

		for (field = 1; field <= 6 && *p && *p != '\n'; field++) {
			size_t len = strcspn(p, " \n");

			if (field == 1 || field == 2 || field == 5 || field == 6)
				h = fnv1a(h, p, len + 1);
			p += len;
			p += *p == ' ';
		}
		h = fnv1a(h, "\n", 1);
	}
	free(line);
	fclose(f);
	*out = h;
	return 0;
}

int ms_kcache_key(struct ms_kcache_key *k, const char *notes, const char *boot_id,
		  const char *modules)
{
	uint8_t bid[MS_BUILD_ID_MAX];
	char boot[KEY_BOOT_LEN + 8];
	uint32_t bid_len;
	ssize_t n;
	uint64_t h;

	memset(k, 0, sizeof(*k));
	bid_len = ms_kernel_build_id(notes, bid);
	if (!bid_len || bid_len > KEY_BOOT_OFF - 1)
		return -1;
	n = read_small(boot_id ? boot_id : "/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	if (n <= 0)
		return -1;
	if (modules_hash(modules ? modules : "/proc/modules", &h) < 0)
		return -1;
	k->bytes[0] = (uint8_t)bid_len;
	memcpy(k->bytes + 1, bid, bid_len);
	memcpy(k->bytes + KEY_BOOT_OFF, boot, (size_t)n < KEY_BOOT_LEN ? (size_t)n : KEY_BOOT_LEN);
	memcpy(k->bytes + KEY_MODS_OFF, &h, sizeof(h));
	return 0;
}

char *ms_kcache_path(void)
{
	return ms_cache_path(MS_CACHE_KALLSYMS, NULL, 0);
}

/*
 * The checks of the whole file: its header, key and sizes. Each symbol and
 * fence is checked when a lookup meets it (ms_symtab_lookup_checked()):
 * checking all of them here read 4 MB for the few hundred a profile names.
 */
static int valid(const uint8_t *map, size_t len, const struct ms_kcache_key *k,
		 uint64_t *n_out, uint64_t *names_len_out)
{
	const struct kcache_header *h;
	const char *names;
	uint64_t n, n_fences, names_len, rest;

	if (len < KCACHE_SYMS_OFF ||
	    !(h = ms_cachefile_check(map, len, KCACHE_MAGIC, KCACHE_VERSION, sizeof(*h), NULL)) ||
	    h->sym_size != sizeof(struct ms_sym) || h->zero || memcmp(h->key, k->bytes, MS_KCACHE_KEY))
		return -1;
	n = h->n_syms;
	n_fences = h->n_fences;
	names_len = h->names_len;
	if (!n || n > UINT32_MAX || n > (len - KCACHE_SYMS_OFF) / sizeof(struct ms_sym) ||
	    n_fences != n_fences_of(n))
		return -1;
	rest = len - KCACHE_SYMS_OFF - n * sizeof(struct ms_sym);
	if (n_fences > rest / sizeof(uint64_t) || !names_len || names_len > UINT32_MAX ||
	    names_len != rest - n_fences * sizeof(uint64_t))
		return -1;
	names = (const char *)(map + len - names_len);
	/* Every name ends inside the names: a symbol's offset is all there is to check. */
	if (names[names_len - 1] != '\0')
		return -1;
	*n_out = n;
	*names_len_out = names_len;
	return 0;
}

int ms_kcache_load(struct ms_symtab *t, const char *path, const struct ms_kcache_key *k)
{
	uint64_t n, names_len;
	size_t len;
	void *map = ms_cache_map(path, KCACHE_SYMS_OFF, (uint64_t)1 << 32, &len);

	if (!map)
		return -1;
	if (valid(map, len, k, &n, &names_len) < 0) {
		munmap(map, len);
		return -1;
	}
	ms_symtab_init(t);
	t->map = map;
	t->map_len = len;
	t->tier[0].syms = (struct ms_sym *)((uint8_t *)map + KCACHE_SYMS_OFF);
	t->tier[0].n = t->tier[0].alloc = (uint32_t)n;
	t->fences = (const uint64_t *)(t->tier[0].syms + n);
	t->n_fences = (uint32_t)n_fences_of(n);
	t->names = (char *)(t->fences + t->n_fences);
	t->names_len = t->names_alloc = names_len;
	return 0;
}

int ms_kcache_store(const struct ms_symtab *t, const char *path, const struct ms_kcache_key *k)
{
	const struct ms_symlist *l = &t->tier[0];
	struct kcache_header h = { 0 };
	struct ms_cachefile_out out;
	union {
		uint8_t head[KCACHE_SYMS_OFF];
		struct ms_sym syms[512];
		uint64_t fences[512];
	} buf;
	struct ms_publish pub;
	uint32_t i, n_fences;
	int fd;

	if (!l->n || t->tier[1].n || t->tier[2].n || !t->names_len)
		return -1;
	h.sym_size = sizeof(struct ms_sym);
	memcpy(h.key, k->bytes, MS_KCACHE_KEY);
	h.n_syms = l->n;
	h.names_len = t->names_len;
	h.n_fences = n_fences = (uint32_t)n_fences_of(l->n);
	if ((fd = ms_cache_publish(&pub, path)) < 0)
		return -1;
	/* The headers, zeros up to the symbols' page. */
	memset(buf.head, 0, sizeof(buf.head));
	memcpy(buf.head, &h, sizeof(h));
	if (ms_cachefile_begin(&out, fd, KCACHE_MAGIC, KCACHE_VERSION, sizeof(h)) < 0 ||
	    ms_cachefile_put(&out, buf.head, KCACHE_SYMS_OFF - sizeof(struct ms_cachefile)) < 0)
		goto fail;
	for (i = 0; i < l->n; i += 512) {
		uint32_t j, m = l->n - i < 512 ? l->n - i : 512;

		memcpy(buf.syms, l->syms + i, m * sizeof(*buf.syms));
		for (j = 0; j < m; j++)
			buf.syms[j].display = NULL;	/* pointers of this process */
		if (ms_cachefile_put(&out, buf.syms, m * sizeof(*buf.syms)) < 0)
			goto fail;
	}
	for (i = 0; i < n_fences; i += 512) {
		uint32_t j, m = n_fences - i < 512 ? n_fences - i : 512;

		for (j = 0; j < m; j++)
			buf.fences[j] = l->syms[(i + j) * MS_SYMS_SPAN].start;
		if (ms_cachefile_put(&out, buf.fences, m * sizeof(*buf.fences)) < 0)
			goto fail;
	}
	if (ms_cachefile_put(&out, t->names, t->names_len) < 0 || ms_cachefile_end(&out) < 0)
		goto fail;
	/* A cache (checked before use), mapped by every later run: see publish.h. */
	pub.cache = true;
	return ms_publish_commit(&pub);
fail:
	ms_publish_abort(&pub);
	return -1;
}
