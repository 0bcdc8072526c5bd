#include "elf/dcache.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cachedir.h"
#include "util/cachefile.h"
#include "util/cachelayout.h"
#include "util/publish.h"

/* The copy's trailer (util/cachefile.h): 1, the first with one. */
#define DCACHE_MAGIC "MSDEBUG"
#define DCACHE_VERSION 1

bool ms_elf_debug_compressed(Elf *elf)
{
	GElf_Shdr sh;

	return ms_elf_section(elf, ".debug_info", &sh) && (sh.sh_flags & SHF_COMPRESSED);
}

/*
 * Sections the symbolizer never reads, whose inflating would be wasted:
 * location lists (a seventh of libc6-dbg's bytes) and macros.
 */
static bool unread_section(const char *name)
{
	static const char *const names[] = {
		".debug_loclists", ".debug_loc", ".debug_macro", ".debug_macinfo",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/*
 * Write elf to fd with every compressed section inflated (as eu-elfcompress
 * -t none), except that a compressed section the symbolizer never reads is
 * written empty (SHT_NOBITS, which libdw takes as absent), keeping every
 * section's index.
 */
static int write_inflated(Elf *in, int fd)
{
	Elf *out = elf_begin(fd, ELF_C_WRITE, NULL);
	GElf_Ehdr eh;
	size_t phnum, shstrndx, i;
	Elf_Scn *scn = NULL;
	int ret = -1;

	if (!out || !gelf_getehdr(in, &eh) || elf_getphdrnum(in, &phnum) != 0 ||
	    elf_getshdrstrndx(in, &shstrndx) != 0 || !gelf_newehdr(out, gelf_getclass(in)))
		goto out;
	if (phnum) {
		if (!gelf_newphdr(out, phnum))
			goto out;
		for (i = 0; i < phnum; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(in, (int)i, &ph) || !gelf_update_phdr(out, (int)i, &ph))
				goto out;
		}
	}
	while ((scn = elf_nextscn(in, scn))) {
		GElf_Shdr sh;
		Elf_Scn *oscn;
		Elf_Data *d, *od;
		const char *name;
		bool drop;

		if (!gelf_getshdr(scn, &sh))
			goto out;
		name = elf_strptr(in, shstrndx, sh.sh_name);
		drop = (sh.sh_flags & SHF_COMPRESSED) && name && unread_section(name);
		if (drop) {
			sh.sh_type = SHT_NOBITS;
			sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
			sh.sh_size = 0;
		} else if ((sh.sh_flags & SHF_COMPRESSED) &&
			   (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, &sh))) {
			goto out;
		}
		if (!(oscn = elf_newscn(out)) || !(od = elf_newdata(oscn)))
			goto out;
		if (!drop && (d = elf_getdata(scn, NULL))) {
			od->d_buf = d->d_buf;
			od->d_type = d->d_type;
			od->d_size = d->d_size;
			od->d_align = d->d_align;
			od->d_version = d->d_version;
		} else {
			od->d_type = ELF_T_BYTE;
			od->d_size = sh.sh_type == SHT_NOBITS ? sh.sh_size : 0;
			od->d_version = EV_CURRENT;
		}
		od->d_off = 0;
		if (!gelf_update_shdr(oscn, &sh))
			goto out;
	}
	/* Extended numbering (section 0 holding the counts) is not copied: no cache. */
	if (shstrndx >= SHN_LORESERVE || phnum >= PN_XNUM)
		goto out;
	eh.e_phnum = (GElf_Half)phnum;
	eh.e_shstrndx = (GElf_Half)shstrndx;
	if (!gelf_update_ehdr(out, &eh))
		goto out;
	/* libelf lays the file out again: offsets change, addresses do not. */
	if (elf_update(out, ELF_C_WRITE) < 0)
		goto out;
	ret = 0;
out:
	if (out)
		elf_end(out);
	return ret;
}

/* Whether the file holds every section's bytes (a cut-short copy does not). */
static bool whole(Elf *elf, uint64_t size)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	size_t n;

	if (!gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &n) != 0 || !n ||
	    eh.e_shoff > size || (uint64_t)n * eh.e_shentsize > size - eh.e_shoff)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return false;
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset))
			return false;
	}
	return true;
}

bool ms_dcache_sealed(Elf *copy)
{
	size_t size = 0;
	const char *image = copy ? elf_rawfile(copy, &size) : NULL;

	return image && size &&
	       ms_cachefile_check_trailer(image, size, DCACHE_MAGIC, DCACHE_VERSION, NULL);
}

/* The cached copy at path, when it is the module's, as written, whole and inflated. */
static int open_copy(struct ms_elf_file *f, const char *path, const uint8_t *bid, uint32_t bid_len)
{
	GElf_Shdr sh;
	struct stat st;
	int fd = ms_cache_open(path, MS_ELF_FILE_MAX, &st);

	if (fd < 0) {
		memset(f, 0, sizeof(*f));
		f->fd = -1;
		return -1;
	}
	if (ms_elf_file_open_fd(f, fd) != MS_SYM_OK)
		return -1;
	if (f->build_id_len != bid_len || memcmp(f->build_id, bid, bid_len) ||
	    !whole(f->elf, (uint64_t)f->st.st_size) || !ms_elf_section(f->elf, ".debug_info", &sh) ||
	    (sh.sh_flags & SHF_COMPRESSED)) {
		ms_elf_file_close(f);
		return -1;
	}
	return 0;
}

int ms_dcache_open(struct ms_elf_file *f, Elf *elf, const uint8_t *bid, uint32_t bid_len,
		   bool fresh)
{
	struct ms_publish pub;
	char *path;
	int fd, ret = -1;

	if (!(path = ms_cache_path(MS_CACHE_DEBUG_COPY, bid, bid_len)))
		return -1;
	if (!fresh && open_copy(f, path, bid, bid_len) == 0) {
		free(path);
		return 0;
	}
	if ((fd = ms_cache_publish(&pub, path)) < 0) {
		free(path);
		return -1;
	}
	/* A cache (checked before use), mapped by every later run: see publish.h. */
	pub.cache = true;
	if (write_inflated(elf, fd) < 0 ||
	    ms_cachefile_append_trailer(fd, DCACHE_MAGIC, DCACHE_VERSION) < 0) {
		ms_publish_abort(&pub);
	} else if (ms_publish_commit(&pub) == 0) {
		ret = open_copy(f, path, bid, bid_len);
	}
	free(path);
	return ret;
}
