/*
 * CRC-32C (Castagnoli, reflected, as iSCSI and ext4 use it) of a buffer:
 * the check of the symbolizer's cached indexes (dwarfidx.c), verified on
 * every first use of a cached part, so it must cost little. On x86-64
 * with SSE4.2 it runs on the crc32 instruction (about 0.2 instructions a
 * byte, where a table costs five or more); elsewhere a table gives the
 * same values.
 */
#ifndef MS_UTIL_CRC32C_H
#define MS_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* crc continues a previous call's result; 0 to start. */
uint32_t ms_crc32c(uint32_t crc, const void *buf, size_t len);

/* The table's answer, whatever the machine has: for tests. */
uint32_t ms_crc32c_portable(uint32_t crc, const void *buf, size_t len);

#endif
