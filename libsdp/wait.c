// SPDX-License-Identifier: GPL-2.0
/*
 * libsdp: poll(), ppoll(), select(), pselect() and the epoll calls --
 * waits that include a "both" listener or a "both" connect in progress.
 * See libsdp.c for the whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libsdp_int.h"

/* -------------------------------------------------------------------- */
/* poll, ppoll, select, pselect                                         */

static long long ts_deadline(const struct timespec *ts)
{
	if (!ts)
		return -1;
	return now_ms() + ts->tv_sec * 1000LL + (ts->tv_nsec + 999999) / 1000000;
}

/* The time from now to @wake (ms, -1: none) in @ts; NULL for none. */
static const struct timespec *wake_ts(long long wake, struct timespec *ts)
{
	long long now, left;

	if (wake < 0)
		return NULL;
	now = now_ms();
	left = wake > now ? wake - now : 0;
	ts->tv_sec = left / 1000;
	ts->tv_nsec = left % 1000 * 1000000;
	return ts;
}

/*
 * The wait of the program's poll() on @fds with the shadows of "both"
 * listeners added and "both" connects settled.  @deadline in ms (-1:
 * none).  Returns the count for the program's array.
 */
static int poll_special(struct pollfd *fds, nfds_t n, long long deadline,
			const sigset_t *mask)
{
	struct pollfd stack[2 * POLL_STACK_FDS], *all = stack;
	struct shadow **shs = NULL, *shstack[POLL_STACK_FDS];
	int *owner = NULL, ostack[POLL_STACK_FDS];
	int ret;

	if (n > POLL_STACK_FDS) {
		all = malloc(2 * n * sizeof(*all));
		shs = malloc(n * sizeof(*shs));
		owner = malloc(n * sizeof(*owner));
		if (!all || !shs || !owner) {
			free(all);
			free(shs);
			free(owner);
			errno = ENOMEM;
			return -1;
		}
	} else {
		shs = shstack;
		owner = ostack;
	}

	for (;;) {
		long long wake = deadline;
		nfds_t i, extra = 0;
		struct timespec ts;
		sigset_t old;
		int count = 0;

		memcpy(all, fds, n * sizeof(*all));
		lock_tab(&old);
		for (i = 0; i < n; i++) {
			struct fdent *e = get(fds[i].fd);

			all[i].revents = 0;
			if (!e)
				continue;
			if (e->kind == FD_LISTEN_BOTH && !e->shadow->retired &&
			    (fds[i].events & (POLLIN | POLLRDNORM))) {
				shs[extra] = e->shadow;
				e->shadow->refs++;
				owner[extra] = i;
				all[n + extra] = (struct pollfd){
					e->shadow->fd, POLLIN, 0 };
				extra++;
			} else if (e->kind == FD_CONNECTING &&
				   (wake < 0 || e->deadline < wake)) {
				wake = e->deadline;
			}
		}
		unlock_tab(&old);

		ret = real.ppoll(all, n + extra, wake_ts(wake, &ts), mask);
		if (ret >= 0) {
			for (i = 0; i < extra; i++)
				all[owner[i]].revents |= all[n + i].revents &
					(POLLIN | POLLRDNORM) &
					fds[owner[i]].events;
		}
		lock_tab(&old);
		for (i = 0; i < extra; i++)
			shadow_put(shs[i]);
		unlock_tab(&old);
		if (ret < 0)
			break;

		for (i = 0; i < n; i++) {
			struct fdent *e = get(fds[i].fd);

			if (e && e->kind == FD_CONNECTING &&
			    (all[i].revents || now_ms() >= e->deadline)) {
				settle(fds[i].fd, 0);
				e = get(fds[i].fd);
				if (!e) {
					/* now a TCP connect in progress */
					all[i].revents = 0;
				} else if (e->kind == FD_CONNECTING) {
					all[i].revents = 0;
				}
			}
			e = get(fds[i].fd);
			if (e && e->kind == FD_FAILED)
				all[i].revents |= POLLERR |
					(fds[i].events & POLLOUT);
			fds[i].revents = all[i].revents;
			if (all[i].revents)
				count++;
		}
		if (count || (deadline >= 0 && now_ms() >= deadline)) {
			ret = count;
			break;
		}
	}
	if (all != stack) {
		free(all);
		free(shs);
		free(owner);
	}
	return ret;
}

