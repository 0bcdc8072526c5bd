/* The names of microscope's cache folder: see cachelayout.h. */
#include "util/cachelayout.h"

#include <stdio.h>
#include <string.h>

#include "util/cachedir.h"

/* Each kind's name: folder, then build id in hex (unless fixed), then suffix. */
static const struct {
	const char *dir;	/* "" for the top */
	const char *name;	/* a fixed name, or NULL: ID + suffix */
	const char *suffix;
} kinds[MS_CACHE_KINDS] = {
	[MS_CACHE_KALLSYMS] = { "", "kallsyms", NULL },
	[MS_CACHE_DEBUG_COPY] = { "debug", NULL, ".debug" },
	[MS_CACHE_SYMS] = { "debug", NULL, ".syms" },
	[MS_CACHE_UNITS] = { "debug", NULL, ".units" },
	[MS_CACHE_INDEX] = { "debug", NULL, ".index" },
	[MS_CACHE_CFI_ROWS] = { "cfi", NULL, ".rows" },
};

#define TMP_MARK ".tmp-"
#define TMP_RANDOM 6

char *ms_cache_path(enum ms_cache_kind kind, const uint8_t *id, uint32_t id_len)
{
	static const char hex[] = "0123456789abcdef";
	char name[16 + 2 * MS_CACHE_ID_MAX + 16];
	size_t o;

	if ((unsigned)kind >= MS_CACHE_KINDS)
		return NULL;
	if (kinds[kind].name)
		return ms_cache_file(kinds[kind].name);
	if (!id_len || id_len > MS_CACHE_ID_MAX)
		return NULL;
	o = (size_t)snprintf(name, sizeof(name), "%s/", kinds[kind].dir);
	for (uint32_t i = 0; i < id_len; i++) {
		name[o++] = hex[id[i] >> 4];
		name[o++] = hex[id[i] & 15];
	}
	snprintf(name + o, sizeof(name) - o, "%s", kinds[kind].suffix);
	return ms_cache_file(name);
}

bool ms_cache_dir_ours(const char *name)
{
	for (int k = 0; k < MS_CACHE_KINDS; k++)
		if (kinds[k].dir[0] && !strcmp(name, kinds[k].dir))
			return true;
	return false;
}

/* Whether the len bytes at p are a build id in lowercase hex. */
static bool id_hex(const char *p, size_t len)
{
	if (!len || len % 2 || len > 2 * MS_CACHE_ID_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return false;
	return true;
}

/* Whether the len bytes at p are kind k's name in its folder. */
static bool kind_name(int k, const char *p, size_t len)
{
	size_t sl;

	if (kinds[k].name)
		return len == strlen(kinds[k].name) && !memcmp(p, kinds[k].name, len);
	sl = strlen(kinds[k].suffix);
	return len > sl && !memcmp(p + len - sl, kinds[k].suffix, sl) && id_hex(p, len - sl);
}

/* Whether the last bytes of name (len) are a publication's ".tmp-XXXXXX". */
static bool tmp_tail(const char *name, size_t len)
{
	const size_t tail = sizeof(TMP_MARK) - 1 + TMP_RANDOM;

	if (len <= tail || memcmp(name + len - tail, TMP_MARK, sizeof(TMP_MARK) - 1))
		return false;
	for (size_t i = len - TMP_RANDOM; i < len; i++) {
		char c = name[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
			return false;
	}
	return true;
}

bool ms_cache_name_ours(const char *dir, const char *name, bool *tmp)
{
	size_t len = strlen(name);

	*tmp = tmp_tail(name, len);
	if (*tmp)
		len -= sizeof(TMP_MARK) - 1 + TMP_RANDOM;
	for (int k = 0; k < MS_CACHE_KINDS; k++)
		if (!strcmp(dir, kinds[k].dir) && kind_name(k, name, len))
			return true;
	return false;
}
