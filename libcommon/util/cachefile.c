#include "util/cachefile.h"

#include <string.h>

_Static_assert(sizeof(struct ms_cachefile) == 32 && sizeof(struct ms_cachefile) % 8 == 0,
	       "the common header's layout; the cache's own header stays 8-byte aligned");

/* magic NUL-padded to its 8 bytes. */
static void magic_of(char out[MS_CACHEFILE_MAGIC], const char *magic)
{
	memset(out, 0, MS_CACHEFILE_MAGIC);
	memcpy(out, magic, strnlen(magic, MS_CACHEFILE_MAGIC));
}

void ms_cachefile_init(struct ms_cachefile *h, const char *magic, uint32_t version,
		       uint32_t specific_size, uint64_t file_len)
{
	memset(h, 0, sizeof(*h));
	magic_of(h->magic, magic);
	h->version = version;
	h->abi = MS_CACHEFILE_ABI;
	h->header_size = sizeof(*h);
	h->specific_size = specific_size;
	h->file_len = file_len;
}

const void *ms_cachefile_check(const void *file, size_t len, const char *magic, uint32_t version,
			       uint32_t specific_size, enum ms_cachefile_fault *fault)
{
	const struct ms_cachefile *h = file;
	char want[MS_CACHEFILE_MAGIC];
	enum ms_cachefile_fault why = MS_CACHEFILE_OK;

	magic_of(want, magic);
	/* The magic first: another kind of file is refused as such, whatever follows. */
	if (len < sizeof(*h))
		why = MS_CACHEFILE_SHORT;
	else if (memcmp(h->magic, want, sizeof(want)))
		why = MS_CACHEFILE_BAD_MAGIC;
	else if (h->abi != MS_CACHEFILE_ABI)
		why = MS_CACHEFILE_BAD_ABI;
	else if (h->version != version)
		why = MS_CACHEFILE_BAD_VERSION;
	else if (h->header_size != sizeof(*h))
		why = MS_CACHEFILE_BAD_HEADER_SIZE;
	else if (h->specific_size != specific_size)
		why = MS_CACHEFILE_BAD_SPECIFIC_SIZE;
	else if (len - sizeof(*h) < specific_size)
		why = MS_CACHEFILE_SHORT;
	else if (h->file_len != len)
		why = MS_CACHEFILE_BAD_LENGTH;
	if (fault)
		*fault = why;
	return why == MS_CACHEFILE_OK ? (const uint8_t *)file + sizeof(*h) : NULL;
}
