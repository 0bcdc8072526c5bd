/* Finding a process's __jit_debug_descriptor in its files: see gdbjitfind.h. */
#include "jit/gdbjitfind.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elf/elffile.h"
#include "jit/gdbjit.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/safeopen.h"

/* What a file holds, by its identity. */
struct file_answer {
	uint64_t dev, ino, size, mtime;
	bool has;		/* defines the symbol */
	uint64_t value;		/* then: its value (a virtual address) */
	uint32_t n_loads;
	struct ms_elf_load loads[MS_GDBJIT_LOADS_MAX];
};

struct ms_gdbjit_files {
	struct file_answer *f;
	uint32_t n, alloc;
	char *maps;		/* /proc/PID/maps, reused */
	size_t maps_cap;
};

struct ms_gdbjit_files *ms_gdbjit_files_new(void)
{
	struct ms_gdbjit_files *c = calloc(1, sizeof(*c));

	if (!c)
		ms_error("out of memory for the JIT recorder's table of files");
	return c;
}

void ms_gdbjit_files_free(struct ms_gdbjit_files *c)
{
	if (!c)
		return;
	free(c->f);
	free(c->maps);
	free(c);
}

/* ---- /proc/PID/maps ---- */

/* The hex number at *p up to stop (a character), *p moved past stop. */
static int hex_to(const char **p, const char *end, char stop, uint64_t *v)
{
	const char *q = *p;
	int digits = 0;

	*v = 0;
	for (; q < end && *q != stop; q++, digits++) {
		int d = *q >= '0' && *q <= '9' ? *q - '0' : *q >= 'a' && *q <= 'f' ? *q - 'a' + 10 : -1;

		if (d < 0 || digits == 16)
			return -1;
		*v = *v << 4 | (uint64_t)d;
	}
	if (q == end || !digits)
		return -1;
	*p = q + 1;
	return 0;
}

int ms_gdbjit_maps_line(const char *line, size_t len, struct ms_gdbjit_mapline *m)
{
	static const char deleted[] = " (deleted)";
	const char *p = line, *end = line + len;
	uint64_t maj, min, ino = 0;

	memset(m, 0, sizeof(*m));
	m->path = "";
	/* START-END PERMS OFFSET MAJ:MIN INODE   PATH */
	if (hex_to(&p, end, '-', &m->start) < 0 || hex_to(&p, end, ' ', &m->end) < 0 ||
	    m->end < m->start)
		return -1;
	if (end - p < 5 || p[4] != ' ')
		return -1;
	p += 5;
	if (hex_to(&p, end, ' ', &m->pgoff) < 0 || hex_to(&p, end, ':', &maj) < 0 ||
	    hex_to(&p, end, ' ', &min) < 0 || maj > UINT32_MAX || min > UINT32_MAX)
		return -1;
	m->maj = (uint32_t)maj;
	m->min = (uint32_t)min;
	if (p == end || *p < '0' || *p > '9')
		return -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (ino > (UINT64_MAX - 9) / 10)
			return -1;
		ino = ino * 10 + (uint64_t)(*p - '0');
	}
	m->ino = ino;
	while (p < end && *p == ' ')
		p++;
	m->path = p;
	m->path_len = (size_t)(end - p);
	if (m->path_len >= sizeof(deleted) - 1 &&
	    !memcmp(end - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1)) {
		m->deleted = true;
		m->path_len -= sizeof(deleted) - 1;
	}
	return 0;
}

/* The whole of /proc/PID/maps into c->maps: its length, or -1 with errno. */
static long read_maps(struct ms_gdbjit_files *c, pid_t pid)
{
	char path[64];
	size_t got = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? (errno = ESRCH, -1) : -1;
	for (;;) {
		ssize_t n;

		if (got == c->maps_cap) {
			size_t cap = c->maps_cap ? c->maps_cap * 2 : 16384;
			char *b;

			if (cap > MS_GDBJIT_MAPS_MAX)
				break;	/* the rest is not searched */
			if (!(b = realloc(c->maps, cap))) {
				close(fd);
				return errno = ENOMEM, -1;
			}
			c->maps = b;
			c->maps_cap = cap;
		}
		n = read(fd, c->maps + got, c->maps_cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			close(fd);
			/* A process that ended between open and read reads as ESRCH. */
			return errno = err, -1;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	close(fd);
	return (long)got;
}

/* ---- a file's answer ---- */

/* Whether the symbol table sections of type want define the symbol; its value in *value. */
static bool symbol_in(Elf *elf, Elf64_Word want, uint64_t *value)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != want || !sh.sh_entsize)
			continue;
		if (!(d = elf_getdata(scn, NULL)))
			continue;
		n = d->d_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    (GELF_ST_TYPE(sym.st_info) != STT_OBJECT &&
			     GELF_ST_TYPE(sym.st_info) != STT_NOTYPE))
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, MS_GDBJIT_SYMBOL)) {
				*value = sym.st_value;
				return true;
			}
		}
	}
	return false;
}

/* Read the answer of the open file fd (owned: closed here) into a. */
static void answer_read(int fd, struct file_answer *a)
{
	struct ms_elf_file f;
	struct ms_elf_loads loads;

	a->has = false;
	a->n_loads = 0;
	if (ms_elf_file_open_fd(&f, fd) != MS_SYM_OK)
		return;
	/* .dynsym first: a library's (libLLVM's) is there; an executable's may be in .symtab only. */
	a->has = symbol_in(f.elf, SHT_DYNSYM, &a->value) || symbol_in(f.elf, SHT_SYMTAB, &a->value);
	if (a->has && ms_elf_loads_read(f.elf, &loads) == 0) {
		for (uint32_t i = 0; i < loads.n && a->n_loads < MS_GDBJIT_LOADS_MAX; i++)
			a->loads[a->n_loads++] = loads.load[i];
		ms_elf_loads_release(&loads);
	}
	ms_elf_file_close(&f);
}