/* Does the set include a descriptor poll_special() must handle? */
static bool any_special(const struct pollfd *fds, nfds_t n)
{
	nfds_t i;

	if (!atomic_load_explicit(&n_special, memory_order_relaxed))
		return false;
	for (i = 0; i < n; i++)
		if (is_special(get(fds[i].fd)))
			return true;
	return false;
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		 const sigset_t *mask)
{
	ensure_init();
	if (!any_special(fds, n))
		return real.ppoll(fds, n, ts, mask);
	return poll_special(fds, n, ts_deadline(ts), mask);
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec ts = { timeout / 1000, timeout % 1000 * 1000000 };

	ensure_init();
	if (!any_special(fds, n))
		return real.ppoll(fds, n, timeout < 0 ? NULL : &ts, NULL);
	return poll_special(fds, n, timeout < 0 ? -1 : now_ms() + timeout,
			    NULL);
}

EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout,
		      size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();
	return poll(fds, n, timeout);
}

EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n,
		       const struct timespec *ts, const sigset_t *mask,
		       size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		abort();
	return ppoll(fds, n, ts, mask);
}

/* select() through poll_special(), for sets with special descriptors. */
static int select_special(int nfds, fd_set *r, fd_set *w, fd_set *x,
			  long long deadline, const sigset_t *mask)
{
	struct pollfd stack[SELECT_STACK_FDS], *p = stack;
	int fd, n = 0, ret, count = 0;

	if (nfds > SELECT_STACK_FDS) {
		p = malloc(nfds * sizeof(*p));
		if (!p) {
			errno = ENOMEM;
			return -1;
		}
	}
	for (fd = 0; fd < nfds; fd++) {
		short ev = 0;

		if (r && FD_ISSET(fd, r))
			ev |= POLLIN | POLLRDNORM;
		if (w && FD_ISSET(fd, w))
			ev |= POLLOUT | POLLWRNORM;
		if (x && FD_ISSET(fd, x))
			ev |= POLLPRI;
		if (ev)
			p[n++] = (struct pollfd){ fd, ev, 0 };
	}
	ret = poll_special(p, n, deadline, mask);
	if (ret >= 0) {
		int i;

		for (i = 0; i < n; i++)
			if (p[i].revents & POLLNVAL)
				break;
		if (i < n) {
			errno = EBADF;
			ret = -1;
			goto out;
		}
		if (r)
			FD_ZERO(r);
		if (w)
			FD_ZERO(w);
		if (x)
			FD_ZERO(x);
		for (i = 0; i < n; i++) {
			short rv = p[i].revents;

			if (r && (p[i].events & POLLIN) &&
			    (rv & (POLLIN | POLLRDNORM | POLLHUP | POLLERR))) {
				FD_SET(p[i].fd, r);
				count++;
			}
			if (w && (p[i].events & POLLOUT) &&
			    (rv & (POLLOUT | POLLWRNORM | POLLERR))) {
				FD_SET(p[i].fd, w);
				count++;
			}
			if (x && (p[i].events & POLLPRI) && (rv & POLLPRI)) {
				FD_SET(p[i].fd, x);
				count++;
			}
		}
		ret = count;
	}
out:
	if (p != stack)
		free(p);
	return ret;
}

static bool select_has_special(int nfds, fd_set *r, fd_set *w, fd_set *x)
{
	int fd;

	if (!atomic_load_explicit(&n_special, memory_order_relaxed))
		return false;
	if (nfds > FD_SETSIZE)
		nfds = FD_SETSIZE;
	for (fd = 0; fd < nfds; fd++)
		if (((r && FD_ISSET(fd, r)) || (w && FD_ISSET(fd, w)) ||
		     (x && FD_ISSET(fd, x))) && is_special(get(fd)))
			return true;
	return false;
}

EXPORT int select(int nfds, fd_set *r, fd_set *w, fd_set *x,
		  struct timeval *tv)
{
	long long deadline = -1;
	int ret;

	ensure_init();
	if (!select_has_special(nfds, r, w, x))
		return real.select(nfds, r, w, x, tv);
	if (tv)
		deadline = now_ms() + tv->tv_sec * 1000LL +
			   (tv->tv_usec + 999) / 1000;
	ret = select_special(nfds, r, w, x, deadline, NULL);
	/* Linux select() tells how much of the timeout is left. */
	if (tv && ret >= 0) {
		long long left = deadline - now_ms();

		if (left < 0)
			left = 0;
		tv->tv_sec = left / 1000;
		tv->tv_usec = left % 1000 * 1000;
	}
	return ret;
}

