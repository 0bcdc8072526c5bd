/*
 * Run microscope's stages as a Unix pipeline: stage 0's stdout feeds stage
 * 1's stdin, and so on. Used by the front command (microscope record,
 * symbolize, ...), which must forward signals, leave no process behind and
 * turn a failure into one message naming the stage that caused it.
 *
 * Stages are looked up in the directory of the running executable first
 * (the build tree, or the installed bindir), then in PATH.
 *
 * Signals: only stage 0 (the source) acts on SIGINT, SIGTERM and SIGHUP,
 * whether they come from the terminal, the caller or a kill of the whole
 * process group; later stages start with them ignored so that they drain
 * what the source wrote after it stopped. Stage 0 gets
 * PR_SET_PDEATHSIG(SIGTERM), so a killed front command stops the source,
 * and the later stages end at the end of their input: none is left
 * running.
 */
#ifndef MS_UTIL_PIPELINE_H
#define MS_UTIL_PIPELINE_H

#include <stdbool.h>
#include <sys/types.h>

#define MS_PIPELINE_STAGES_MAX 8

struct ms_stage {
	const char *name;	/* "ms-collect": program name, also in messages */
	char *const *argv;	/* argv[0] is replaced by the resolved path */
	/*
	 * The descriptor the stage writes the next stage's input on: 0 for
	 * its stdout. ms-collect takes 3 (--output-fd 3), so that a program
	 * it launches keeps the caller's stdout.
	 */
	int out_fd;
	pid_t pid;
	int status;		/* as from waitpid() */
	bool done;
};

struct ms_pipeline {
	unsigned n;
	struct ms_stage stages[MS_PIPELINE_STAGES_MAX];
	/*
	 * Stages start last first; when set, called after every other stage
	 * started and before stage 0 does, so that stage 0's argv may name
	 * their pids (microscope record --budget counts their CPU time).
	 */
	void (*before_source)(struct ms_pipeline *p, void *arg);
	void *before_source_arg;
};

/* Find program name next to the running executable or in PATH. */
char *ms_stage_path(const char *name);

/*
 * Start every stage. Returns 0, or -1 after a message; on failure the
 * stages already started are killed and reaped.
 */
int ms_pipeline_start(struct ms_pipeline *p);

/* Send sig to stage i if it is still running. */
void ms_pipeline_signal(struct ms_pipeline *p, unsigned i, int sig);

/*
 * Wait for every stage. SIGINT, SIGTERM and SIGHUP received by the caller
 * meanwhile are forwarded to stage 0. Returns when all have exited.
 */
void ms_pipeline_wait(struct ms_pipeline *p);

/*
 * Which stage caused the pipeline to fail: the most upstream stage that
 * failed on its own, skipping stages that only reacted to a neighbour
 * (downstream closed the pipe: MS_EXIT_PIPE; input cut short because an
 * upstream stage failed: MS_EXIT_TRUNCATED). source_ok says whether stage
 * 0's exit status is a pass-through (a launched program's status) rather
 * than its own failure; it is then judged only by dying from a signal.
 * Returns the index, or -1 when every stage succeeded.
 */
int ms_pipeline_culprit(const struct ms_pipeline *p, bool source_status_is_target);

/* One message describing how stage i ended ("ms-decode exited with status 1"). */
void ms_pipeline_describe(const struct ms_pipeline *p, unsigned i, char *buf, size_t len);

#endif
