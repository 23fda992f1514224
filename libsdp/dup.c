// SPDX-License-Identifier: GPL-2.0
/*
 * libsdp: close(), dup(), dup2(), dup3(), fcntl(), close_range() and
 * closefrom() -- the table follows the program's descriptors, and the
 * library's own descriptors are kept out of the program's way.  See
 * libsdp.c for the whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "libsdp_int.h"

/* -------------------------------------------------------------------- */
/* close, dup, fcntl, shutdown                                          */

/* table_each(): forget @x's registrations in the epoll set *@arg. */
static bool forget_epoll_set(void *arg, int fd, struct fdent *x)
{
	int epfd = *(const int *)arg;
	unsigned int k, n = 0;

	(void)fd;
	for (k = 0; k < x->n_eps; k++)
		if (x->eps[k].epfd != epfd)
			x->eps[n++] = x->eps[k];
	x->n_eps = n;
	return true;
}

/* Take @fd out of the table as it is being closed; under the lock.
 * Returns a descriptor to close after unlocking (or -1). */
static int drop(int fd)
{
	struct fdent *e = get(fd);

	if (!e || e->kind == FD_HIDDEN)
		return -1;
	set(fd, NULL);
	if (e->kind == FD_EPOLL) {
		/* Registrations in this set are gone with it. */
		table_each(forget_epoll_set, &fd);
	}
	return free_entry(e);
}

EXPORT int close(int fd)
{
	struct fdent *e;
	sigset_t old;
	int cfd;

	ensure_init();
	e = get(fd);
	if (!e)
		return real.close(fd);
	lock_tab(&old);
	e = get(fd);
	if (e && e->kind == FD_HIDDEN) {
		unlock_tab(&old);
		errno = EBADF;	/* not the program's */
		return -1;
	}
	cfd = drop(fd);
	unlock_tab(&old);
	if (cfd >= 0)
		real.close(cfd);
	return real.close(fd);
}

/* Give the new descriptor @nfd the book-keeping of @fd; under the lock. */
static void copy_entry(int fd, int nfd)
{
	struct fdent *e = get(fd), *c;

	if (!e || e->kind == FD_HIDDEN || e->kind == FD_EPOLL)
		return;
	if (e->kind == FD_CAND) {
		/* Two descriptors, one TCP socket: it stays TCP. */
		set(fd, NULL);
		free_entry(e);
		return;
	}
	if (e->kind == FD_CONNECTING)
		return;	/* settled by the caller first */
	c = dup_entry(e);
	if (!c)
		return;
	if (c->kind == FD_FAILED)
		c->kind = FD_SDP;	/* the error is reported once */
	set(nfd, c);
}

/* table_each(): a hidden descriptor moved from @arg[0] to @arg[1]. */
static bool moved_hidden(void *arg, int fd, struct fdent *x)
{
	const int *move = arg;

	(void)fd;
	if (x->shadow && x->shadow->fd == move[0])
		x->shadow->fd = move[1];
	if (x->kind == FD_CONNECTING && x->tcp_fd == move[0])
		x->tcp_fd = move[1];
	return true;
}

/* Move a hidden descriptor out of the way of dup2(..., @fd). */
static int rehome_hidden(int fd)
{
	int nfd;

	nfd = real.fcntl(fd, F_DUPFD_CLOEXEC, hidden_min);
	if (nfd < 0)
		nfd = real.fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0)
		return -1;
	if (fd == log_fd)
		log_fd = nfd;
	table_each(moved_hidden, (int[2]){ fd, nfd });
	set(fd, NULL);
	mark_hidden(nfd);
	real.close(fd);
	return 0;
}

/* Settle a "both" connect before its descriptor is duplicated. */
static void settle_for_dup(int fd)
{
	struct fdent *e = get(fd);

	if (e && e->kind == FD_CONNECTING) {
		long long left = e->deadline - now_ms();

		settle(fd, left > 0 ? (int)left : 0);
		settle(fd, 0);
	}
}