EXPORT int pselect(int nfds, fd_set *r, fd_set *w, fd_set *x,
		   const struct timespec *ts, const sigset_t *mask)
{
	ensure_init();
	if (!select_has_special(nfds, r, w, x))
		return real.pselect(nfds, r, w, x, ts, mask);
	return select_special(nfds, r, w, x, ts_deadline(ts), mask);
}

/* -------------------------------------------------------------------- */
/* epoll                                                                */

/* Under the lock: keep @e's list of registrations in step with @op. */
static void track_epoll(int epfd, int op, struct fdent *e,
			const struct epoll_event *ev)
{
	struct epreg *r = NULL;
	struct fdent *ep;
	unsigned int i;

	for (i = 0; i < e->n_eps; i++)
		if (e->eps[i].epfd == epfd)
			r = &e->eps[i];
	if (op == EPOLL_CTL_DEL) {
		if (r)
			*r = e->eps[--e->n_eps];
		return;
	}
	if (!r) {
		r = realloc(e->eps, (e->n_eps + 1) * sizeof(*r));
		if (!r)
			return;
		e->eps = r;
		r = &e->eps[e->n_eps++];
		r->epfd = epfd;
	}
	r->ev = *ev;
	ep = get(epfd);
	if (!ep) {
		ep = new_entry(FD_EPOLL, 0);
		if (ep && !set(epfd, ep))
			free_entry(ep);
	}
}

EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct fdent *e;
	sigset_t old;
	int ret, err;

	ensure_init();
	e = get(fd);
	if (!e || e->kind == FD_HIDDEN || e->kind == FD_EPOLL ||
	    e->kind == FD_SDP)
		return real.epoll_ctl(epfd, op, fd, ev);
	lock_tab(&old);
	ret = real.epoll_ctl(epfd, op, fd, ev);
	err = errno;
	e = get(fd);
	if (ret == 0 && e && (e->kind == FD_CAND ||
			      e->kind == FD_CONNECTING ||
			      e->kind == FD_LISTEN_BOTH)) {
		if (op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD ||
		    op == EPOLL_CTL_DEL)
			track_epoll(epfd, op, e, ev);
		if (e->kind == FD_LISTEN_BOTH && !e->shadow->retired) {
			int sfd = e->shadow->fd;

			if (op == EPOLL_CTL_DEL) {
				real.epoll_ctl(epfd, op, sfd, NULL);
			} else if (real.epoll_ctl(epfd, op, sfd, ev) < 0 &&
				   errno == ENOENT && op == EPOLL_CTL_MOD) {
				real.epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, ev);
			}
		}
	}
	unlock_tab(&old);
	errno = err;
	return ret;
}

/* epoll_pwait2(), or epoll_pwait() in ms where libc has no epoll_pwait2. */
static int real_epoll_wait_ts(int epfd, struct epoll_event *evs, int max,
			      const struct timespec *ts, const sigset_t *mask)
{
	if (real.epoll_pwait2)
		return real.epoll_pwait2(epfd, evs, max, ts, mask);
	return real.epoll_pwait(epfd, evs, max,
				ts ? (int)(ts->tv_sec * 1000 +
					   ts->tv_nsec / 1000000) : -1,
				mask);
}

/* A "both" connect in progress that is registered in the set waited on. */
struct pending {
	int fd;
	bool hide;		/* its event is the failed SDP attempt's */
	struct epoll_event ev;	/* its registration in the set */
};

/* The "both" connects in progress in the epoll set @epfd. */
struct pendings {
	int epfd;
	struct pending *p;	/* stack[] or allocated */
	unsigned int n, cap;
	long long wake;		/* the earliest deadline, or -1 */
	bool nomem;
	struct pending stack[EPOLL_STACK_CONNECTS];
};

