/*
 * The process a recording follows: one ms-collect launches, or one it
 * attaches to.
 *
 * Launch: ms_launch_start() forks a child that waits at a gate (a pipe)
 * so the events can be opened on it before it runs anything; ms_launch_go()
 * opens the gate and learns whether the exec worked (a second, close-on-exec
 * pipe carries errno back, or closes on success). The child gets default
 * signal dispositions and an empty signal mask, dies with its parent
 * (PR_SET_PDEATHSIG), and execs with PATH search like a shell.
 *
 * Every function that waits reaps only the pid it is given. Functions
 * return -1 after a message unless said otherwise.
 */
#ifndef MS_PERF_TARGET_H
#define MS_PERF_TARGET_H

#include <stdbool.h>
#include <sys/types.h>

struct ms_launch {
	pid_t pid;
	int gate_fd;	/* write end: one byte releases the child */
	int err_fd;	/* read end: errno of a failed exec, EOF after exec */
};

/*
 * Fork the child for argv (argv[0] is looked up in PATH). stdout_fd >= 0
 * becomes the child's stdout (ms-collect's stdout may be the stream).
 */
int ms_launch_start(struct ms_launch *l, char *const argv[], int stdout_fd);
/*
 * Open the gate. Returns 0 when the child has exec'd, the errno of a failed
 * exec (> 0; the child then exits 127), or -1 after a message.
 */
int ms_launch_go(struct ms_launch *l);
/* Close the gate without releasing the child: it exits; reap it. */
void ms_launch_abort(struct ms_launch *l);

/*
 * Reap pid if it has ended: 1 with *status set, 0 while it runs (nohang),
 * -1 after a message.
 */
int ms_child_reap(pid_t pid, bool nohang, int *status);
/*
 * End child pid: send sig (unless 0), wait up to grace_ms for it to end,
 * then SIGKILL it; reap it. Returns 0 with *status, or -1 after a message.
 */
int ms_child_terminate(pid_t pid, int sig, int grace_ms, int *status);

/* A shell's exit code for a wait status: the code, or 128 + signal. */
int ms_exit_code_of(int status);
/* What a shell says when exec fails with err: 127 not found, 126 otherwise. */
int ms_exec_failure_code(int err);

/*
 * A pidfd for pid (it becomes readable when the process has ended).
 * Returns the fd; -1 with errno ESRCH and no message when there is no such
 * process; -1 after a message otherwise (pid is a thread, not a process);
 * -2 without a message when the process exists but the kernel has no
 * pidfds (watch it with ms_proc_alive()).
 */
int ms_pidfd_open(pid_t pid);

#endif
