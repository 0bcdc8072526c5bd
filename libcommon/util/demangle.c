#include "util/demangle.h"

#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

bool ms_is_mangled(const char *name)
{
	/* _Z: Itanium C++ and Rust legacy; _R: Rust v0. Both need more after. */
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R') && name[2];
}

char *ms_demangle(const char *name)
{
	if (!ms_is_mangled(name))
		return NULL;
	/*
	 * DMGL_AUTO tries Rust first: a legacy Rust name is also a valid C++
	 * name, and only the Rust demangler decodes its $LT$-style escapes and
	 * drops the hash. DMGL_VERBOSE would spell out std::basic_string<...>.
	 */
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}
