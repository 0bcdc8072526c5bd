#include "util/pipeline.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/error.h"

static bool executable(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

char *ms_stage_path(const char *name)
{
	char self[PATH_MAX], buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *path;

	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if (snprintf(buf, sizeof(buf), "%s/%s", self, name) < (int)sizeof(buf) &&
			    executable(buf))
				return strdup(buf);
		}
	}
	path = getenv("PATH");
	while (path && *path) {
		const char *colon = strchrnul(path, ':');
		int len = (int)(colon - path);

		if (snprintf(buf, sizeof(buf), "%.*s/%s", len ? len : 1, len ? path : ".", name) <
			    (int)sizeof(buf) && executable(buf))
			return strdup(buf);
		path = *colon ? colon + 1 : colon;
	}
	return NULL;
}

static sigset_t forwarded_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	return set;
}

/* SIGCHLD must not be ignored, or children would be reaped for us. */
static void on_sigchld(int sig)
{
	(void)sig;
}

static void kill_started(struct ms_pipeline *p)
{
	for (unsigned i = 0; i < p->n; i++) {
		if (p->stages[i].pid > 0 && !p->stages[i].done) {
			kill(p->stages[i].pid, SIGKILL);
			waitpid(p->stages[i].pid, &p->stages[i].status, 0);
			p->stages[i].done = true;
		}
	}
}

static void exec_stage(struct ms_stage *s, const char *path, unsigned index,
		       const sigset_t *old_mask)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };

	/*
	 * The source takes the signals that end a recording; later stages
	 * ignore them, from the terminal or sent to the whole group (timeout,
	 * a closed terminal, a service manager), and drain what it wrote, so
	 * the capture is whole. They end at their input's end, so with the
	 * front command gone they too end once the source has.
	 */
	if (index > 0) {
		sigaction(SIGINT, &ign, NULL);
		sigaction(SIGTERM, &ign, NULL);
		sigaction(SIGHUP, &ign, NULL);
	} else {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
	}
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, old_mask, NULL);
	execv(path, s->argv);
	fprintf(stderr, "%s: cannot run '%s': %s\n", ms_progname(), path, strerror(errno));
	_exit(127);
}

int ms_pipeline_start(struct ms_pipeline *p)
{
	sigset_t set = forwarded_signals(), old;
	struct sigaction chld = { .sa_handler = on_sigchld };
	char *paths[MS_PIPELINE_STAGES_MAX] = { 0 };
	int pipes[MS_PIPELINE_STAGES_MAX][2], rc = -1;
	unsigned i;

	for (i = 0; i < MS_PIPELINE_STAGES_MAX; i++)
		pipes[i][0] = pipes[i][1] = -1;

	for (i = 0; i < p->n; i++) {
		paths[i] = ms_stage_path(p->stages[i].name);
		if (!paths[i]) {
			ms_error("cannot find the stage program '%s' next to this program or in PATH: "
				 "build it (make) or install microscope", p->stages[i].name);
			goto out;
		}
		p->stages[i].pid = 0;
		p->stages[i].done = false;
		p->stages[i].status = 0;
	}

	for (i = 0; i + 1 < p->n; i++) {
		if (pipe2(pipes[i], O_CLOEXEC)) {
			ms_error_errno("cannot create a pipe for '%s'", p->stages[i].name);
			goto close_pipes;
		}
	}
	sigaction(SIGCHLD, &chld, NULL);
	sigprocmask(SIG_BLOCK, &set, &old);
	/* Last first: the source, started last, may be told the others' pids. */
	for (i = p->n; i-- > 0;) {
		int in = i ? pipes[i - 1][0] : -1, wr = i + 1 < p->n ? pipes[i][1] : -1;
		pid_t pid;

		if (i == 0 && p->before_source)
			p->before_source(p, p->before_source_arg);
		pid = fork();
		if (pid < 0) {
			ms_error_errno("cannot start '%s'", p->stages[i].name);
			goto fail;
		}
		if (pid == 0) {
			int out = p->stages[i].out_fd ? p->stages[i].out_fd : STDOUT_FILENO;

			if (in >= 0 && dup2(in, STDIN_FILENO) < 0)
				_exit(127);
			/* (dup2 onto itself would keep O_CLOEXEC) */
			if (wr >= 0 && (wr == out ? fcntl(out, F_SETFD, 0) : dup2(wr, out)) < 0)
				_exit(127);
			exec_stage(&p->stages[i], paths[i], i, &old);
		}
		p->stages[i].pid = pid;
		/* Its reader runs already: the pipe is the stages' own now. */
		if (wr >= 0) {
			close(pipes[i][0]);
			close(pipes[i][1]);
			pipes[i][0] = pipes[i][1] = -1;
		}
	}
	rc = 0;
	goto out;
fail:
	kill_started(p);
	sigprocmask(SIG_SETMASK, &old, NULL);
close_pipes:
	for (i = 0; i + 1 < p->n; i++) {
		if (pipes[i][0] >= 0)
			close(pipes[i][0]);
		if (pipes[i][1] >= 0)
			close(pipes[i][1]);
	}
out:
	for (i = 0; i < p->n; i++)
		free(paths[i]);
	return rc;
}

