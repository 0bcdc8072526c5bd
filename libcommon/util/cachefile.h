/*
 * The header every on-disk cache file starts with (the kernel's symbols,
 * module symbol tables, lists and indexes of DWARF units, CFI rows): one
 * fixed prefix, checked the same way for all of them, then the cache's own
 * header.
 *
 * Layout (host byte order: a cache is written and read on one host; see
 * ms_cachefile_append_trailer() for the one cache that keeps it at its end):
 *   struct ms_cachefile (64 bytes, at offset 0)
 *     magic          8 bytes naming the cache's kind, NUL-padded
 *     version        u32, the cache's format version
 *     abi            u32 MS_CACHEFILE_ABI: the writer's byte order, pointer
 *                    size and alignment of u64 (the layout of the cache's
 *                    structs), read back as written only on a like host
 *     header_size    u32 sizeof(struct ms_cachefile)
 *     specific_size  u32, the size of the cache's own header, which follows
 *                    at offset header_size
 *     file_len       u64, the whole file's length
 *     producer       24 bytes: the build id of the program that wrote the
 *                    file (util/selfid.h), NUL-padded, or "v" and
 *                    PACKAGE_VERSION when it has none
 *     head_crc       u32 CRC-32C of the cache's own header
 *     body_crc       u32 CRC-32C of everything after this header, from the
 *                    cache's own header to the end of the file
 *   the cache's own header (keys, counts, build ids), then its payload.
 *
 * Why the producer: a cache holds structs and rules as one build of the
 * code made them, and what a field means may change without its size or
 * the format version changing. The build id of the writing program
 * changes with every build of its code (and of the compiler and flags that
 * built it) and costs nothing to get; a version string changes only at a
 * release, a source hash would miss the compiler. So a file is read only by
 * the build that wrote it: after an upgrade or rebuild each cache is made
 * once more. Each cache has one kind of writer and reader (ms-unwind's CFI
 * rows, ms-symbolize's others), so two programs never fight over a file.
 *
 * Why the CRCs: a cache is trusted for answers, and a damaged byte that
 * still passes every structural check (a register's offset, a symbol's
 * size, a letter of a name) would change them silently. A cache read whole
 * is checked whole (ms_cachefile_check()). A large cache that is mapped and
 * read only in the parts a run needs (the symbol tables, the indexed
 * units) is checked by ms_cachefile_check_head() instead: its own header
 * here, then each part against a CRC that the cache keeps for it, before
 * the part is used; body_crc is written all the same.
 *
 * A cache that fails any check is simply dropped and rebuilt: never an
 * error for the user. The checks say why in an enum that a caller may
 * count or ignore; they print nothing.
 */
#ifndef MS_UTIL_CACHEFILE_H
#define MS_UTIL_CACHEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MS_CACHEFILE_MAGIC 8
#define MS_CACHEFILE_PRODUCER 24

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
	uint8_t producer[MS_CACHEFILE_PRODUCER];
	uint32_t head_crc;
	uint32_t body_crc;
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
	MS_CACHEFILE_BAD_PRODUCER,	/* written by another build */
	MS_CACHEFILE_BAD_CRC,		/* damaged: a CRC does not match */
};

/* This build's producer field (see above). */
const uint8_t *ms_cachefile_producer(void);

/*
 * Fill h for a file of kind magic (at most 8 bytes, a string shorter than
 * 8 is NUL-padded), format version, whose own header of specific_size
 * bytes follows h and whose whole length is file_len bytes, written by
 * this build. The CRCs are left 0: ms_cachefile_seal() sets them, or
 * ms_cachefile_end() does for a file written by parts.
 */
void ms_cachefile_init(struct ms_cachefile *h, const char *magic, uint32_t version,
		       uint32_t specific_size, uint64_t file_len);
/*
 * Set the CRCs of the file (len bytes, in memory, starting with a header
 * ms_cachefile_init() filled) to its contents: for writers that build a
 * file in memory, and tests that damage one on purpose and want the
 * structural checks, not the CRC, to meet the damage.
 */
void ms_cachefile_seal(void *file, size_t len);
/*
 * Check file (len bytes, mapped or read whole, 8-byte aligned) against
 * magic, version and specific_size as ms_cachefile_init() was given them,
 * this host's ABI word, this build's producer, len, and both CRCs.
 * Returns the cache's own header (at sizeof(struct ms_cachefile)), or NULL
 * with the reason in *fault (fault may be NULL). The cache then checks its
 * own header's values and its payload's structure.
 */
const void *ms_cachefile_check(const void *file, size_t len, const char *magic, uint32_t version,
			       uint32_t specific_size, enum ms_cachefile_fault *fault);
/*
 * The same without body_crc, for a cache that checks each part of its
 * payload against a CRC of its own before the part is used (see above):
 * only the cache's own header is checked, against head_crc.
 */
const void *ms_cachefile_check_head(const void *file, size_t len, const char *magic,
				    uint32_t version, uint32_t specific_size,
				    enum ms_cachefile_fault *fault);

/*
 * A cache whose own format fixes its start (an ELF file: the inflated
 * debug copies, elf/dcache.h) carries the header at its end instead, a
 * trailer with no own header (specific_size 0, head_crc 0) whose body_crc
 * covers everything before it and whose file_len counts it too.
 * ms_cachefile_append_trailer() reads back what fd holds (a new file,
 * written whole) and appends the trailer: 0, or -1 with errno.
 * ms_cachefile_check_trailer() checks a file read whole, as above.
 */
int ms_cachefile_append_trailer(int fd, const char *magic, uint32_t version);
bool ms_cachefile_check_trailer(const void *file, size_t len, const char *magic,
				uint32_t version, enum ms_cachefile_fault *fault);

/*
 * A cache file being written by parts (the usual way: a file too large to
 * build in memory), CRCs computed as it goes:
 *   ms_cachefile_begin(&o, fd, magic, version, specific_size);
 *   ms_cachefile_put(&o, &own_header, specific_size);  then the payload
 *   ms_cachefile_end(&o);     the header, written at offset 0
 * fd is a new file opened for writing at offset 0 (ms_cache_publish(),
 * util/cachedir.h).
 */
struct ms_cachefile_out {
	int fd;
	bool err;		/* a write failed: end() fails, errno kept */
	int err_no;
	struct ms_cachefile h;	/* magic, version, specific_size so far */
	uint64_t len;		/* bytes written, the header's place included */
	uint32_t crc;		/* of the body so far */
};

/* Write h's place (zeros for now). 0, or -1 with errno. */
int ms_cachefile_begin(struct ms_cachefile_out *o, int fd, const char *magic, uint32_t version,
		       uint32_t specific_size);
/* Append len bytes at p. 0, or -1 with errno (and every later call fails). */
int ms_cachefile_put(struct ms_cachefile_out *o, const void *p, size_t len);
/* Write the header, its lengths and CRCs of what was put. 0, or -1 with errno. */
int ms_cachefile_end(struct ms_cachefile_out *o);

#endif
