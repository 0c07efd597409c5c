/*-------------------------------------------------------------------------
 *
 * process.c
 *		A child process run for what it writes on its standard output: a
 *		profile's credential_process (credentials.c).
 *
 * It runs through /bin/sh -c, as the AWS SDKs run a credential_process on
 * POSIX systems, in a process group of its own, with the backend's
 * environment, its standard input and standard error /dev/null (the
 * latter may hold secrets: it is never read, nor left to reach the
 * server log), every other descriptor of the backend closed and every
 * signal at its default.  Nothing waits on it uninterruptibly: its output
 * is read without blocking whenever the caller looks (child_done), and a
 * process found running past its deadline, or that wrote more than it
 * may, is killed with its process group.  A process still running when
 * the memory context holding it goes away, or when the backend exits, is
 * killed and reaped.
 *
 *-------------------------------------------------------------------------
 */
#include "wire/wire.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/ipc.h"

extern char **environ;

/* A child process and what it wrote. */
struct ChildProcess
{
	pid_t		pid;			/* 0 once reaped */
	int			fd;				/* its standard output's read end, or -1 */
	StringInfoData output;
	size_t		max_output;
	long		timeout_ms;
	TimestampTz deadline;
	int			status;			/* waitpid's, once reaped */
	char	   *failure;		/* why it was killed or failed, or NULL */
	dlist_node	node;			/* in running, until reaped */
};

/* The processes not reaped yet, killed when the backend exits. */
static dlist_head running = DLIST_STATIC_INIT(running);
static bool exit_callback_set = false;

/* Reap p, killing its process group first when kill_group; idempotent. */
static void
reap(ChildProcess *p, bool kill_group)
{
	if (p->pid == 0)
		return;
	if (kill_group)
		(void) kill(-p->pid, SIGKILL);
	while (waitpid(p->pid, &p->status, 0) < 0)
	{
		if (errno != EINTR)
		{
			p->status = -1;
			break;
		}
	}
	p->pid = 0;
	dlist_delete(&p->node);
}

/*
 * Stop p: kill its process group and reap it if it still runs, close its
 * pipe and wipe what it wrote (credentials); idempotent.
 */
void
child_stop(ChildProcess *p)
{
	reap(p, true);
	if (p->fd >= 0)
	{
		close(p->fd);
		p->fd = -1;
	}
	if (p->output.data)
		explicit_bzero(p->output.data, p->output.len);
}

/* Memory context callback: the memory of a process goes away. */
static void
child_gone(void *arg)
{
	child_stop(arg);
}

/* proc_exit callback: kill and reap every process still running. */
static void
stop_running(int code, Datum arg)
{
	dlist_mutable_iter it;

	dlist_foreach_modify(it, &running)
		child_stop(dlist_container(ChildProcess, node, it.cur));
}

/*
 * Start command through /bin/sh -c, to run at most timeout_ms and write
 * at most max_output bytes.  Returns the process, allocated in the
 * current memory context (which stops it when it goes away), or NULL
 * with the reason in err when it could not be started.
 */
ChildProcess *
child_start(const char *command, long timeout_ms, size_t max_output,
			char *err, size_t errlen)
{
	ChildProcess *p = palloc0(sizeof(ChildProcess));
	MemoryContextCallback *cb = palloc(sizeof(MemoryContextCallback));
	char	   *argv[] = {"/bin/sh", "-c", unconstify(char *, command), NULL};
	posix_spawn_file_actions_t actions;
	posix_spawnattr_t attr;
	sigset_t	all;
	sigset_t	none;
	int			fds[2];
	int			rc;

	initStringInfo(&p->output);
	p->fd = -1;
	p->max_output = max_output;
	p->timeout_ms = timeout_ms;
	p->deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);
	if (!exit_callback_set)
	{
		on_proc_exit(stop_running, 0);
		exit_callback_set = true;
	}
	if (pipe2(fds, O_CLOEXEC) != 0)
	{
		snprintf(err, errlen, "could not create a pipe: %m");
		return NULL;
	}
	sigfillset(&all);
	sigemptyset(&none);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
							 POSIX_SPAWN_SETSIGMASK);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
	posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclosefrom_np(&actions, 3);
	rc = posix_spawn(&p->pid, "/bin/sh", &actions, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	posix_spawnattr_destroy(&attr);
	close(fds[1]);
	if (rc != 0)
	{
		close(fds[0]);
		snprintf(err, errlen, "could not run /bin/sh: %s", strerror(rc));
		return NULL;
	}
	p->fd = fds[0];
	(void) fcntl(p->fd, F_SETFL, O_NONBLOCK);
	dlist_push_tail(&running, &p->node);
	cb->func = child_gone;
	cb->arg = p;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
	return p;
}

/*
 * Read what p wrote so far, without waiting; false when it failed (read
 * error, or too much output), with p->failure set and p stopped.
 */
static bool
drain(ChildProcess *p)
{
	char		chunk[8192];

	while (p->fd >= 0)
	{
		ssize_t		n = read(p->fd, chunk, sizeof(chunk));

		if (n == 0)
		{
			close(p->fd);
			p->fd = -1;
		}
		else if (n < 0 && errno == EINTR)
			continue;
		else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		else if (n < 0 || p->output.len + (size_t) n > p->max_output)
		{
			p->failure = n < 0 ? psprintf("could not be read from: %m") :
				psprintf("wrote more than %zu bytes and was killed", p->max_output);
			explicit_bzero(chunk, sizeof(chunk));
			child_stop(p);
			return false;
		}
		else
			appendBinaryStringInfo(&p->output, chunk, (int) n);
	}
	explicit_bzero(chunk, sizeof(chunk));
	return true;
}

/*
 * Whether p has ended, without waiting: what it wrote is read, it is
 * reaped once it has exited, and killed when it runs past its deadline
 * or writes more than it may.
 */
bool
child_done(ChildProcess *p)
{
	if (p->pid == 0)
		return true;
	if (!drain(p))
		return true;
	if (waitpid(p->pid, &p->status, WNOHANG) == p->pid)
	{
		p->pid = 0;
		dlist_delete(&p->node);
		/* what it wrote before it exited */
		(void) drain(p);
		return true;
	}
	if (GetCurrentTimestamp() >= p->deadline)
	{
		p->failure = psprintf("did not finish within %ld s and was killed", p->timeout_ms / 1000);
		child_stop(p);
		return true;
	}
	return false;
}

/*
 * The outcome of p, which has ended: its exit status, with its output in
 * *output (owned by p, wiped when p is stopped); or -1 with why it failed
 * in err, a phrase to follow "it" (killed for its deadline or its output,
 * ended by a signal).
 */
int
child_result(ChildProcess *p, StringInfo *output, char *err, size_t errlen)
{
	Assert(p->pid == 0);
	*output = &p->output;
	if (p->failure)
		strlcpy(err, p->failure, errlen);
	else if (p->status == -1)
		strlcpy(err, "could not be waited for", errlen);
	else if (WIFSIGNALED(p->status))
		snprintf(err, errlen, "was ended by signal %d", WTERMSIG(p->status));
	else
		return WEXITSTATUS(p->status);
	return -1;
}
