# Random folded stacks for scripts/bench/70-analysis.sh, the same bytes on
# every run and every awk: STACKS lines of 8 to 40 frames, each one of
# FUNCS functions "fn_N", counts 1..59 paired so that two lines weigh 60
# (STACKS 300000 weigh 9,000,000 samples).
#   awk -v stacks=300000 -v funcs=3000 -f folded-stacks.awk > big.folded
# Park-Miller's generator (seed 17): its products stay below 2^46, exact
# in the doubles every awk computes with, where rand() differs by awk.
function rnd(n) {
	seed = (seed * 16807) % 2147483647
	return seed % n
}
BEGIN {
	seed = 17
	for (i = 0; i < stacks; i++) {
		d = 8 + rnd(33)
		line = "fn_" rnd(funcs)
		for (k = 1; k < d; k++)
			line = line ";fn_" rnd(funcs)
		if (i % 2 == 0)
			c = 1 + rnd(59)
		else
			c = 60 - c
		print line, c
	}
}
