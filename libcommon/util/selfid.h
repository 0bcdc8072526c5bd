/*
 * The running program's identity: the GNU build id of its executable, as
 * the linker wrote it (-Wl,--build-id, configure.ac). A hash of the code
 * and of how it was built, so it changes with every build that changes a
 * byte of the program, and is equal for two copies of one build.
 */
#ifndef MS_UTIL_SELFID_H
#define MS_UTIL_SELFID_H

#include <stddef.h>
#include <stdint.h>

/*
 * Copy the running executable's build id into out (at most cap bytes;
 * longer ids are cut) from its program headers in memory: no file is read.
 * Returns its length, or 0 when the executable has none.
 */
size_t ms_self_build_id(uint8_t *out, size_t cap);

#endif
