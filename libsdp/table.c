// SPDX-License-Identifier: GPL-2.0
/*
 * libsdp: the descriptor table (one entry per descriptor the library
 * cares about, read without locks, changed under one mutex with every
 * signal blocked), hidden descriptors, and turning a candidate TCP socket
 * into an SDP one.  See libsdp.c for the whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libsdp_int.h"

/* -------------------------------------------------------------------- */
/* The table                                                            */

fdslot *_Atomic chunks[N_CHUNKS];
atomic_int n_special;
atomic_int n_connecting;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread sigset_t fork_mask;
static atomic_llong module_failed_at = -1;

/* Block every signal and take the lock; undone by unlock(). */
void lock_tab(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
	pthread_mutex_lock(&lock);
}

void unlock_tab(sigset_t *old)
{
	pthread_mutex_unlock(&lock);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

void atfork_prepare(void)
{
	lock_tab(&fork_mask);
}

void atfork_parent(void)
{
	unlock_tab(&fork_mask);
}

void atfork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
}

/* Under the lock.  Replaces (without freeing) whatever was there. */
bool set(int fd, struct fdent *e)
{
	fdslot *chunk;
	struct fdent *old;

	if (fd < 0 || fd >= MAX_TRACKED_FD)
		return false;
	chunk = atomic_load_explicit(&chunks[fd >> CHUNK_BITS],
				     memory_order_acquire);
	if (!chunk) {
		if (!e)
			return true;
		chunk = calloc(CHUNK_SIZE, sizeof(*chunk));
		if (!chunk)
			return false;
		atomic_store_explicit(&chunks[fd >> CHUNK_BITS], chunk,
				      memory_order_release);
	}
	old = atomic_load_explicit(&chunk[fd & (CHUNK_SIZE - 1)],
				   memory_order_relaxed);
	if (is_special(old))
		atomic_fetch_sub(&n_special, 1);
	if (old && old->kind == FD_CONNECTING)
		atomic_fetch_sub(&n_connecting, 1);
	if (is_special(e))
		atomic_fetch_add(&n_special, 1);
	if (e && e->kind == FD_CONNECTING)
		atomic_fetch_add(&n_connecting, 1);
	atomic_store_explicit(&chunk[fd & (CHUNK_SIZE - 1)], e,
			      memory_order_release);
	return true;
}

/*
 * Under the lock: @fn(@arg, descriptor, entry) for every entry but the
 * hidden markers, in descriptor order, until @fn returns false.
 */
void table_each(bool (*fn)(void *arg, int fd, struct fdent *e), void *arg)
{
	unsigned int i, j;

	for (i = 0; i < N_CHUNKS; i++) {
		fdslot *c = atomic_load(&chunks[i]);

		if (!c)
			continue;
		for (j = 0; j < CHUNK_SIZE; j++) {
			struct fdent *x = atomic_load(&c[j]);

			if (x && x != &hidden_marker &&
			    !fn(arg, (int)(i << CHUNK_BITS | j), x))
				return;
		}
	}
}

/* Change the kind of the entry at @fd, keeping the counters right. */
void set_kind(int fd, struct fdent *e, enum fd_kind kind)
{
	set(fd, NULL);
	e->kind = kind;
	set(fd, e);
}

/*
 * Entries are read without the lock on fast paths, so their memory is
 * never given back: freed entries wait on this list (under the lock)
 * for reuse.
 */
static struct fdent *free_list;

/* Under the lock. */
struct fdent *new_entry(enum fd_kind kind, int domain)
{
	struct fdent *e = free_list;

	if (e)
		free_list = *(struct fdent **)e;
	else
		e = malloc(sizeof(*e));
	if (e) {
		memset(e, 0, sizeof(*e));
		e->kind = kind;
		e->domain = domain;
		e->tcp_fd = -1;
	}
	return e;
}


/* Free an entry already taken out of the table; returns a descriptor
 * that the caller must close after unlocking, or -1. */
int free_entry(struct fdent *e)
{
	int fd = -1;

	if (!e)
		return -1;
	if (e->shadow)
		shadow_put(e->shadow);
	if (e->kind == FD_CONNECTING && e->tcp_fd >= 0) {
		set(e->tcp_fd, NULL);
		fd = e->tcp_fd;
	}
	free(e->opts);
	free(e->eps);
	e->opts = NULL;
	e->eps = NULL;
	e->n_opts = e->n_eps = 0;
	e->shadow = NULL;
	*(struct fdent **)e = free_list;
	free_list = e;
	return fd;
}

struct fdent *dup_entry(const struct fdent *src)
{
	struct fdent *e = new_entry(src->kind, src->domain);

	if (!e)
		return NULL;
	*e = *src;
	e->eps = NULL;
	e->n_eps = 0;
	e->opts = NULL;
	e->n_opts = 0;
	if (src->n_opts) {
		e->opts = malloc(src->n_opts * sizeof(*e->opts));
		if (!e->opts) {
			e->shadow = NULL;
			free_entry(e);
			return NULL;
		}
		memcpy(e->opts, src->opts, src->n_opts * sizeof(*e->opts));
		e->n_opts = src->n_opts;
	}
	if (e->shadow)
		e->shadow->refs++;
	return e;
}

/* A hidden descriptor: FD_CLOEXEC, high, marked in the table. */
int hide_fd(int fd)
{
	int nfd = real.fcntl(fd, F_DUPFD_CLOEXEC, hidden_min);

	if (nfd < 0)
		nfd = real.fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0)
		return -1;
	real.close(fd);
	return nfd;
}

