/*
 * The kernel's vdso image as ms-collect's own process has it mapped.
 *
 * The vdso is code the kernel maps into every process ("[vdso]" in
 * /proc/PID/maps) and no file on disk holds, so later stages can read its
 * build id, call-frame information and symbols only from a copy in the
 * stream. Every 64-bit process of a host maps the same image, so
 * ms-collect's own stands for the target's, in launch and attach modes.
 */
#ifndef MS_PERF_VDSO_H
#define MS_PERF_VDSO_H

#include "stream/records.h"

/*
 * This process's vdso image: the bytes the ELF headers at
 * getauxval(AT_SYSINFO_EHDR) describe, bounded by the [vdso] mapping that
 * starts there. Returns 1 with out->image pointing at the mapping itself
 * (read-only, valid for the life of the process), 0 when the process maps
 * no vdso, or -1 with *why saying why it cannot be copied (no message:
 * the caller counts it as a problem).
 */
int ms_vdso_own(struct ms_vdso *out, const char **why);

#endif
