#include "dwarf/lines.h"
#include "dwarf/leb128.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "util/radix.h"

const char ms_linetab_unknown[] = "???";

/* Everything else takes the table to libdw. */
#define REFUSE 1

/* A bounded reader; bad once a read went past end or a number did not fit. */
struct cursor {
	const uint8_t *p, *end;
	bool big_endian;
	bool bad;
};

static uint64_t read_uint(struct cursor *c, unsigned int size)
{
	uint64_t v = 0;

	if (c->bad || (size_t)(c->end - c->p) < size) {
		c->bad = true;
		return 0;
	}
	for (unsigned int i = 0; i < size; i++)
		v |= (uint64_t)c->p[c->big_endian ? size - 1 - i : i] << (8 * i);
	c->p += size;
	return v;
}

/* A ULEB128 (leb128.h); a bad one makes c bad. */
static inline uint64_t read_uleb(struct cursor *c)
{
	uint64_t v;

	if (c->bad || !ms_uleb(&c->p, c->end, &v)) {
		c->bad = true;
		return 0;
	}
	return v;
}

/* An SLEB128 that fits 32 bits, as libdw reads DW_LNS_advance_line's into an int. */
static int32_t read_sleb32(struct cursor *c)
{
	int64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (c->bad || c->p == c->end || shift > 28) {
			c->bad = true;
			return 0;
		}
		b = *c->p++;
		v |= (int64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (b & 0x40)
		v -= (int64_t)1 << shift;
	if (v < INT32_MIN || v > INT32_MAX) {
		c->bad = true;
		return 0;
	}
	return (int32_t)v;
}

/* A NUL-terminated string at c->p before c->end. */
static const char *read_cstr(struct cursor *c)
{
	const uint8_t *nul;
	const char *s = (const char *)c->p;

	if (c->bad || !(nul = memchr(c->p, '\0', (size_t)(c->end - c->p)))) {
		c->bad = true;
		return NULL;
	}
	c->p = nul + 1;
	return s;
}

/* A string at off in a string section, which must end with a NUL. */
static const char *section_str(const uint8_t *sec, size_t size, uint64_t off)
{
	if (!sec || !size || sec[size - 1] || off >= size)
		return NULL;
	return (const char *)sec + off;
}

/* Forms of the DWARF 5 directory and file entries this reader knows. */
static bool known_form(uint64_t form)
{
	switch (form) {
	case DW_FORM_string:
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_data1:
	case DW_FORM_data2:
	case DW_FORM_data4:
	case DW_FORM_data8:
	case DW_FORM_udata:
	case DW_FORM_data16:
	case DW_FORM_block:
		return true;
	default:
		return false;
	}
}

struct form_reader {
	const struct ms_line_sections *sec;
	unsigned int offset_size;
};

/*
 * Read one value of form: a string (*str) for the string forms, a number
 * (*num) for the constant ones. false when the form is not one of those
 * known here or the value is bad.
 */
static bool read_form(struct cursor *c, const struct form_reader *fr, uint64_t form,
		      const char **str, uint64_t *num, bool *is_num)
{
	uint64_t v;

	*str = NULL;
	*is_num = false;
	switch (form) {
	case DW_FORM_string:
		*str = read_cstr(c);
		break;
	case DW_FORM_strp:
		v = read_uint(c, fr->offset_size);
		*str = section_str(fr->sec->str, fr->sec->str_size, v);
		if (!*str)
			c->bad = true;
		break;
	case DW_FORM_line_strp:
		v = read_uint(c, fr->offset_size);
		*str = section_str(fr->sec->line_str, fr->sec->line_str_size, v);
		if (!*str)
			c->bad = true;
		break;
	case DW_FORM_data1:
	case DW_FORM_data2:
	case DW_FORM_data4:
	case DW_FORM_data8:
		*num = read_uint(c, form == DW_FORM_data1 ? 1 : form == DW_FORM_data2 ? 2 :
				 form == DW_FORM_data4 ? 4 : 8);
		*is_num = true;
		break;
	case DW_FORM_udata:
		*num = read_uleb(c);
		*is_num = true;
		break;
	case DW_FORM_data16:
		read_uint(c, 8);
		read_uint(c, 8);
		break;
	case DW_FORM_block:
		v = read_uleb(c);
		if (!c->bad && v > (uint64_t)(c->end - c->p))
			c->bad = true;
		if (!c->bad)
			c->p += v;
		break;
	default:
		return false;
	}
	return !c->bad;
}

/* A table being read. */
struct reader {
	struct ms_linetab *t;
	struct ms_strpool *pool;
	const char **dirs;
	uint32_t n_dirs, alloc_dirs, alloc_files;
	struct ms_line_scratch *s;	/* the rows in program order, then sorted */
};

static int push_ptr(const char ***arr, uint32_t *n, uint32_t *alloc, const char *p)
{
	if (*n == *alloc) {
		uint32_t a = *alloc ? *alloc * 2 : 32;
		const char **q;

		if (a <= *alloc || !(q = realloc((void *)*arr, (size_t)a * sizeof(*q))))
			return -1;
		*arr = q;
		*alloc = a;
	}
	(*arr)[(*n)++] = p;
	return 0;
}

/* A file's name as libdw makes it. NULL when out of memory. */
static const char *file_name(struct reader *r, const char *name, const char *dir)
{
	size_t dlen, nlen;
	char *p;

	if (name[0] == '/')
		return name;
	dlen = dir ? strlen(dir) : 0;
	nlen = strlen(name);
	if (!(p = ms_strpool_alloc(r->pool, dlen + 1 + nlen + 1)))
		return NULL;
	if (dir) {
		memcpy(p, dir, dlen);
		p[dlen++] = '/';
	}
	memcpy(p + dlen, name, nlen + 1);
	return p;
}

/* Directories and files before DWARF 5: strings, then (string, dir, mtime, size) entries. */
static int read_names_v4(struct reader *r, struct cursor *c, const char *comp_dir)
{
	struct ms_linetab *t = r->t;

	if (push_ptr(&r->dirs, &r->n_dirs, &r->alloc_dirs, comp_dir) < 0 ||
	    push_ptr(&t->files, &t->n_files, &r->alloc_files, ms_linetab_unknown) < 0)
		return -1;
	while (!c->bad && c->p < c->end && *c->p) {
		const char *dir = read_cstr(c);

		if (dir && push_ptr(&r->dirs, &r->n_dirs, &r->alloc_dirs, dir) < 0)
			return -1;
	}
	if (c->bad || c->p == c->end)
		return REFUSE;
	c->p++;
	while (!c->bad && c->p < c->end && *c->p) {
		const char *name = read_cstr(c), *full;
		uint64_t dir = read_uleb(c);

		read_uleb(c);	/* mtime */
		read_uleb(c);	/* size */
		if (c->bad || dir >= r->n_dirs)
			return REFUSE;
		if (!(full = file_name(r, name, r->dirs[dir])) ||
		    push_ptr(&t->files, &t->n_files, &r->alloc_files, full) < 0)
			return -1;
	}
	if (c->bad || c->p == c->end)
		return REFUSE;
	c->p++;
	return 0;
}

/*
 * DWARF 5 entries: a format (content type, form pairs), a count, then the
 * entries: directories' paths, or (files) file names joined to their
 * directory.
 */
static int read_entries_v5(struct reader *r, struct cursor *c, const struct form_reader *fr,
			   bool files)
{
	uint64_t type[256], form[256], count, i;
	unsigned int n_forms = (unsigned int)read_uint(c, 1), k;
	int path = -1, index = -1;

	for (k = 0; k < n_forms; k++) {
		type[k] = read_uleb(c);
		form[k] = read_uleb(c);
		if (c->bad || type[k] > 0xffff || !known_form(form[k]))
			return REFUSE;
		if (type[k] == DW_LNCT_path)
			path = (int)k;
		else if (files && type[k] == DW_LNCT_directory_index)
			index = (int)k;
	}
	count = read_uleb(c);
	if (c->bad || !n_forms || path < 0 || (files && index < 0) ||
	    count > (uint64_t)(c->end - c->p) / n_forms)
		return REFUSE;
	for (i = 0; i < count; i++) {
		const char *name = NULL, *str, *full;
		uint64_t dir = UINT64_MAX, num;
		bool is_num;

		for (k = 0; k < n_forms; k++) {
			if (!read_form(c, fr, form[k], &str, &num, &is_num))
				return REFUSE;
			if ((int)k == path)
				name = str;
			else if ((int)k == index)
				dir = is_num ? num : UINT64_MAX;
		}
		if (!name)
			return REFUSE;
		if (!files) {
			if (push_ptr(&r->dirs, &r->n_dirs, &r->alloc_dirs, name) < 0)
				return -1;
			continue;
		}
		if (dir >= r->n_dirs)
			return REFUSE;
		if (!(full = file_name(r, name, r->dirs[dir])) ||
		    push_ptr(&r->t->files, &r->t->n_files, &r->alloc_files, full) < 0)
			return -1;
	}
	/* No file at all leaves libdw's placeholder for index 0. */
	if (files && !count &&
	    push_ptr(&r->t->files, &r->t->n_files, &r->alloc_files, ms_linetab_unknown) < 0)
		return -1;
	return 0;
}

/* The state machine's registers that reach a row. */
struct regs {
	uint64_t addr;
	int64_t line;
	uint64_t file, column, isa, discriminator;
	uint8_t is_stmt;
};

/* Room for n rows in *p (of *alloc); false when out of memory. */
static bool reserve(struct ms_rkey **p, uint32_t *alloc, uint32_t n)
{
	uint32_t a = *alloc ? *alloc : 1024;
	struct ms_rkey *q;

	if (n <= *alloc)
		return true;
	while (a < n && a < UINT32_MAX / 2)
		a *= 2;
	if (a < n || !(q = realloc(*p, (size_t)a * sizeof(*q))))
		return false;
	*p = q;
	*alloc = a;
	return true;
}

static int push_row(struct reader *r, const struct regs *s, bool end)
{
	struct ms_linetab *t = r->t;

	/* What libdw would refuse or cut when it stores the row. */
	if (s->file > INT32_MAX || s->column > 0xffff || s->isa > 0xff ||
	    s->discriminator >= (1u << 24))
		return REFUSE;
	if (t->n_rows == r->s->alloc_rows &&
	    !reserve(&r->s->rows, &r->s->alloc_rows, t->n_rows + 1))
		return -1;
	r->s->rows[t->n_rows++] = (struct ms_rkey){
		s->addr, (uint32_t)s->file << 1 | end, (uint32_t)(int32_t)s->line,
	};
	return 0;
}

/* The standard opcodes' operand counts, which libdw checks. */
static const uint8_t std_lengths[] = { 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };

static int run_program(struct reader *r, struct cursor *c, unsigned int addr_size,
		       unsigned int min_inst, uint8_t default_is_stmt, int8_t line_base,
		       uint8_t line_range, uint8_t opcode_base, const uint8_t *lengths)
{
	struct regs s = { 0, 1, 1, 0, 0, 0, default_is_stmt };
	int ret;

	while (c->p < c->end) {
		uint8_t op = *c->p++;
		uint64_t v, len;
		const uint8_t *start;

		if (op >= opcode_base) {
			s.line += line_base + (op - opcode_base) % line_range;
			s.addr += min_inst * ((op - opcode_base) / line_range);
			if (s.line < INT32_MIN || s.line > INT32_MAX)
				return REFUSE;
			if ((ret = push_row(r, &s, false)))
				return ret;
			s.discriminator = 0;
			continue;
		}
		switch (op) {
		case 0:
			/* libdw reads the length as one byte, DWARF as a ULEB128. */
			if (c->end - c->p < 2 || *c->p >= 0x80 || !*c->p)
				return REFUSE;
			len = *c->p++;
			if (len > (uint64_t)(c->end - c->p))
				return REFUSE;
			start = c->p;
			op = *c->p++;
			switch (op) {
			case DW_LNE_end_sequence:
				if (len != 1)
					return REFUSE;
				if ((ret = push_row(r, &s, true)))
					return ret;
				s = (struct regs){ 0, 1, 1, 0, 0, 0, default_is_stmt };
				break;
			case DW_LNE_set_address:
				if (len != 1 + addr_size)
					return REFUSE;
				s.addr = read_uint(c, addr_size);
				break;
			case DW_LNE_set_discriminator:
				s.discriminator = read_uleb(c);
				if (c->p != start + len || s.discriminator > UINT32_MAX)
					return REFUSE;
				break;
			default:
				/* DW_LNE_define_file, vendor extensions: libdw's to read. */
				return REFUSE;
			}
			break;
		case DW_LNS_copy:
			if ((ret = push_row(r, &s, false)))
				return ret;
			s.discriminator = 0;
			break;
		case DW_LNS_advance_pc:
			v = read_uleb(c);
			if (v > UINT32_MAX || v * min_inst > UINT32_MAX)
				return REFUSE;
			s.addr += v * min_inst;
			break;
		case DW_LNS_advance_line:
			s.line += read_sleb32(c);
			if (s.line < INT32_MIN || s.line > INT32_MAX)
				return REFUSE;
			break;
		case DW_LNS_set_file:
			s.file = read_uleb(c);
			if (s.file > UINT32_MAX)
				return REFUSE;
			break;
		case DW_LNS_set_column:
			s.column = read_uleb(c);
			if (s.column > UINT32_MAX)
				return REFUSE;
			break;
		case DW_LNS_negate_stmt:
			s.is_stmt = 1 - s.is_stmt;
			break;
		case DW_LNS_set_basic_block:
		case DW_LNS_set_prologue_end:
		case DW_LNS_set_epilogue_begin:
			break;
		case DW_LNS_const_add_pc:
			s.addr += min_inst * ((255u - opcode_base) / line_range);
			break;
		case DW_LNS_fixed_advance_pc:
			s.addr += read_uint(c, 2);
			break;
		case DW_LNS_set_isa:
			s.isa = read_uleb(c);
			if (s.isa > UINT32_MAX)
				return REFUSE;
			break;
		default:
			/* A standard opcode past DWARF's: its operands are skipped. */
			for (unsigned int k = lengths[op]; k > 0; k--)
				read_uleb(c);
			break;
		}
		if (c->bad)
			return REFUSE;
	}
	/* libdw marks its last row as an end; a table that did not end one is left to it. */
	if (r->t->n_rows && !(r->s->rows[r->t->n_rows - 1].pos & 1))
		return REFUSE;
	return 0;
}

/*
 * The rows by address, stably (an end of sequence before the others at its
 * address is for lookups to mind), into a table of their own size.
 */
static int sort_rows(struct reader *r)
{
	struct ms_linetab *t = r->t;
	struct ms_rkey *sorted = r->s->rows;
	uint32_t n = t->n_rows, i;

	for (i = 1; i < n; i++)
		if (sorted[i].key < sorted[i - 1].key)
			break;
	if (i < n) {
		if (!reserve(&r->s->tmp, &r->s->alloc_tmp, n))
			return -1;
		sorted = ms_radix_sort(r->s->rows, r->s->tmp, n);
	}
	if (n && !(t->rows = malloc((size_t)n * sizeof(*t->rows))))
		return -1;
	if (n)
		memcpy(t->rows, sorted, (size_t)n * sizeof(*t->rows));
	return 0;
}

void ms_line_scratch_release(struct ms_line_scratch *s)
{
	free(s->rows);
	free(s->tmp);
	memset(s, 0, sizeof(*s));
}

int ms_linetab_read(struct ms_linetab *t, const struct ms_line_sections *sec, uint64_t offset,
		    unsigned int addr_size, const char *comp_dir, struct ms_strpool *pool,
		    struct ms_line_scratch *scratch)
{
	struct ms_line_scratch own = { 0 };
	struct reader r = { .t = t, .pool = pool, .s = scratch ? scratch : &own };
	struct cursor c;
	struct form_reader fr = { sec, 4 };
	const uint8_t *unit_end, *hdr_end, *lengths;
	uint64_t len, version, hdr_len;
	unsigned int min_inst;
	uint8_t default_is_stmt, line_range, opcode_base;
	int8_t line_base;
	int ret = REFUSE;

	memset(t, 0, sizeof(*t));
	t->offset = offset;
	if (!sec->line || offset >= sec->line_size || (addr_size != 4 && addr_size != 8))
		return REFUSE;
	c = (struct cursor){ sec->line + offset, sec->line + sec->line_size, sec->big_endian, false };
	len = read_uint(&c, 4);
	if (len == 0xffffffff) {
		fr.offset_size = 8;
		len = read_uint(&c, 8);
	} else if (len >= 0xfffffff0) {
		return REFUSE;
	}
	if (c.bad || len > (uint64_t)(c.end - c.p))
		return REFUSE;
	unit_end = c.end = c.p + len;
	version = read_uint(&c, 2);
	if (version < 2 || version > 5)
		return REFUSE;
	if (version >= 5 && (read_uint(&c, 1) != addr_size || read_uint(&c, 1) != 0))
		return REFUSE;
	hdr_len = read_uint(&c, fr.offset_size);
	if (c.bad || hdr_len > (uint64_t)(c.end - c.p))
		return REFUSE;
	hdr_end = c.end = c.p + hdr_len;
	min_inst = (unsigned int)read_uint(&c, 1);
	if (version >= 4 && read_uint(&c, 1) != 1)
		return REFUSE;	/* several operations per instruction (VLIW) */
	default_is_stmt = (uint8_t)read_uint(&c, 1);
	line_base = (int8_t)read_uint(&c, 1);
	line_range = (uint8_t)read_uint(&c, 1);
	opcode_base = (uint8_t)read_uint(&c, 1);
	if (c.bad || default_is_stmt > 1 || !line_range || opcode_base < 10 ||
	    (size_t)(opcode_base - 1) > (size_t)(c.end - c.p))
		return REFUSE;
	lengths = c.p - 1;
	for (unsigned int op = 1; op < opcode_base && op < sizeof(std_lengths); op++)
		if (lengths[op] != std_lengths[op])
			return REFUSE;
	c.p += opcode_base - 1;

	if (version < 5)
		ret = read_names_v4(&r, &c, comp_dir);
	else if (!(ret = read_entries_v5(&r, &c, &fr, false)))
		ret = read_entries_v5(&r, &c, &fr, true);
	if (!ret && (c.bad || c.p != hdr_end))
		ret = REFUSE;
	if (!ret) {
		c = (struct cursor){ hdr_end, unit_end, sec->big_endian, false };
		ret = run_program(&r, &c, addr_size, min_inst, default_is_stmt, line_base,
				  line_range, opcode_base, lengths);
	}
	if (!ret && (ret = sort_rows(&r)) == 0)
		t->offset = offset;
	free(r.dirs);
	ms_line_scratch_release(&own);
	if (ret) {
		ms_linetab_release(t);
		t->offset = offset;
	}
	return ret;
}

void ms_linetab_release(struct ms_linetab *t)
{
	free(t->rows);
	free((void *)t->files);
	memset(t, 0, sizeof(*t));
}

bool ms_linetab_find(const struct ms_linetab *t, uint64_t addr, const char **file, int *line)
{
	uint32_t lo = 0, hi = t->n_rows, k, top;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].key <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo rows are at or below addr; the last address of the table is an end. */
	if (!lo || lo == t->n_rows)
		return false;
	top = lo - 1;
	for (k = top + 1; k-- > 0 && t->rows[k].key == t->rows[top].key;) {
		const struct ms_rkey *row = &t->rows[k];

		if (row->pos & 1)
			continue;	/* libdw puts ends first among rows at one address */
		*file = ms_linetab_file(t, row->pos >> 1);
		*line = (int32_t)row->aux;
		return true;
	}
	return false;
}

const char *ms_linetab_file(const struct ms_linetab *t, uint64_t idx)
{
	return idx < t->n_files ? t->files[idx] : NULL;
}