struct fdent hidden_marker = { .kind = FD_HIDDEN, .tcp_fd = -1 };

void mark_hidden(int fd)
{
	set(fd, &hidden_marker);
}

void shadow_put(struct shadow *sh)
{
	if (--sh->refs > 0)
		return;
	if (sh->fd >= 0) {
		set(sh->fd, NULL);
		real.close(sh->fd);
	}
	free(sh);
}

/* -------------------------------------------------------------------- */
/* SDP sockets                                                          */

static bool module_missing(int err)
{
	return err == EAFNOSUPPORT || err == EPROTONOSUPPORT ||
	       err == ESOCKTNOSUPPORT || err == EINVAL;
}

/*
 * A new SDP socket, FD_CLOEXEC (dup3() decides what the program sees),
 * nonblocking if asked, with the options recorded for @fd.
 */
int sdp_socket(int fd, bool nonblock)
{
	long long failed = atomic_load(&module_failed_at);
	struct optrec *opts;
	unsigned int n;
	int sfd, err;

	if (failed >= 0 && now_ms() - failed < MODULE_RETRY_MS) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	sfd = real.socket(sdp_family, SOCK_STREAM | SOCK_CLOEXEC |
			  (nonblock ? SOCK_NONBLOCK : 0), 0);
	if (sfd < 0) {
		if (module_missing(errno)) {
			if (atomic_exchange(&module_failed_at, now_ms()) < 0)
				logmsg(SDP_LOG_WARN, "no SDP (socket(%d): %s): using TCP; is the sdp module loaded?",
				       sdp_family, strerror(errno));
			errno = EAFNOSUPPORT;
		}
		return -1;
	}
	atomic_store(&module_failed_at, -1);
	/*
	 * The rules decide where TCP is used, not net.sdp.tcp_fallback: the
	 * module's own fallback is off (a "both" client turns it on), so
	 * that an "sdp" socket stays SDP only and the SDP listener beside a
	 * "both" server's TCP one does not try to listen on TCP too.  A
	 * module without fallback refuses the option: nothing to do.
	 */
	err = errno;
	real.setsockopt(sfd, SOL_SDP, SDP_TCP_FALLBACK, &(int){ 0 },
			sizeof(int));
	errno = err;
	opts = opts_copy(fd, &n);
	replay_opts(sfd, opts, n);
	free(opts);
	return sfd;
}

bool fd_nonblocking(int fd)
{
	int fl = real.fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_NONBLOCK);
}

static bool fd_cloexec(int fd)
{
	int fl = real.fcntl(fd, F_GETFD);

	return fl >= 0 && (fl & FD_CLOEXEC);
}

/* Epoll registrations follow the descriptor's file; under the lock. */
static void epoll_detach(int fd, struct fdent *e)
{
	unsigned int i;

	for (i = 0; i < e->n_eps; i++)
		real.epoll_ctl(e->eps[i].epfd, EPOLL_CTL_DEL, fd, NULL);
}

static void epoll_attach(int fd, struct fdent *e)
{
	unsigned int i;

	for (i = 0; i < e->n_eps; i++)
		if (real.epoll_ctl(e->eps[i].epfd, EPOLL_CTL_ADD, fd,
				   &e->eps[i].ev) < 0)
			logmsg(SDP_LOG_WARN, "fd %d: cannot carry its epoll registration over: %s",
			       fd, strerror(errno));
}

/*
 * Put @sfd on @fd in place of the socket there (under the lock), with
 * @fd's FD_CLOEXEC and O_NONBLOCK; @sfd is closed.
 */
int install(int fd, struct fdent *e, int sfd)
{
	int fl = real.fcntl(fd, F_GETFL);
	int sfl = real.fcntl(sfd, F_GETFL);

	if (fl >= 0 && sfl >= 0 && (fl & O_NONBLOCK) != (sfl & O_NONBLOCK))
		real.fcntl(sfd, F_SETFL, (sfl & ~O_NONBLOCK) |
			   (fl & O_NONBLOCK));
	epoll_detach(fd, e);
	if (real.dup3(sfd, fd, fd_cloexec(fd) ? O_CLOEXEC : 0) < 0) {
		int err = errno;

		epoll_attach(fd, e);
		real.close(sfd);
		errno = err;
		return -1;
	}
	real.close(sfd);
	epoll_attach(fd, e);
	return 0;
}

/* Take @fd's entry out of the table and free it (it stays TCP). */
void forget(int fd)
{
	struct fdent *e;
	sigset_t old;
	int cfd;

	lock_tab(&old);
	e = get(fd);
	if (e && e->kind != FD_HIDDEN) {
		set(fd, NULL);
		cfd = free_entry(e);
		if (cfd >= 0)
			real.close(cfd);
	}
	unlock_tab(&old);
}

/* Replace the candidate TCP socket at @fd by an SDP socket. */
int convert(int fd, bool nonblock)
{
	struct fdent *e;
	sigset_t old;
	int sfd, ret = -1;

	sfd = sdp_socket(fd, nonblock);
	if (sfd < 0)
		return -1;
	lock_tab(&old);
	e = get(fd);
	if (!e || e->kind != FD_CAND) {
		real.close(sfd);
		errno = EBADF;
	} else if (install(fd, e, sfd) == 0) {
		set_kind(fd, e, FD_SDP);
		ret = 0;
	}
	unlock_tab(&old);
	return ret;
}
