/*
 * A second compilation unit for symbols-index-test, built with -g whatever
 * the build's flags: its own set in .debug_aranges, its own line table.
 */
int symbols_index_aux_a(int x);
int symbols_index_aux_b(int x);

__attribute__((noinline)) int symbols_index_aux_a(int x)
{
	int y = x * 7;

	return y + 3;
}

__attribute__((noinline)) int symbols_index_aux_b(int x)
{
	return symbols_index_aux_a(x) * 2 + 1;
}
