/*
 * python/bpflayout.h: the BPF walker's layout made from a CPython layout,
 * refused when a field falls outside the window the walker reads, and the
 * pid namespace in the kernel's encoding.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <cmocka.h>

#include "bpf/pywindow.h"
#include "python/bpflayout.h"

static void layout_of(unsigned minor, struct ms_py_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->version_hex = 0x03000000u | minor << 16;
	l->major = 3;
	l->minor = (uint8_t)minor;
	l->runtime = 0x7f0000001000ull;
	snprintf(l->module, sizeof(l->module), "libpython3.x.so");
	assert_int_equal(ms_py_table(minor, &l->off), 0);
}

static void copies_the_tables(void **state)
{
	struct ms_py_layout l;
	struct ms_bpf_py_layout b;
	char err[256];

	(void)state;
	layout_of(11, &l);
	assert_int_equal(ms_bpf_py_layout_make(&l, 4, 0xeffffffcu, 64, &b, err, sizeof(err)), 0);
	assert_int_equal(b.runtime, l.runtime);
	assert_int_equal(b.pidns_dev, 4);
	assert_int_equal(b.pidns_ino, 0xeffffffcu);
	assert_int_equal(b.find_bound, 64);
	assert_int_equal(b.ts_native_tid, 160);
	assert_int_equal(b.cf_current_frame, 8);
	assert_int_equal(b.fr_is_entry, 68);
	assert_int_equal(b.owner_cstack, -1);
	assert_int_equal(b.gil_in_runtime, 360);
	assert_int_equal(b.gil_ptr_in_interp, -1);
	assert_int_equal(b.gil_locked, 16);
	assert_int_equal(b.gil_holder, 8);
	assert_int_equal(b.co_linetable, 136);

	layout_of(12, &l);
	assert_int_equal(ms_bpf_py_layout_make(&l, 4, 1, MS_BPF_PY_FIND_MAX, &b, err, sizeof(err)), 0);
	assert_int_equal(b.fr_is_entry, -1);
	assert_int_equal(b.owner_cstack, 3);
	assert_int_equal(b.gil_in_runtime, -1);
	assert_int_equal(b.gil_ptr_in_interp, 384);

	/* No GIL known: both places -1, the record says unknown. */
	l.off.gil_ptr_in_interp = -1;
	l.off.gil_locked = l.off.gil_holder = -1;
	assert_int_equal(ms_bpf_py_layout_make(&l, 4, 1, 1, &b, err, sizeof(err)), 0);
	assert_int_equal(b.gil_in_runtime, -1);
	assert_int_equal(b.gil_ptr_in_interp, -1);
	assert_int_equal(b.gil_locked, 0);
}

static void refuses_what_the_walker_cannot_read(void **state)
{
	struct ms_py_layout l;
	struct ms_bpf_py_layout b;
	char err[256];

	(void)state;
	/* native_thread_id past the thread state's window */
	layout_of(12, &l);
	l.off.ts_native_tid = MS_BPF_PY_TS_WINDOW - 4;
	assert_int_equal(ms_bpf_py_layout_make(&l, 4, 1, 64, &b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "native_thread_id"));
	/* the owner byte just past the frame's window; just inside is fine */
	layout_of(12, &l);
	l.off.fr_owner = MS_BPF_PY_FRAME_WINDOW;
	assert_int_equal(ms_bpf_py_layout_make(&l, 4, 1, 64, &b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "owner"));
	l.off.fr_owner = MS_BPF_PY_FRAME_WINDOW - 1;
	assert_int_equal(ms_bpf_py_layout_make(&l, 4, 1, 64, &b, err, sizeof(err)), 0);
	/* previous, whose 8 bytes would straddle the window's end */
	layout_of(11, &l);
	l.off.fr_previous = MS_BPF_PY_FRAME_WINDOW - 4;
	assert_int_equal(ms_bpf_py_layout_make(&l, 4, 1, 64, &b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "previous"));
	/* is_entry on 3.11 */
	layout_of(11, &l);
	l.off.fr_is_entry = MS_BPF_PY_FRAME_WINDOW;
	assert_int_equal(ms_bpf_py_layout_make(&l, 4, 1, 64, &b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is_entry"));
	/* the GIL's fields */
	layout_of(11, &l);
	l.off.gil_locked = MS_BPF_PY_GIL_WINDOW - 2;
	assert_int_equal(ms_bpf_py_layout_make(&l, 4, 1, 64, &b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "locked"));
	/* a GIL in both places, or with no .locked: ms_py_offsets_check's */
	layout_of(12, &l);
	l.off.gil_in_runtime = 360;
	assert_int_equal(ms_bpf_py_layout_make(&l, 4, 1, 64, &b, err, sizeof(err)), -1);
	layout_of(12, &l);
	l.off.gil_holder = -1;
	assert_int_equal(ms_bpf_py_layout_make(&l, 4, 1, 64, &b, err, sizeof(err)), -1);
	/* py_find's bound */
	layout_of(12, &l);
	assert_int_equal(ms_bpf_py_layout_make(&l, 4, 1, 0, &b, err, sizeof(err)), -1);
	assert_int_equal(ms_bpf_py_layout_make(&l, 4, 1, MS_BPF_PY_FIND_MAX + 1, &b, err,
						sizeof(err)), -1);
	assert_non_null(strstr(err, "bound"));
}

static void pidns_in_the_kernels_encoding(void **state)
{
	struct stat st;
	uint64_t dev, ino;
	char err[256];

	(void)state;
	assert_int_equal(stat("/proc/self/ns/pid", &st), 0);
	assert_int_equal(ms_bpf_py_pidns(getpid(), &dev, &ino, err, sizeof(err)), 0);
	assert_int_equal(dev, (uint64_t)major(st.st_dev) << 20 | minor(st.st_dev));
	assert_int_equal(ino, st.st_ino);
	assert_int_equal(ms_bpf_py_pidns(0x7ffffff0, &dev, &ino, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/proc/2147483632/ns/pid"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(copies_the_tables),
		cmocka_unit_test(refuses_what_the_walker_cannot_read),
		cmocka_unit_test(pidns_in_the_kernels_encoding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
