/*
 * A tiny ELF for the unwind and symbols unit tests: functions with known
 * names, a local one, one without a size (hand-written assembly), and a
 * build id fixed by the Makefile (-Wl,--build-id=0x...). A second build is
 * stripped and exports its globals, so only .dynsym names them.
 */
__attribute__((noinline, used)) int tiny_alpha(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline, used)) int tiny_beta(int x)
{
	return tiny_alpha(x) + 2;
}

__attribute__((noinline, used)) static int tiny_local(int x)
{
	return x ^ 0x55;
}

/* No .size: a zero-size function symbol. */
__asm__(".text\n"
	".globl tiny_unsized\n"
	".type tiny_unsized, @function\n"
	"tiny_unsized:\n"
	"\tnop\n\tnop\n\tnop\n\tnop\n"
	"\tret\n");

int main(int argc, char **argv)
{
	(void)argv;
	return tiny_beta(argc) + tiny_local(argc);
}