void ms_pipeline_signal(struct ms_pipeline *p, unsigned i, int sig)
{
	if (i < p->n && p->stages[i].pid > 0 && !p->stages[i].done)
		kill(p->stages[i].pid, sig);
}

static unsigned reap(struct ms_pipeline *p)
{
	unsigned running = 0;

	for (unsigned i = 0; i < p->n; i++) {
		struct ms_stage *s = &p->stages[i];

		if (s->done)
			continue;
		if (waitpid(s->pid, &s->status, WNOHANG) == s->pid)
			s->done = true;
		else
			running++;
	}
	return running;
}

void ms_pipeline_wait(struct ms_pipeline *p)
{
	sigset_t set = forwarded_signals();
	struct timespec tick = { .tv_sec = 0, .tv_nsec = 200 * 1000 * 1000 };

	/* The start blocked these signals; they are taken here, synchronously. */
	while (reap(p)) {
		int sig = sigtimedwait(&set, NULL, &tick);

		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
			ms_pipeline_signal(p, 0, sig);
	}
}

int ms_pipeline_culprit(const struct ms_pipeline *p, bool source_status_is_target)
{
	int first_truncated = -1;

	for (unsigned i = 0; i < p->n; i++) {
		int st = p->stages[i].status;

		if (WIFSIGNALED(st))
			return (int)i;
		if (!WIFEXITED(st) || WEXITSTATUS(st) == MS_EXIT_OK)
			continue;
		if (i == 0 && source_status_is_target)
			continue;
		if (WEXITSTATUS(st) == MS_EXIT_PIPE)
			continue;
		/* Cut short because someone upstream failed: a symptom. */
		if (WEXITSTATUS(st) == MS_EXIT_TRUNCATED) {
			if (first_truncated < 0)
				first_truncated = (int)i;
			continue;
		}
		return (int)i;
	}
	/*
	 * Only symptoms downstream: when the source's status is the program's,
	 * the source itself failed (it wrote no stream, or cut it short) and its
	 * status is its own.
	 */
	if (first_truncated >= 0 && source_status_is_target && WIFEXITED(p->stages[0].status) &&
	    WEXITSTATUS(p->stages[0].status) != MS_EXIT_OK)
		return 0;
	if (first_truncated >= 0)
		return first_truncated;
	/* Only broken pipes: the most downstream one reacted last. */
	for (unsigned i = p->n; i-- > 0;)
		if (WIFEXITED(p->stages[i].status) && WEXITSTATUS(p->stages[i].status) == MS_EXIT_PIPE)
			return (int)i;
	return -1;
}

void ms_pipeline_describe(const struct ms_pipeline *p, unsigned i, char *buf, size_t len)
{
	const struct ms_stage *s = &p->stages[i];

	if (WIFSIGNALED(s->status))
		snprintf(buf, len, "%s was killed by signal %d (%s)", s->name,
			 WTERMSIG(s->status), strsignal(WTERMSIG(s->status)));
	else if (WIFEXITED(s->status))
		snprintf(buf, len, "%s exited with status %d", s->name, WEXITSTATUS(s->status));
	else
		snprintf(buf, len, "%s ended abnormally", s->name);
}
