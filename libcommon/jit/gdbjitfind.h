/*
 * Where a live process's __jit_debug_descriptor is (the GDB JIT
 * interface, gdbjit.h): the symbol in the .dynsym or .symtab of one of
 * the files it maps (its executable, or a library such as libLLVM), plus
 * that module's load bias. ms-collect's JIT recorder (recordergdb.h)
 * searches a process once per set of file mappings.
 *
 * The files are the process's: /proc/PID/maps lists them with their
 * device and inode; each is opened through /proc/PID/root + path (the
 * process's view), or /proc/PID/map_files/START-END when that is not the
 * mapped file (replaced or deleted since), and used only when its device
 * and inode are the mapping's. What a file holds is cached by its
 * identity (device, inode, size, mtime), so a library every process maps
 * is read once per recording.
 *
 * Nothing is printed: a file that cannot be opened or proved is counted in
 * the result with the first one's path, for the caller's problem.
 */
#ifndef MS_JIT_GDBJITFIND_H
#define MS_JIT_GDBJITFIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Descriptors kept per process (one per module defining the symbol). */
#define MS_GDBJIT_DESCS_MAX 4
/* Files whose answer is cached; past it the cache starts again. */
#define MS_GDBJIT_FILES_MAX 4096
/* The most of /proc/PID/maps read (65530 mappings of long paths). */
#define MS_GDBJIT_MAPS_MAX (32u << 20)
/* PT_LOAD segments kept of a file holding the symbol. */
#define MS_GDBJIT_LOADS_MAX 16

/* One line of /proc/PID/maps. */
struct ms_gdbjit_mapline {
	uint64_t start, end, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	const char *path;	/* into the line; "" for none */
	size_t path_len;
	bool deleted;		/* the path ended in " (deleted)" (not in path_len) */
};

/* Parse one line (no newline): 0, or -1 when malformed. */
int ms_gdbjit_maps_line(const char *line, size_t len, struct ms_gdbjit_mapline *m);

struct ms_gdbjit_found {
	uint32_t n;
	uint64_t addr[MS_GDBJIT_DESCS_MAX];	/* runtime addresses, distinct */
	uint32_t files;		/* file-backed modules looked at */
	uint32_t opened;	/* of those, read now (not from the cache) */
	uint32_t unproved;	/* could not be opened, or were not the mapped file */
	char unproved_path[128];	/* the first such */
	uint32_t over;		/* descriptors past MS_GDBJIT_DESCS_MAX */
};

struct ms_gdbjit_files;

struct ms_gdbjit_files *ms_gdbjit_files_new(void);
void ms_gdbjit_files_free(struct ms_gdbjit_files *c);

/*
 * Search process pid's file mappings for the descriptor. 0 with *out
 * filled (n 0: the process has none), or -1 with errno (ESRCH: it is
 * gone; ENOMEM).
 */
int ms_gdbjit_search(struct ms_gdbjit_files *c, pid_t pid, struct ms_gdbjit_found *out);

#endif
