/*
 * Demangling of linkage names for people: C++ (Itanium ABI), Rust legacy
 * (_ZN...17h<hash>E, the hash dropped) and Rust v0 (_R...), through
 * libiberty's cplus_demangle, the demangler that libstdc++'s
 * __cxa_demangle and binutils are built from. Other names are not touched.
 */
#ifndef MS_UTIL_DEMANGLE_H
#define MS_UTIL_DEMANGLE_H

#include <stdbool.h>

/* Whether name looks mangled (a C++ or Rust linkage name). */
bool ms_is_mangled(const char *name);
/*
 * The demangled form of name, malloc'd (the caller frees it), or NULL when
 * name is not mangled, is malformed, or memory ran out. C++ names keep
 * their parameter lists ("ns::f<int>(int)"); GCC's clone suffixes are kept
 * as libiberty writes them ("f() [clone .cold]").
 */
char *ms_demangle(const char *name);

#endif
