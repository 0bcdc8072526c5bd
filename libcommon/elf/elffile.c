#include "elf/elffile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/error.h"
#include "util/safeopen.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

int ms_elf_setup(void)
{
	static int done;

	if (done)
		return 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return ms_error("libelf is out of date: %s", elf_errmsg(-1));
	done = 1;
	return 0;
}

/* Look for a GNU build-id note in data; its length, or 0. */
static uint32_t note_build_id(Elf_Data *data, uint8_t out[MS_BUILD_ID_MAX])
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	if (!data || !data->d_buf)
		return 0;
	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) &&
		    nh.n_descsz > 0) {
			uint32_t len = nh.n_descsz < MS_BUILD_ID_MAX ? nh.n_descsz : MS_BUILD_ID_MAX;

			memcpy(out, (const char *)data->d_buf + desc_off, len);
			return len;
		}
		off = next;
	}
	return 0;
}

uint32_t ms_elf_build_id(Elf *elf, uint8_t out[MS_BUILD_ID_MAX])
{
	Elf_Scn *scn = NULL;
	size_t n, i;
	uint32_t len;

	/* Segments first: they are what the loader maps, and survive strip. */
	if (elf_getphdrnum(elf, &n) == 0) {
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;
			Elf_Data *d;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			if ((len = note_build_id(d, out)))
				return len;
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if ((len = note_build_id(elf_getdata(scn, NULL), out)))
			return len;
	}
	return 0;
}

int ms_elf_loads_read(Elf *elf, struct ms_elf_loads *out)
{
	size_t n, i;

	memset(out, 0, sizeof(*out));
	if (elf_getphdrnum(elf, &n) != 0)
		return -1;
	if (!n)
		return 0;
	out->load = calloc(n, sizeof(*out->load));
	if (!out->load)
		return -1;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			ms_elf_loads_release(out);
			return -1;
		}
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		out->load[out->n++] = (struct ms_elf_load){
			.offset = ph.p_offset, .filesz = ph.p_filesz, .vaddr = ph.p_vaddr,
		};
	}
	return 0;
}

bool ms_elf_has_code(Elf *elf)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n) != 0)
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && ph.p_filesz)
			return true;
	}
	return false;
}

void ms_elf_loads_release(struct ms_elf_loads *l)
{
	free(l->load);
	memset(l, 0, sizeof(*l));
}

bool ms_elf_loads_vaddr(const struct ms_elf_loads *l, uint64_t off, uint64_t *vaddr)
{
	uint32_t i;

	for (i = 0; i < l->n; i++) {
		const struct ms_elf_load *s = &l->load[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = s->vaddr + (off - s->offset);
			return true;
		}
	}
	return false;
}

uint64_t ms_stat_mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
}

int ms_elf_file_open_fd(struct ms_elf_file *f, int fd)
{
	memset(f, 0, sizeof(*f));
	f->fd = fd;
	if (ms_elf_setup() < 0) {
		ms_elf_file_close(f);
		return MS_SYM_BAD_ELF;
	}
	if (fstat(f->fd, &f->st) < 0 || !S_ISREG(f->st.st_mode)) {
		ms_elf_file_close(f);
		return MS_SYM_NO_FILE;
	}
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		ms_elf_file_close(f);
		return MS_SYM_BAD_ELF;
	}
	f->build_id_len = ms_elf_build_id(f->elf, f->build_id);
	return MS_SYM_OK;
}

int ms_elf_file_open(struct ms_elf_file *f, const char *path)
{
	/*
	 * Paths come from streams and debug folders: a FIFO, a device or a
	 * folder put there must neither hang nor be read. Links are followed:
	 * /usr/lib/debug/.build-id holds links, and so may a --debug-dir.
	 */
	int fd = ms_open_regular(AT_FDCWD, path, 0, MS_ELF_FILE_MAX, NULL, NULL);

	if (fd < 0) {
		memset(f, 0, sizeof(*f));
		f->fd = -1;
		return MS_SYM_NO_FILE;
	}
	return ms_elf_file_open_fd(f, fd);
}

int ms_elf_memory_open(struct ms_elf_file *f, void *image, size_t len)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->st.st_size = (off_t)len;
	if (ms_elf_setup() < 0 || !image || !len)
		return MS_SYM_BAD_ELF;
	f->elf = elf_memory(image, len);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		ms_elf_file_close(f);
		return MS_SYM_BAD_ELF;
	}
	f->build_id_len = ms_elf_build_id(f->elf, f->build_id);
	return MS_SYM_OK;
}

void ms_elf_file_close(struct ms_elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	f->elf = NULL;
	f->fd = -1;
}

int ms_elf_file_is_module(const struct ms_elf_file *f, const struct ms_module *m)
{
	if (m->build_id_len) {
		if (f->build_id_len == m->build_id_len &&
		    !memcmp(f->build_id, m->build_id, m->build_id_len))
			return MS_SYM_OK;
		return MS_SYM_IDENTITY;
	}
	if (!m->size)
		return MS_SYM_IDENTITY;
	if (major(f->st.st_dev) != m->dev_maj || minor(f->st.st_dev) != m->dev_min ||
	    (uint64_t)f->st.st_ino != m->ino || (uint64_t)f->st.st_size != m->size)
		return MS_SYM_IDENTITY;
	if (m->mtime && ms_stat_mtime_ns(&f->st) != m->mtime)
		return MS_SYM_IDENTITY;
	return MS_SYM_OK;
}

int ms_elf_file_open_module(struct ms_elf_file *f, const char *path, const struct ms_module *m)
{
	int r = ms_elf_file_open(f, path);

	if (r != MS_SYM_OK)
		return r;
	r = ms_elf_file_is_module(f, m);
	if (r != MS_SYM_OK)
		ms_elf_file_close(f);
	return r;
}

Elf_Scn *ms_elf_section(Elf *elf, const char *want, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}
