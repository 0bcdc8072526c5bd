/*
 * The running kernel's identity: its GNU build id, from the notes the
 * kernel exports (/sys/kernel/notes, the raw ELF notes of vmlinux).
 * ms-collect records it (info "kernel-build-id") so that the stages after
 * it know the kernel that ran, wherever they run.
 */
#ifndef MS_PERF_KERNEL_H
#define MS_PERF_KERNEL_H

#include <stdint.h>

#include "stream/records.h"

#define MS_KERNEL_NOTES "/sys/kernel/notes"

/*
 * Read the build id from the notes file at path (NULL: MS_KERNEL_NOTES).
 * Returns its length (1..MS_BUILD_ID_MAX, longer ones cut), or 0 when the
 * file is unreadable or holds none. No message: the caller decides.
 */
uint32_t ms_kernel_build_id(const char *path, uint8_t out[MS_BUILD_ID_MAX]);
/* The same from notes already in memory. */
uint32_t ms_notes_build_id(const uint8_t *notes, size_t len, uint8_t out[MS_BUILD_ID_MAX]);

/* A build id as lowercase hex, NUL-terminated. */
#define MS_BUILD_ID_HEX (2 * MS_BUILD_ID_MAX + 1)
void ms_build_id_hex(const uint8_t *bid, uint32_t len, char out[MS_BUILD_ID_HEX]);
/*
 * The build id that len lowercase hex digits at hex spell: its length, or
 * 0 when they are not an even number of digits from 2 to 40.
 */
uint32_t ms_build_id_unhex(const char *hex, size_t len, uint8_t out[MS_BUILD_ID_MAX]);

#endif
