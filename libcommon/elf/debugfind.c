#include "elf/debugfind.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/pipeline.h"
#include "stream/records.h"

#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

struct ms_debugfind {
	struct ms_debug_search opts;
	bool helper_sought;
	char *helper;		/* ms-debuginfod-find's path, NULL when not found */
};

struct ms_debugfind *ms_debugfind_new(const struct ms_debug_search *opts)
{
	struct ms_debugfind *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	if (opts)
		f->opts = *opts;
	if (!f->opts.system_dir)
		f->opts.system_dir = SYSTEM_DEBUG_DIR;
	return f;
}

void ms_debugfind_free(struct ms_debugfind *f)
{
	if (!f)
		return;
	free(f->helper);
	free(f);
}

const char *ms_elf_debuglink(Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = ms_elf_section(elf, ".gnu_debuglink", &sh);
	Elf_Data *d;
	const char *name;

	if (!scn || sh.sh_type == SHT_NOBITS || !(d = elf_getdata(scn, NULL)) || !d->d_buf ||
	    d->d_size < 2)
		return NULL;
	name = d->d_buf;
	/* The name, NUL-terminated, then padding and a CRC: bounded by the section. */
	if (!memchr(name, '\0', d->d_size) || !name[0] || strchr(name, '/'))
		return NULL;
	return name;
}

bool ms_elf_has_dwarf(Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = ms_elf_section(elf, ".debug_info", &sh);

	return scn && sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
}

bool ms_elf_has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB && sh.sh_size)
			return true;
	return false;
}

/* State of one search. */
struct search {
	const uint8_t *bid;
	uint32_t bid_len;
	struct ms_debug_file *out;
	bool have_symtab_only;	/* out->file holds a proved file without DWARF */
	bool mismatch;		/* out->path names a refused file */
	char symtab_path[PATH_MAX];
	const char *symtab_how;
};

/*
 * Try one candidate. Returns true when the search is over (a proved file
 * with DWARF is open in out->file).
 */
static bool try_path(struct search *s, const char *path, const char *how)
{
	struct ms_elf_file f;
	bool dwarf;

	if (access(path, F_OK) != 0)
		return false;
	if (ms_elf_file_open(&f, path) != MS_SYM_OK)
		return false;
	if (f.build_id_len != s->bid_len || memcmp(f.build_id, s->bid, s->bid_len)) {
		if (!s->mismatch) {
			snprintf(s->out->path, sizeof(s->out->path), "%s", path);
			s->out->how = how;
		}
		s->mismatch = true;
		ms_elf_file_close(&f);
		return false;
	}
	dwarf = ms_elf_has_dwarf(f.elf);
	if (dwarf) {
		if (s->have_symtab_only)
			ms_elf_file_close(&s->out->file);
		s->out->file = f;
		s->out->has_dwarf = true;
		s->out->reason = MS_SYM_OK;
		snprintf(s->out->path, sizeof(s->out->path), "%s", path);
		s->out->how = how;
		return true;
	}
	if (!s->have_symtab_only && ms_elf_has_symtab(f.elf)) {
		s->out->file = f;
		s->have_symtab_only = true;
		snprintf(s->symtab_path, sizeof(s->symtab_path), "%s", path);
		s->symtab_how = how;
		return false;
	}
	ms_elf_file_close(&f);
	return false;
}

/* Format a candidate path; false when it does not fit. */
static bool fmt(char *buf, size_t size, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

static bool fmt(char *buf, size_t size, const char *format, ...)
{
	va_list ap;
	int n;

	va_start(ap, format);
	n = vsnprintf(buf, size, format, ap);
	va_end(ap);
	return n > 0 && (size_t)n < size;
}

/* "xx/rest" of a build id. */
static void build_id_hex(const uint8_t *bid, uint32_t len, char *out)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t i, o = 0;

	for (i = 0; i < len; i++) {
		out[o++] = hex[bid[i] >> 4];
		out[o++] = hex[bid[i] & 15];
		if (i == 0)
			out[o++] = '/';
	}
	out[o] = '\0';
}

static bool try_build_id_dir(struct search *s, const char *dir, const char *how)
{
	char hex[2 * MS_BUILD_ID_MAX + 2], path[PATH_MAX];

	if (s->bid_len < 2)
		return false;
	build_id_hex(s->bid, s->bid_len, hex);
	return fmt(path, sizeof(path), "%s/.build-id/%s.debug", dir, hex) && try_path(s, path, how);
}

/*
 * Ask debuginfod for the debug file of s's build id through
 * ms-debuginfod-find (beside this program, else on PATH), which prints the
 * path of the copy it fetched: ms-symbolize is linked statically, and a
 * static program cannot load libdebuginfod.so.1. Its messages are left
 * out (a module the servers do not have is the common case); run it by
 * hand to see why. The file is then proved like any other.
 */
