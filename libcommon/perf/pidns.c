/* Is this the initial pid namespace: see pidns.h. */
#include "perf/pidns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

int ms_pidns_is_initial(const char *path, char *why, unsigned why_size)
{
	struct statfs fs;
	struct stat st;
	int fd, ret;

	if (!path)
		path = "/proc/self/ns/pid";
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, why_size, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstatfs(fd, &fs) < 0 || fstat(fd, &st) < 0) {
		snprintf(why, why_size, "cannot stat '%s': %s", path, strerror(errno));
		ret = -1;
	} else if ((unsigned long)fs.f_type != NSFS_MAGIC) {
		snprintf(why, why_size, "'%s' is not a namespace file (file system 0x%lx, "
			 "not nsfs)", path, (unsigned long)fs.f_type);
		ret = -1;
	} else if (st.st_ino != MS_PROC_PID_INIT_INO) {
		snprintf(why, why_size, "'%s' is pid namespace %lu, not the initial one (%u)",
			 path, (unsigned long)st.st_ino, MS_PROC_PID_INIT_INO);
		ret = 0;
	} else {
		ret = 1;
	}
	close(fd);
	return ret;
}
