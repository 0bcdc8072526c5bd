#include "symbols/symcache.h"

#include <string.h>

#include "symbols/symfile.h"
#include "util/cachelayout.h"

/*
 * 4: the file of symfile.h (the common header's producer and CRCs,
 * util/cachefile.h; the key as bytes).
 */
static const struct ms_symfile_kind kind = { "MSSYMS", 4 };

static int key_part(struct ms_symcache_key *k, int i, const struct ms_symcache_src *src)
{
	if (!src)
		return 0;
	if (!src->build_id_len || src->build_id_len > MS_BUILD_ID_MAX)
		return -1;
	k->files |= (uint8_t)(1u << i);
	k->build_id_len[i] = (uint8_t)src->build_id_len;
	k->size[i] = src->size;
	memcpy(k->build_id[i], src->build_id, src->build_id_len);
	return 0;
}

int ms_symcache_key(struct ms_symcache_key *k, const struct ms_symcache_src *debug,
		    const struct ms_symcache_src *file)
{
	memset(k, 0, sizeof(*k));
	if ((!debug && !file) || key_part(k, 0, debug) < 0 || key_part(k, 1, file) < 0)
		return -1;
	return 0;
}

char *ms_symcache_path(const uint8_t *bid, uint32_t bid_len)
{
	return ms_cache_path(MS_CACHE_SYMS, bid, bid_len);
}

int ms_symcache_load(struct ms_symtab *t, const char *path, const struct ms_symcache_key *k)
{
	return ms_symfile_load(t, path, &kind, k, sizeof(*k));
}

int ms_symcache_store(const struct ms_symtab *t, const char *path, const struct ms_symcache_key *k)
{
	return ms_symfile_store(t, path, &kind, k, sizeof(*k));
}
