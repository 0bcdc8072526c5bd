/*
 * The program of the golden streams (tests/golden/README): no libc, no
 * dynamic loader, so a saved stream names one module besides [vdso], and
 * its stacks are known: _start -> spin_main -> {outer_a, outer_b} ->
 * inner -> leaf, with outer_b doing three times outer_a's work.
 *
 * Built once by tests/golden/regen and committed as tests/golden/data/spin
 * (the stream refers to it by build id); not rebuilt by make.
 */
static volatile unsigned long sink;

__attribute__((noinline)) static void leaf(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) static void inner(unsigned long n)
{
	leaf(n);
	sink++;
}

__attribute__((noinline)) static void outer_a(unsigned long n)
{
	inner(n);
	sink++;
}

__attribute__((noinline)) static void outer_b(unsigned long n)
{
	inner(3 * n);
	sink++;
}

__attribute__((noinline, used)) void spin_main(void)
{
	for (int k = 0; k < 120; k++) {
		outer_a(1000000);
		outer_b(1000000);
	}
}

/* The entry: the return address is undefined (the outermost frame), exit(0). */
__asm__(".globl _start\n"
	".type _start, @function\n"
	"_start:\n"
	"	.cfi_startproc\n"
	"	.cfi_undefined rip\n"
	"	xor %ebp, %ebp\n"
	"	and $-16, %rsp\n"
	"	call spin_main\n"
	"	mov $60, %eax\n"
	"	xor %edi, %edi\n"
	"	syscall\n"
	"	.cfi_endproc\n"
	".size _start, . - _start\n");
