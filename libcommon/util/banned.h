/*
 * Functions that are easy to misuse are banned at compile time, as git's
 * banned.h does: use snprintf, strbuf-style growth, or explicit lengths.
 * Included into every translation unit by the build (-include).
 */
#ifndef MS_BANNED_H
#define MS_BANNED_H

#include <string.h>
#include <stdio.h>

#define MS_BANNED(func) sorry_##func##_is_banned_in_microscope

#undef strcpy
#define strcpy(x, y) MS_BANNED(strcpy)
#undef strcat
#define strcat(x, y) MS_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) MS_BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) MS_BANNED(strncat)
#undef sprintf
#define sprintf(...) MS_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) MS_BANNED(vsprintf)
#undef strtok
#define strtok(x, y) MS_BANNED(strtok)
#undef gets
#define gets(x) MS_BANNED(gets)

#endif
