#include "perf/kernel.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "util/bits.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

uint32_t ms_notes_build_id(const uint8_t *notes, size_t len, uint8_t out[MS_BUILD_ID_MAX])
{
	size_t off = 0;

	/* Elf_Nhdr: namesz, descsz, type; name and desc each padded to 4 bytes. */
	while (len - off >= 12) {
		uint32_t namesz = ms_load32(notes + off), descsz = ms_load32(notes + off + 4);
		uint32_t type = ms_load32(notes + off + 8);
		size_t name_pad = ((size_t)namesz + 3) & ~(size_t)3;
		size_t desc_pad = ((size_t)descsz + 3) & ~(size_t)3;
		const uint8_t *name = notes + off + 12;

		if (name_pad > len - off - 12 || desc_pad > len - off - 12 - name_pad)
			return 0;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(name, "GNU", 4) && descsz) {
			uint32_t n = descsz < MS_BUILD_ID_MAX ? descsz : MS_BUILD_ID_MAX;

			memcpy(out, name + name_pad, n);
			return n;
		}
		off += 12 + name_pad + desc_pad;
	}
	return 0;
}

uint32_t ms_kernel_build_id(const char *path, uint8_t out[MS_BUILD_ID_MAX])
{
	uint8_t buf[4096];
	size_t len = 0;
	ssize_t n;
	int fd = open(path ? path : MS_KERNEL_NOTES, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return 0;
	while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	close(fd);
	return ms_notes_build_id(buf, len, out);
}

void ms_build_id_hex(const uint8_t *bid, uint32_t len, char out[MS_BUILD_ID_HEX])
{
	static const char digits[] = "0123456789abcdef";
	uint32_t i;

	for (i = 0; i < len && i < MS_BUILD_ID_MAX; i++) {
		out[2 * i] = digits[bid[i] >> 4];
		out[2 * i + 1] = digits[bid[i] & 15];
	}
	out[2 * i] = '\0';
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

uint32_t ms_build_id_unhex(const char *hex, size_t len, uint8_t out[MS_BUILD_ID_MAX])
{
	if (!len || len % 2 || len > 2 * MS_BUILD_ID_MAX)
		return 0;
	for (size_t i = 0; i < len; i += 2) {
		int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return 0;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return (uint32_t)(len / 2);
}
