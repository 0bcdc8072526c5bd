#include "symbols/kcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/kernel.h"
#include "symbols/symfile.h"
#include "util/cachelayout.h"

/*
 * 5: the file of symfile.h (the common header's producer and CRCs,
 * util/cachefile.h; a check per span, the names in the symbols' order).
 */
static const struct ms_symfile_kind kind = { "MSKSYMS", 5 };

#define KEY_BOOT_OFF 24		/* key: [0] build id length, [1..] build id */
#define KEY_BOOT_LEN 40
#define KEY_MODS_OFF 64

_Static_assert(MS_KCACHE_KEY <= MS_SYMFILE_KEY_MAX, "the key fits the file's");

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

int ms_kcache_load(struct ms_symtab *t, const char *path, const struct ms_kcache_key *k)
{
	return ms_symfile_load(t, path, &kind, k->bytes, MS_KCACHE_KEY);
}

int ms_kcache_store(const struct ms_symtab *t, const char *path, const struct ms_kcache_key *k)
{
	/* The kernel's symbols are one tier (symtab.c reads them so). */
	if (t->tier[1].n || t->tier[2].n)
		return -1;
	return ms_symfile_store(t, path, &kind, k->bytes, MS_KCACHE_KEY);
}
