/*
 * The header every on-disk cache file starts with (the kernel's symbols,
 * module symbol tables, indexed DWARF units, CFI rows): one fixed prefix,
 * checked the same way for all of them, then the cache's own header.
 *
 * Layout (host byte order: a cache is written and read on one host):
 *   struct ms_cachefile (32 bytes, at offset 0)
 *     magic          8 bytes naming the cache's kind, NUL-padded
 *     version        u32, the cache's format version
 *     abi            u32 MS_CACHEFILE_ABI: the writer's byte order, pointer
 *                    size and alignment of u64 (the layout of the cache's
 *                    structs), read back as written only on a like host
 *     header_size    u32 sizeof(struct ms_cachefile)
 *     specific_size  u32, the size of the cache's own header, which follows
 *                    at offset header_size
 *     file_len       u64, the whole file's length
 *   the cache's own header (keys, counts, build ids), then its payload.
 *
 * A cache that fails any check is simply dropped and rebuilt: never an
 * error for the user. ms_cachefile_check() says why in an enum that a
 * caller may count or ignore; it prints nothing.
 */
#ifndef MS_UTIL_CACHEFILE_H
#define MS_UTIL_CACHEFILE_H

#include <stddef.h>
#include <stdint.h>

#define MS_CACHEFILE_MAGIC 8

/*
 * 0x4d53 ("MS"), the pointer size, the alignment of u64 (4 on i386, where
 * the caches' structs are laid out otherwise): no byte order reads it as
 * another's.
 */
#define MS_CACHEFILE_ABI                                                   \
	((uint32_t)0x4d530000u | (uint32_t)sizeof(void *) << 8 |         \
	 (uint32_t)_Alignof(uint64_t))

struct ms_cachefile {
	char magic[MS_CACHEFILE_MAGIC];
	uint32_t version;
	uint32_t abi;
	uint32_t header_size;
	uint32_t specific_size;
	uint64_t file_len;
};

/* Why a file was refused (MS_CACHEFILE_OK: it was not). */
enum ms_cachefile_fault {
	MS_CACHEFILE_OK,
	MS_CACHEFILE_SHORT,		/* shorter than the two headers */
	MS_CACHEFILE_BAD_MAGIC,		/* another kind of file */
	MS_CACHEFILE_BAD_ABI,		/* written by another kind of host */
	MS_CACHEFILE_BAD_VERSION,	/* another version of the format */
	MS_CACHEFILE_BAD_HEADER_SIZE,	/* a common header of another size */
	MS_CACHEFILE_BAD_SPECIFIC_SIZE,	/* the cache's own header of another size */
	MS_CACHEFILE_BAD_LENGTH,	/* file_len is not the file's length */
};

/*
 * Fill h for a file of kind magic (at most 8 bytes, a string shorter than
 * 8 is NUL-padded), format version, whose own header of specific_size
 * bytes follows h and whose whole length is file_len bytes.
 */
void ms_cachefile_init(struct ms_cachefile *h, const char *magic, uint32_t version,
		       uint32_t specific_size, uint64_t file_len);
/*
 * Check file (len bytes, mapped or read whole, 8-byte aligned) against
 * magic, version and specific_size as ms_cachefile_init() was given them,
 * this host's ABI word and len. Returns the cache's own header (at
 * sizeof(struct ms_cachefile)), or NULL with the reason in *fault (fault
 * may be NULL). Only the common prefix is checked: the cache checks its
 * own header and payload.
 */
const void *ms_cachefile_check(const void *file, size_t len, const char *magic, uint32_t version,
			       uint32_t specific_size, enum ms_cachefile_fault *fault);

#endif