/* table_each(): collect @e into @arg (struct pendings) if it is one. */
static bool collect_pending(void *arg, int fd, struct fdent *e)
{
	struct pendings *ps = arg;
	unsigned int i;

	if (e->kind != FD_CONNECTING)
		return true;
	for (i = 0; i < e->n_eps; i++)
		if (e->eps[i].epfd == ps->epfd)
			break;
	if (i == e->n_eps)
		return true;
	if (ps->n == ps->cap) {
		/* More than the stack holds: grow, never drop one. */
		size_t cap = 2 * (size_t)ps->cap;
		struct pending *p = malloc(cap * sizeof(*p));

		if (!p) {
			ps->nomem = true;
			return false;
		}
		memcpy(p, ps->p, ps->n * sizeof(*p));
		if (ps->p != ps->stack)
			free(ps->p);
		ps->p = p;
		ps->cap = cap;
	}
	ps->p[ps->n++] = (struct pending){ .fd = fd };
	if (ps->wake < 0 || e->deadline < ps->wake)
		ps->wake = e->deadline;
	return true;
}

/* Was @ev (a returned event) hidden, as a failed attempt's? */
static bool hidden_event(const struct pendings *ps, const struct epoll_event *ev)
{
	unsigned int i;

	for (i = 0; i < ps->n; i++)
		if (ps->p[i].hide && ps->p[i].ev.data.u64 == ev->data.u64)
			return true;
	return false;
}

/*
 * epoll_wait() on a set that holds "both" connects in progress: settle
 * them when they have news or time is up, and hide the event of a failed
 * SDP attempt (the TCP socket now in its place reports for itself).
 * Every such connect in the set is followed, however many there are;
 * past EPOLL_STACK_CONNECTS the list is allocated, and if that fails the
 * wait fails with ENOMEM (libsdp(7)) rather than leave some unsettled.
 */
static int epoll_special(int epfd, struct epoll_event *evs, int max,
			 long long deadline, const sigset_t *mask)
{
	struct pendings ps = { .epfd = epfd, .cap = EPOLL_STACK_CONNECTS };
	int ret;

	ps.p = ps.stack;
	for (;;) {
		struct timespec ts;
		sigset_t old;
		unsigned int i;
		int j;

		ps.n = 0;
		ps.wake = deadline;
		lock_tab(&old);
		table_each(collect_pending, &ps);
		unlock_tab(&old);
		if (ps.nomem) {
			logmsg(SDP_LOG_ERROR, "epoll_wait: no memory for the %d connects in progress",
			       atomic_load(&n_connecting));
			errno = ENOMEM;
			ret = -1;
			break;
		}

		ret = real_epoll_wait_ts(epfd, evs, max, wake_ts(ps.wake, &ts),
					 mask);
		if (ret < 0)
			break;

		for (i = 0; i < ps.n; i++) {
			struct pending *p = &ps.p[i];
			struct fdent *e;
			bool have = false;
			unsigned int k;

			lock_tab(&old);
			e = get(p->fd);
			if (e && e->kind == FD_CONNECTING) {
				for (k = 0; k < e->n_eps; k++)
					if (e->eps[k].epfd == epfd) {
						p->ev = e->eps[k].ev;
						have = true;
					}
			}
			unlock_tab(&old);
			if (!have)
				continue;
			settle(p->fd, 0);
			e = get(p->fd);
			p->hide = !e || e->kind == FD_CONNECTING;
		}
		for (i = j = 0; (int)i < ret; i++)
			if (!hidden_event(&ps, &evs[i]))
				evs[j++] = evs[i];
		ret = j;
		if (ret || (deadline >= 0 && now_ms() >= deadline))
			break;
	}
	if (ps.p != ps.stack) {
		int err = errno;

		free(ps.p);
		errno = err;
	}
	return ret;
}

static bool epoll_has_connecting(void)
{
	return atomic_load_explicit(&n_connecting, memory_order_relaxed) > 0;
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *evs, int max,
		       int timeout, const sigset_t *mask)
{
	ensure_init();
	if (!epoll_has_connecting())
		return real.epoll_pwait(epfd, evs, max, timeout, mask);
	return epoll_special(epfd, evs, max,
			     timeout < 0 ? -1 : now_ms() + timeout, mask);
}

EXPORT int epoll_wait(int epfd, struct epoll_event *evs, int max,
		      int timeout)
{
	return epoll_pwait(epfd, evs, max, timeout, NULL);
}

EXPORT int epoll_pwait2(int epfd, struct epoll_event *evs, int max,
			const struct timespec *ts, const sigset_t *mask)
{
	ensure_init();
	if (!epoll_has_connecting())
		return real_epoll_wait_ts(epfd, evs, max, ts, mask);
	return epoll_special(epfd, evs, max, ts_deadline(ts), mask);
}