static bool ask_helper(struct ms_debugfind *f, const struct search *s, char *path, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	char id[2 * MS_BUILD_ID_MAX + 1];
	char *argv[3] = { f->helper, id, NULL };
	posix_spawn_file_actions_t fa;
	size_t len = 0;
	ssize_t n;
	pid_t pid;
	int out[2], status = 0;
	bool spawned;

	for (uint32_t i = 0; i < s->bid_len; i++) {
		id[2 * i] = hex[s->bid[i] >> 4];
		id[2 * i + 1] = hex[s->bid[i] & 15];
	}
	id[2 * s->bid_len] = '\0';
	if (pipe2(out, O_CLOEXEC) < 0)
		return false;
	if (posix_spawn_file_actions_init(&fa) != 0) {
		close(out[0]);
		close(out[1]);
		return false;
	}
	spawned = !posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) &&
		  !posix_spawn_file_actions_adddup2(&fa, out[1], 1) &&
		  !posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0) &&
		  !posix_spawn(&pid, f->helper, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	if (spawned) {
		while (len + 1 < cap && ((n = read(out[0], path + len, cap - 1 - len)) > 0 ||
					 (n < 0 && errno == EINTR)))
			len += n > 0 ? (size_t)n : 0;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	close(out[0]);
	if (!spawned || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || len + 1 >= cap)
		return false;
	path[len] = '\0';
	if (len && path[len - 1] == '\n')
		path[--len] = '\0';
	/* one absolute path, nothing else */
	return len && path[0] == '/' && !strchr(path, '\n') && strlen(path) == len;
}

static bool try_debuginfod(struct ms_debugfind *f, struct search *s)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char path[PATH_MAX];

	if (f->opts.no_debuginfod || !urls || !*urls || !s->bid_len)
		return false;
	if (!f->helper_sought) {
		f->helper_sought = true;
		f->helper = ms_stage_path("ms-debuginfod-find");
	}
	/* The server is trusted no more than a directory: the build id is checked. */
	return f->helper && ask_helper(f, s, path, sizeof(path)) &&
	       try_path(s, path, "debuginfod");
}

void ms_debugfind_find(struct ms_debugfind *f, const char *module_path, const char *link,
		       const uint8_t *bid, uint32_t bid_len, struct ms_debug_file *out)
{
	struct search s = { .bid = bid, .bid_len = bid_len, .out = out };
	char moddir[PATH_MAX], path[PATH_MAX];
	const char *base = "";
	uint32_t i;

	memset(out, 0, sizeof(*out));
	out->file.fd = -1;
	out->reason = MS_SYM_NO_DEBUG;
	if (!bid_len)
		return;
	moddir[0] = '\0';
	if (module_path && *module_path == '/') {
		const char *slash = strrchr(module_path, '/');

		base = slash + 1;
		if (!fmt(moddir, sizeof(moddir), "%.*s", (int)(slash - module_path), module_path))
			moddir[0] = '\0';
	}

	for (i = 0; i < f->opts.n_dirs; i++) {
		const char *dir = f->opts.dirs[i];

		if (try_build_id_dir(&s, dir, "debug-dir") ||
		    (link && fmt(path, sizeof(path), "%s/%s", dir, link) &&
		     try_path(&s, path, "debug-dir")) ||
		    (link && *moddir && fmt(path, sizeof(path), "%s%s/%s", dir, moddir, link) &&
		     try_path(&s, path, "debug-dir")) ||
		    (*base && fmt(path, sizeof(path), "%s/%s.debug", dir, base) &&
		     try_path(&s, path, "debug-dir")) ||
		    (*base && fmt(path, sizeof(path), "%s/%s", dir, base) &&
		     try_path(&s, path, "debug-dir")))
			return;
	}
	if (*f->opts.system_dir && try_build_id_dir(&s, f->opts.system_dir, "build-id"))
		return;
	if (link && *moddir &&
	    ((fmt(path, sizeof(path), "%s/%s", moddir, link) && try_path(&s, path, "debuglink")) ||
	     (fmt(path, sizeof(path), "%s/.debug/%s", moddir, link) &&
	      try_path(&s, path, "debuglink")) ||
	     (*f->opts.system_dir &&
	      fmt(path, sizeof(path), "%s%s/%s", f->opts.system_dir, moddir, link) &&
	      try_path(&s, path, "debuglink"))))
		return;
	if (try_debuginfod(f, &s))
		return;
	if (s.have_symtab_only) {
		out->reason = MS_SYM_OK;
		out->has_dwarf = false;
		snprintf(out->path, sizeof(out->path), "%s", s.symtab_path);
		out->how = s.symtab_how;
		return;
	}
	out->reason = s.mismatch ? MS_SYM_DEBUG_MISMATCH : MS_SYM_NO_DEBUG;
}
