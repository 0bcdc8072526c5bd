#include "perf/target.h"
#include "perf/procfs.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Only async-signal-safe calls from here to exec: the child of a fork. */
static noreturn void run_child(int gate_rd, int err_wr, char *const argv[], int stdout_fd,
			   pid_t parent)
{
	sigset_t none;
	char c;
	ssize_t n;
	int err;

	/* What ms-collect changed for itself must not reach the program. */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Never outlive ms-collect, even if it is killed. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	if (stdout_fd >= 0 && stdout_fd != STDOUT_FILENO && dup2(stdout_fd, STDOUT_FILENO) < 0)
		_exit(127);
	do
		n = read(gate_rd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127);	/* the gate was closed: setup failed */
	close(gate_rd);
	execvp(argv[0], argv);
	err = errno;
	while (write(err_wr, &err, sizeof(err)) < 0 && errno == EINTR)
		;
	_exit(127);
}

int ms_launch_start(struct ms_launch *l, char *const argv[], int stdout_fd)
{
	int gate[2], errp[2];
	pid_t parent = getpid();

	l->pid = -1;
	l->gate_fd = l->err_fd = -1;
	if (pipe2(gate, O_CLOEXEC) < 0)
		return ms_error_errno("cannot create a pipe");
	if (pipe2(errp, O_CLOEXEC) < 0) {
		close(gate[0]);
		close(gate[1]);
		return ms_error_errno("cannot create a pipe");
	}
	l->pid = fork();
	if (l->pid < 0) {
		ms_error_errno("cannot fork to run '%s'", argv[0]);
		close(gate[0]);
		close(gate[1]);
		close(errp[0]);
		close(errp[1]);
		return -1;
	}
	if (l->pid == 0) {
		close(gate[1]);
		close(errp[0]);
		run_child(gate[0], errp[1], argv, stdout_fd, parent);
	}
	close(gate[0]);
	close(errp[1]);
	l->gate_fd = gate[1];
	l->err_fd = errp[0];
	return 0;
}

int ms_launch_go(struct ms_launch *l)
{
	char go = 'g';
	int err = 0;
	ssize_t n;

	while ((n = write(l->gate_fd, &go, 1)) < 0 && errno == EINTR)
		;
	close(l->gate_fd);
	l->gate_fd = -1;
	if (n != 1) {
		close(l->err_fd);
		l->err_fd = -1;
		return ms_error_errno("cannot release pid %d from its gate", (int)l->pid);
	}
	/* EOF when exec closed the pipe; errno when exec failed. */
	while ((n = read(l->err_fd, &err, sizeof(err))) < 0 && errno == EINTR)
		;
	close(l->err_fd);
	l->err_fd = -1;
	if (n == (ssize_t)sizeof(err))
		return err > 0 ? err : ENOEXEC;
	return 0;
}

void ms_launch_abort(struct ms_launch *l)
{
	int status;

	if (l->gate_fd >= 0)
		close(l->gate_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->gate_fd = l->err_fd = -1;
	if (l->pid > 0)
		ms_child_terminate(l->pid, SIGKILL, 0, &status);
	l->pid = -1;
}

int ms_child_reap(pid_t pid, bool nohang, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, nohang ? WNOHANG : 0);

		if (r == pid)
			return 1;
		if (r == 0)
			return 0;
		if (errno != EINTR)
			return ms_error_errno("cannot wait for pid %d", (int)pid);
	}
}

int ms_child_terminate(pid_t pid, int sig, int grace_ms, int *status)
{
	struct timespec step = { 0, 5 * 1000 * 1000 };
	int r;

	if (sig)
		kill(pid, sig);
	for (int waited = 0; waited < grace_ms; waited += 5) {
		r = ms_child_reap(pid, true, status);
		if (r)
			return r < 0 ? -1 : 0;
		nanosleep(&step, NULL);
	}
	r = ms_child_reap(pid, true, status);
	if (r)
		return r < 0 ? -1 : 0;
	kill(pid, SIGKILL);
	return ms_child_reap(pid, false, status) < 0 ? -1 : 0;
}

int ms_exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return MS_EXIT_ERROR;
}

int ms_exec_failure_code(int err)
{
	return err == ENOENT || err == ENOTDIR ? 127 : 126;
}

int ms_pidfd_open(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	pid_t tgid;

	if (fd >= 0) {
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		return fd;
	}
	if (errno == ENOSYS) {
		/* No pidfds (before Linux 5.3, or valgrind): the caller polls /proc. */
		if (ms_proc_tgid(pid) == pid)
			return -2;
		errno = ESRCH;
	}
	if (errno != ESRCH && errno != ENOENT && errno != EINVAL)
		return ms_error_errno("cannot watch pid %d", (int)pid);
	/* Kernels refuse a thread's id (ENOENT or EINVAL): say which process. */
	tgid = ms_proc_tgid(pid);
	if (tgid > 0 && tgid != pid)
		return ms_error("%d is a thread of process %d: give the process id", (int)pid,
				(int)tgid);
	errno = ESRCH;
	return -1;
}
