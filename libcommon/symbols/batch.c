/*
 * Batch mode: addresses of one ELF file in, addr2line-style text out,
 * through the same symbolizer as the stage (for the benchmark, and to
 * check the facts against addr2line's).
 */
#include "symbols/symbolize.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "elf/elffile.h"
#include "util/error.h"

/* The module record ms-unwind would write for the file at path. */
static int describe(const char *path, struct ms_module *m)
{
	struct ms_elf_file f;
	int r = ms_elf_file_open(&f, path);

	if (r != MS_SYM_OK)
		return ms_error("cannot read '%s': %s", path,
				r == MS_SYM_NO_FILE ? "cannot open it" : "not an ELF file");
	memset(m, 0, sizeof(*m));
	m->kind = MS_MODULE_FILE;
	m->path.ptr = path;
	m->path.len = (uint32_t)strlen(path);
	m->build_id_len = f.build_id_len;
	memcpy(m->build_id, f.build_id, f.build_id_len);
	m->dev_maj = major(f.st.st_dev);
	m->dev_min = minor(f.st.st_dev);
	m->ino = f.st.st_ino;
	m->size = f.st.st_size;
	m->mtime = ms_stat_mtime_ns(&f.st);
	ms_elf_file_close(&f);
	return 0;
}

static void print_fact(FILE *out, const struct ms_frame *fr)
{
	uint32_t i;

	if (!fr->n_lines) {
		if (fr->name.len)
			fprintf(out, "%.*s\n??:0\n", (int)fr->name.len, fr->name.ptr);
		else
			fputs("??\n??:0\n", out);
		return;
	}
	for (i = 0; i < fr->n_lines; i++) {
		const struct ms_frame_line *l = &fr->lines[i];

		if (l->function.len)
			fwrite(l->function.ptr, 1, l->function.len, out);
		else
			fputs("??", out);
		fprintf(out, "\n%.*s:%" PRIu32 "\n", (int)(l->file.len ? l->file.len : 2),
			l->file.len ? l->file.ptr : "??", l->line);
	}
}

int ms_symbolize_batch(const char *path, FILE *in, FILE *out,
		       const struct ms_symbolize_options *opts, struct ms_symbolize_stats *stats)
{
	struct ms_symbolizer *s = NULL;
	struct ms_module m;
	struct ms_frame *fr = NULL;
	char line[128];
	uint64_t lineno = 0;
	int ret = -1;
	char *abs;

	/* Debug links are looked for beside the file: an absolute path, as ms-unwind's. */
	if ((abs = realpath(path, NULL)))
		path = abs;
	if (describe(path, &m) < 0) {
		free(abs);
		return -1;
	}
	if (!(s = ms_symbolizer_new(opts)) || ms_symbolizer_module(s, &m) < 0)
		goto out;
	if (!(fr = malloc(sizeof(*fr)))) {
		ms_error("out of memory");
		goto out;
	}
	while (fgets(line, sizeof(line), in)) {
		struct ms_stack_frame f = { 0 };
		char *end;
		bool is_new;

		lineno++;
		if (!strchr(line, '\n') && !feof(in)) {
			ms_error("'stdin' line %" PRIu64 ": too long for an address", lineno);
			goto out;
		}
		f.address = strtoull(line, &end, 16);
		if (end == line || (*end && *end != '\n')) {
			ms_error("'stdin' line %" PRIu64 ": not a hex address", lineno);
			goto out;
		}
		if (ms_symbolizer_frame(s, &f, fr, &is_new) < 0)
			goto out;
		print_fact(out, fr);
	}
	if (ferror(in)) {
		ms_error_errno("cannot read 'stdin'");
		goto out;
	}
	ret = 0;
out:
	if (stats && s)
		*stats = *ms_symbolizer_stats(s);
	free(fr);
	if (opts && opts->exiting)
		ms_symbolizer_leave(s);
	else
		ms_symbolizer_free(s);
	free(abs);
	return ret;
}