static bool same_file(const struct stat *st, const struct ms_gdbjit_mapline *m)
{
	return major(st->st_dev) == m->maj && minor(st->st_dev) == m->min &&
	       (uint64_t)st->st_ino == m->ino;
}

static struct file_answer *answer_find(struct ms_gdbjit_files *c, const struct stat *st)
{
	for (uint32_t i = 0; i < c->n; i++) {
		struct file_answer *a = &c->f[i];

		if (a->dev == (uint64_t)st->st_dev && a->ino == (uint64_t)st->st_ino &&
		    a->size == (uint64_t)st->st_size && a->mtime == ms_stat_mtime_ns(st))
			return a;
	}
	return NULL;
}

/*
 * Open the file of mapping m as the process sees it, proved to be the
 * mapped file: an fd and its status, or -1.
 */
static int open_mapped(pid_t pid, int root, const struct ms_gdbjit_mapline *m, struct stat *st)
{
	char path[4200];
	int fd = -1;

	if (root >= 0 && !m->deleted && m->path_len < sizeof(path) && m->path_len > 1) {
		memcpy(path, m->path + 1, m->path_len - 1);
		path[m->path_len - 1] = '\0';
		fd = ms_open_regular(root, path, MS_OPEN_NO_LINKS, MS_ELF_FILE_MAX, st, NULL);
		if (fd >= 0 && same_file(st, m))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	/* Replaced or deleted since it was mapped: the mapping's own file (needs CAP_SYS_ADMIN). */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, m->start,
		 m->end);
	fd = ms_open_regular(AT_FDCWD, path, 0, MS_ELF_FILE_MAX, st, NULL);
	if (fd >= 0 && same_file(st, m))
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The answer for mapping m's file: cached, or read now. NULL when unproved. */
static struct file_answer *answer_of(struct ms_gdbjit_files *c, pid_t pid, int root,
				     const struct ms_gdbjit_mapline *m, struct ms_gdbjit_found *out)
{
	struct file_answer *a;
	struct stat st;
	char rel[4200];
	int fd;

	/* The identity first (a stat, no open): most files are in the cache. */
	if (root >= 0 && !m->deleted && m->path_len > 1 && m->path_len < sizeof(rel)) {
		memcpy(rel, m->path + 1, m->path_len - 1);
		rel[m->path_len - 1] = '\0';
		if (fstatat(root, rel, &st, 0) == 0 && same_file(&st, m) && (a = answer_find(c, &st)))
			return a;
	}
	if ((fd = open_mapped(pid, root, m, &st)) < 0) {
		if (!out->unproved++)
			snprintf(out->unproved_path, sizeof(out->unproved_path), "%.*s",
				 (int)m->path_len, m->path);
		return NULL;
	}
	if ((a = answer_find(c, &st))) {
		close(fd);
		return a;
	}
	if (c->n == MS_GDBJIT_FILES_MAX)
		c->n = 0;	/* bounded: start again */
	if (MS_GROW(c->f, c->n, c->alloc) < 0) {
		close(fd);
		return NULL;
	}
	a = &c->f[c->n++];
	*a = (struct file_answer){ .dev = (uint64_t)st.st_dev, .ino = (uint64_t)st.st_ino,
				   .size = (uint64_t)st.st_size, .mtime = ms_stat_mtime_ns(&st) };
	out->opened++;
	answer_read(fd, a);
	return a;
}

/* ---- the search ---- */

int ms_gdbjit_search(struct ms_gdbjit_files *c, pid_t pid, struct ms_gdbjit_found *out)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), prev_dev = UINT64_MAX, prev_ino = 0;
	char root_path[64];
	long len;
	int root;

	memset(out, 0, sizeof(*out));
	if ((len = read_maps(c, pid)) < 0)
		return -1;
	snprintf(root_path, sizeof(root_path), "/proc/%d/root", (int)pid);
	root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (const char *p = c->maps, *end = c->maps + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct ms_gdbjit_mapline m;
		struct file_answer *a;
		uint64_t bias, dev;

		if (!nl)
			break;	/* a line cut by the bound */
		if (ms_gdbjit_maps_line(p, (size_t)(nl - p), &m) < 0 || !m.ino || !m.path_len ||
		    m.path[0] != '/') {
			p = nl + 1;
			continue;
		}
		p = nl + 1;
		/* A file's mappings come together, the first (lowest) says its bias. */
		dev = (uint64_t)m.maj << 32 | m.min;
		if (dev == prev_dev && m.ino == prev_ino)
			continue;
		prev_dev = dev;
		prev_ino = m.ino;
		out->files++;
		if (!(a = answer_of(c, pid, root, &m, out)) || !a->has)
			continue;
		if (!ms_gdbjit_bias(a->loads, a->n_loads, m.start, m.pgoff, page, &bias))
			continue;
		uint64_t at = a->value + bias;
		bool dup = false;

		for (uint32_t i = 0; i < out->n; i++)
			dup |= out->addr[i] == at;
		if (dup)
			continue;
		if (out->n == MS_GDBJIT_DESCS_MAX)
			out->over++;
		else
			out->addr[out->n++] = at;
	}
	if (root >= 0)
		close(root);
	return 0;
}