static int do_dup(int fd, int nfd, int flags, int how)
{
	struct fdent *e;
	sigset_t old;
	int ret, cfd = -1;

	e = get(fd);
	if (e && e->kind == FD_HIDDEN) {
		errno = EBADF;
		return -1;
	}
	if (how == 2 && fd == nfd)
		return real.dup2(fd, nfd);
	settle_for_dup(fd);
	if (how >= 2) {
		lock_tab(&old);
		e = get(nfd);
		if (e && e->kind == FD_HIDDEN && rehome_hidden(nfd) < 0) {
			unlock_tab(&old);
			errno = EBUSY;
			return -1;
		}
		unlock_tab(&old);
	}
	switch (how) {
	case 0:
		ret = real.dup(fd);
		break;
	case 1:
		ret = real.fcntl(fd, flags, nfd);
		break;
	case 2:
		ret = real.dup2(fd, nfd);
		break;
	default:
		ret = real.dup3(fd, nfd, flags);
		break;
	}
	if (ret < 0 || (!get(fd) && !get(ret)))
		return ret;
	lock_tab(&old);
	cfd = drop(ret);	/* what dup2() closed */
	copy_entry(fd, ret);
	unlock_tab(&old);
	if (cfd >= 0)
		real.close(cfd);
	return ret;
}

EXPORT int dup(int fd)
{
	ensure_init();
	return do_dup(fd, -1, 0, 0);
}

EXPORT int dup2(int fd, int nfd)
{
	ensure_init();
	return do_dup(fd, nfd, 0, 2);
}

EXPORT int dup3(int fd, int nfd, int flags)
{
	ensure_init();
	return do_dup(fd, nfd, flags, 3);
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	ensure_init();
	if ((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && get(fd))
		return do_dup(fd, (int)(long)arg, cmd, 1);
	return real.fcntl(fd, cmd, arg);
}

/* The same function under its large-file name. */
EXPORT int fcntl64(int fd, int cmd, ...) __attribute__((alias("fcntl")));

/* close_range() and closefrom() spare the library's descriptors. */
static int close_range_common(unsigned int first, unsigned int last,
			      int flags)
{
	unsigned int lo = first;
	sigset_t old;
	int ret = 0;

	lock_tab(&old);
	for (unsigned int fd = first; ; fd++) {
		bool end = fd == last ||
			   fd >= (unsigned int)MAX_TRACKED_FD - 1;
		struct fdent *e;

		if (fd >= (unsigned int)MAX_TRACKED_FD)
			break;
		if (!atomic_load(&chunks[fd >> CHUNK_BITS])) {
			/* nothing tracked in this chunk */
			if (end || (fd | (CHUNK_SIZE - 1)) >= last)
				break;
			fd |= CHUNK_SIZE - 1;
			continue;
		}
		e = get(fd);

		if (e && e->kind == FD_HIDDEN) {
			if (fd > lo)
				ret |= syscall(SYS_close_range, lo, fd - 1,
					       flags);
			lo = fd + 1;
		} else if (e && !(flags & CLOSE_RANGE_CLOEXEC)) {
			int cfd = drop(fd);

			if (cfd >= 0)
				real.close(cfd);
		}
		if (end)
			break;
	}
	if (lo <= last)
		ret |= syscall(SYS_close_range, lo, last, flags);
	unlock_tab(&old);
	return ret ? -1 : 0;
}

EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	ensure_init();
	if (first > last) {
		errno = EINVAL;
		return -1;
	}
	return close_range_common(first, last, flags);
}

EXPORT void closefrom(int lowfd)
{
	ensure_init();
	if (lowfd < 0)
		lowfd = 0;
	if (close_range_common(lowfd, ~0U, 0) < 0) {
		/* as glibc: a kernel without close_range */
		for (int fd = lowfd; fd < MAX_TRACKED_FD; fd++) {
			struct fdent *e = get(fd);

			if (!(e && e->kind == FD_HIDDEN))
				close(fd);
		}
	}
}

