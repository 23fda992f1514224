// SPDX-License-Identifier: GPL-2.0
/*
 * libsdp.so -- run unmodified TCP programs over SDP.
 *
 * Loaded with LD_PRELOAD (sdp_run(8) does that), the library intercepts
 * the socket calls of a program and, as the rules of libsdp.conf(5) say,
 * turns its TCP stream sockets into AF_INET_SDP ones.  libsdp(7) is the
 * user's description; this comment is the implementer's.
 *
 * When the decision is made
 *   socket() cannot know where a socket will go, so it always makes the
 *   TCP socket the program asked for and remembers it as a candidate.
 *   bind() decides for a server rule that says "sdp" on a fixed port
 *   (so that a TCP program holding that TCP port does not get in the
 *   way), listen() for every other server, connect() for clients.  A
 *   socket that a decision turns into SDP gets a new SDP socket dup3()ed
 *   onto its descriptor: the number, FD_CLOEXEC, O_NONBLOCK and the
 *   options set so far (replayed from a record) stay what they were.  A
 *   socket that stays TCP is forgotten at once, so that nothing the
 *   library does touches it again.
 *
 * "both", server side
 *   The program's TCP listener stays on its descriptor; an SDP listener
 *   (the shadow) is bound to the same address and port (SDP ports are a
 *   separate space) and kept on a hidden descriptor.  accept() takes
 *   connections from both, alternating; poll(), ppoll(), select() and
 *   pselect() add the shadow to the set and report its readiness as the
 *   listener's; epoll_ctl() registers the shadow in the same epoll set
 *   with the program's own event data, so epoll_wait() needs no help.
 *   A blocking accept() waits in poll() on both sockets; to survive
 *   losing a race for a TCP connection to another thread or process, the
 *   TCP listener carries SO_RCVTIMEO of LISTEN_RETRY_MS (the value the
 *   program sets or reads is kept by the library, and given to accepted
 *   TCP sockets, which would otherwise inherit ours).  dup() shares the
 *   shadow (counted references); the last close() of the listener
 *   closes it; shutdown(SHUT_RD) of the listener retires it.
 *
 * "both", client side
 *   connect() tries SDP first on a fresh SDP socket, bounded by the
 *   fallback timeout (LIBSDP_CONNECT_TIMEOUT, ms).  A blocking connect()
 *   waits for that attempt and then, on failure, connects the program's
 *   TCP socket.  A nonblocking connect() returns EINPROGRESS at once with
 *   the SDP attempt on the descriptor and the TCP socket held on a hidden
 *   descriptor; the attempt is settled when the program looks at it
 *   (poll/select/epoll_wait, getsockopt(SO_ERROR), connect(), dup()):
 *   if SDP failed or took too long, the TCP socket is connected and put
 *   on the descriptor (its epoll registrations are carried over), and
 *   the program's wait goes on until the TCP connect completes, so the
 *   program sees one ordinary EINPROGRESS flow.  Waits that include such
 *   a descriptor are cut at the attempt's deadline.
 *
 * Book-keeping and threads
 *   One entry per descriptor the library cares about, in a two-level
 *   table read without locks (atomic pointers), changed under one mutex
 *   with every signal blocked (so that a signal handler calling close()
 *   cannot deadlock against its own thread).  Calls on descriptors
 *   without an entry go straight to libc after one table read.  Blocking
 *   waits never hold the mutex; objects used across one (the shadow)
 *   are held by reference.  pthread_atfork() keeps the mutex consistent
 *   across fork(); the table is the child's copy, which is what it
 *   needs, as the descriptors are copies too.
 *
 *   Hidden descriptors (shadows, held TCP sockets, the log file) are
 *   FD_CLOEXEC and placed at or above HIDDEN_FD_MIN where the limit
 *   allows; close(), dup2() and close_range() from the program leave
 *   them alone (dup2() onto one moves it first).
 *
 * Never breaking a program
 *   Without the module (socket(AF_INET_SDP) fails), every socket stays
 *   TCP; the failure is logged once and not retried for MODULE_RETRY_MS.
 *   A rules file with an error disables the library (and says where the
 *   error is).  Options that SDP does not implement (ENOPROTOOPT for
 *   TCP_KEEPIDLE, IPV6_V6ONLY, ...) are accepted and remembered on SDP
 *   sockets, since they only tune TCP; getsockopt(TCP_INFO) returns a
 *   zeroed tcp_info with the state filled in.  Errno is preserved across
 *   the library's own calls.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "rules.h"

#define EXPORT __attribute__((visibility("default")))

#define DEFAULT_CONFIG		"/etc/libsdp.conf"
#define DEFAULT_CONNECT_MS	1000	/* SDP attempt of a "both" client */
#define LISTEN_RETRY_MS		100	/* see "both", server side */
#define MODULE_RETRY_MS		10000	/* after socket(AF_INET_SDP) failed */
#define HIDDEN_FD_MIN		100
#define MAX_OPT_LEN		32	/* larger option values are not replayed */

/* -------------------------------------------------------------------- */
/* The real functions                                                   */

static struct {
	int (*socket)(int, int, int);
	int (*bind)(int, const struct sockaddr *, socklen_t);
	int (*listen)(int, int);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	int (*shutdown)(int, int);
	int (*close)(int);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*fcntl)(int, int, ...);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	int (*getsockname)(int, struct sockaddr *, socklen_t *);
	int (*getpeername)(int, struct sockaddr *, socklen_t *);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *,
		     const sigset_t *);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *,
		       const struct timespec *, const sigset_t *);
	int (*epoll_ctl)(int, int, int, struct epoll_event *);
	int (*epoll_pwait)(int, struct epoll_event *, int, int,
			   const sigset_t *);
	int (*epoll_pwait2)(int, struct epoll_event *, int,
			    const struct timespec *, const sigset_t *);
} real;

/* -------------------------------------------------------------------- */
/* State                                                                */

enum fd_kind {
	FD_CAND,	/* TCP socket that a rule may still turn into SDP */
	FD_SDP,		/* turned into SDP by the library */
	FD_LISTEN_BOTH,	/* TCP listener with an SDP shadow */
	FD_CONNECTING,	/* "both" connect: SDP attempt here, TCP held aside */
	FD_FAILED,	/* fallback connect failed at once: SO_ERROR pending */
	FD_EPOLL,	/* an epoll set holding registrations we track */
	FD_HIDDEN,	/* the library's own descriptor */
};

struct optrec {
	int level, name;
	socklen_t len;
	unsigned char val[MAX_OPT_LEN];
};

struct epreg {
	int epfd;
	struct epoll_event ev;
};

/* The SDP listener behind a "both" TCP listener; shared by its dups. */
struct shadow {
	int fd;			/* -1 once retired */
	int refs;		/* entries and callers using fd */
	bool retired;
	unsigned int turn;	/* which socket accept() tries first */
	struct timeval rcvtimeo;	/* the program's SO_RCVTIMEO */
	int lfd_hint;		/* for messages */
};

struct fdent {
	enum fd_kind kind;
	int domain;		/* AF_INET or AF_INET6, as created */
	struct optrec *opts;	/* options set by the program */
	unsigned int n_opts;
	struct epreg *eps;	/* epoll registrations of this descriptor */
	unsigned int n_eps;
	bool bound;		/* bind() done on the TCP socket */
	struct sockaddr_storage bindaddr;	/* what the program asked */
	socklen_t bindlen;
	struct shadow *shadow;	/* FD_LISTEN_BOTH */
	int tcp_fd;		/* FD_CONNECTING: the program's TCP socket */
	struct sockaddr_storage peer;	/* FD_CONNECTING: where to */
	socklen_t peerlen;
	long long deadline;	/* FD_CONNECTING: end of the SDP attempt */
	int err;		/* FD_FAILED: the error for SO_ERROR */
};

#define CHUNK_BITS	10
#define CHUNK_SIZE	(1 << CHUNK_BITS)
#define N_CHUNKS	1024	/* descriptors below 1 << 20 are tracked */

typedef struct fdent *_Atomic fdslot;
static fdslot *_Atomic chunks[N_CHUNKS];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread sigset_t fork_mask;
/* Entries that poll(), select() and epoll_wait() must look at. */
static atomic_int n_special;
static atomic_int n_connecting;

static struct sdp_config cfg;
static bool active;		/* some rule can select SDP for us */
static const char *progname = "?";
static int sdp_family = AF_INET_SDP;
static int connect_ms = DEFAULT_CONNECT_MS;
static int log_fd = -1;
static atomic_llong module_failed_at = -1;
static int hidden_min = HIDDEN_FD_MIN;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static atomic_bool initialized;

static void init(void);

static inline void ensure_init(void)
{
	if (__builtin_expect(!atomic_load_explicit(&initialized,
						   memory_order_acquire), 0))
		pthread_once(&init_once, init);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* -------------------------------------------------------------------- */
/* Logging                                                              */

static void __attribute__((format(printf, 2, 3)))
logmsg(int level, const char *fmt, ...)
{
	char buf[768];
	int n, saved = errno;
	va_list ap;

	if (level < cfg.log_level)
		return;
	n = snprintf(buf, sizeof(buf), "libsdp[%s:%d]: ", progname,
		     (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	n = strlen(buf);
	if (cfg.log_dest == SDP_DEST_SYSLOG) {
		syslog(level >= SDP_LOG_ERROR ? LOG_ERR :
		       level >= SDP_LOG_WARN ? LOG_WARNING :
		       level >= SDP_LOG_SUMMARY ? LOG_INFO : LOG_DEBUG,
		       "%s", buf);
	} else {
		int fd = cfg.log_dest == SDP_DEST_FILE && log_fd >= 0 ?
			 log_fd : STDERR_FILENO;

		buf[n++] = '\n';
		if (write(fd, buf, n) < 0) {
			/* nowhere else to say it */
		}
	}
	errno = saved;
}

static const char *addrstr(const void *sa, socklen_t len, char *buf,
			   size_t size)
{
	return sdp_addr_str(sa, len, buf, size);
}

#define ADDRSTR(sa, len) addrstr((sa), (len), (char[64]){ 0 }, 64)

/* -------------------------------------------------------------------- */
/* The table                                                            */

/* Block every signal and take the lock; undone by unlock(). */
static void lock_tab(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
	pthread_mutex_lock(&lock);
}

static void unlock_tab(sigset_t *old)
{
	pthread_mutex_unlock(&lock);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static void atfork_prepare(void)
{
	lock_tab(&fork_mask);
}

static void atfork_parent(void)
{
	unlock_tab(&fork_mask);
}

static void atfork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
}

static struct fdent *get(int fd)
{
	fdslot *chunk;

	if (fd < 0 || fd >= N_CHUNKS * CHUNK_SIZE)
		return NULL;
	chunk = atomic_load_explicit(&chunks[fd >> CHUNK_BITS],
				     memory_order_acquire);
	if (!chunk)
		return NULL;
	return atomic_load_explicit(&chunk[fd & (CHUNK_SIZE - 1)],
				    memory_order_acquire);
}

static bool is_special(const struct fdent *e)
{
	return e && (e->kind == FD_LISTEN_BOTH || e->kind == FD_CONNECTING ||
		     e->kind == FD_FAILED);
}

/* Under the lock.  Replaces (without freeing) whatever was there. */
static bool set(int fd, struct fdent *e)
{
	fdslot *chunk;
	struct fdent *old;

	if (fd < 0 || fd >= N_CHUNKS * CHUNK_SIZE)
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

/* Change the kind of the entry at @fd, keeping the counters right. */
static void set_kind(int fd, struct fdent *e, enum fd_kind kind)
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
static struct fdent *new_entry(enum fd_kind kind, int domain)
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

static void shadow_put(struct shadow *sh);

/* Free an entry already taken out of the table; returns a descriptor
 * that the caller must close after unlocking, or -1. */
static int free_entry(struct fdent *e)
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

static struct fdent *dup_entry(const struct fdent *src)
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
static int hide_fd(int fd)
{
	int nfd = real.fcntl(fd, F_DUPFD_CLOEXEC, hidden_min);

	if (nfd < 0)
		nfd = real.fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0)
		return -1;
	real.close(fd);
	return nfd;
}

static struct fdent hidden_marker = { .kind = FD_HIDDEN, .tcp_fd = -1 };

static void mark_hidden(int fd)
{
	set(fd, &hidden_marker);
}

static void shadow_put(struct shadow *sh)
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
/* Options                                                              */

static bool recordable(int level, int name, socklen_t len)
{
	if (len > MAX_OPT_LEN)
		return false;
	if (level == SOL_SOCKET || level == IPPROTO_TCP)
		return true;
	return (level == IPPROTO_IPV6 && name == IPV6_V6ONLY) ||
	       (level == IPPROTO_IP && (name == IP_TOS || name == IP_TTL));
}

/* Options that only tune TCP or IP: accepted (and remembered) on SDP. */
static bool emulated(int level, int name)
{
	switch (level) {
	case IPPROTO_TCP:
		switch (name) {
		case TCP_MAXSEG: case TCP_KEEPIDLE: case TCP_KEEPINTVL:
		case TCP_KEEPCNT: case TCP_SYNCNT: case TCP_LINGER2:
		case TCP_DEFER_ACCEPT: case TCP_WINDOW_CLAMP:
		case TCP_QUICKACK: case TCP_CONGESTION: case TCP_USER_TIMEOUT:
		case TCP_NOTSENT_LOWAT: case TCP_THIN_LINEAR_TIMEOUTS:
		case TCP_FASTOPEN: case TCP_FASTOPEN_CONNECT:
			return true;
		}
		return false;
	case IPPROTO_IP:
		return name == IP_TOS || name == IP_TTL;
	case IPPROTO_IPV6:
		return name == IPV6_V6ONLY || name == IPV6_TCLASS ||
		       name == IPV6_UNICAST_HOPS;
	}
	return false;
}

static const struct optrec *find_opt(const struct fdent *e, int level,
				     int name)
{
	unsigned int i;

	for (i = 0; i < e->n_opts; i++)
		if (e->opts[i].level == level && e->opts[i].name == name)
			return &e->opts[i];
	return NULL;
}

/* Under the lock. */
static void record_opt(struct fdent *e, int level, int name, const void *val,
		       socklen_t len)
{
	struct optrec *o = (struct optrec *)find_opt(e, level, name);

	if (!recordable(level, name, len) || !val)
		return;
	if (!o) {
		o = realloc(e->opts, (e->n_opts + 1) * sizeof(*o));
		if (!o)
			return;
		e->opts = o;
		o = &e->opts[e->n_opts++];
	}
	o->level = level;
	o->name = name;
	o->len = len;
	memcpy(o->val, val, len);
}

/* Replay the recorded options on a new socket; the ones SDP does not
 * have stay in the record, which getsockopt() answers from. */
static void replay_opts(int sfd, const struct optrec *opts, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (real.setsockopt(sfd, opts[i].level, opts[i].name,
				    opts[i].val, opts[i].len) < 0)
			logmsg(SDP_LOG_DEBUG, "option %d/%d not replayed on the SDP socket: %s",
			       opts[i].level, opts[i].name,
			       strerrorname_np(errno));
}

/* A snapshot of an entry's options, to use without the lock. */
static struct optrec *opts_copy(int fd, unsigned int *n)
{
	struct optrec *copy = NULL;
	struct fdent *e;
	sigset_t old;

	*n = 0;
	lock_tab(&old);
	e = get(fd);
	if (e && e->n_opts) {
		copy = malloc(e->n_opts * sizeof(*copy));
		if (copy) {
			memcpy(copy, e->opts, e->n_opts * sizeof(*copy));
			*n = e->n_opts;
		}
	}
	unlock_tab(&old);
	return copy;
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
static int sdp_socket(int fd, bool nonblock)
{
	long long failed = atomic_load(&module_failed_at);
	struct optrec *opts;
	unsigned int n;
	int sfd;

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
	opts = opts_copy(fd, &n);
	replay_opts(sfd, opts, n);
	free(opts);
	return sfd;
}

static bool fd_nonblocking(int fd)
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
static int install(int fd, struct fdent *e, int sfd)
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
static void forget(int fd)
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
static int convert(int fd, bool nonblock)
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

/* -------------------------------------------------------------------- */
/* Initialisation                                                       */

static void *sym(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p) {
		static const char msg[] = "libsdp: a libc function is missing\n";

		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
			/* nothing to do */
		}
		abort();
	}
	return p;
}

static void report(void *arg, const char *msg)
{
	(void)arg;
	logmsg(SDP_LOG_ERROR, "%s", msg);
}

static void init(void)
{
	const char *path, *s;
	struct rlimit rl;
	char buf[32];
	FILE *f;

	real.socket = sym("socket");
	real.bind = sym("bind");
	real.listen = sym("listen");
	real.accept = sym("accept");
	real.accept4 = sym("accept4");
	real.connect = sym("connect");
	real.shutdown = sym("shutdown");
	real.close = sym("close");
	real.dup = sym("dup");
	real.dup2 = sym("dup2");
	real.dup3 = sym("dup3");
	real.fcntl = sym("fcntl");
	real.setsockopt = sym("setsockopt");
	real.getsockopt = sym("getsockopt");
	real.getsockname = sym("getsockname");
	real.getpeername = sym("getpeername");
	real.ppoll = sym("ppoll");
	real.select = sym("select");
	real.pselect = sym("pselect");
	real.epoll_ctl = sym("epoll_ctl");
	real.epoll_pwait = sym("epoll_pwait");
	real.epoll_pwait2 = dlsym(RTLD_NEXT, "epoll_pwait2");

	progname = program_invocation_short_name;
	cfg.log_level = SDP_LOG_ERROR;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur < 2 * HIDDEN_FD_MIN)
		hidden_min = rl.rlim_cur / 2;

	s = getenv("LIBSDP_CONNECT_TIMEOUT");
	if (s && *s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (!*end && v >= 0 && v <= 600000)
			connect_ms = v;
	}
	/* The module may have been loaded with another family number. */
	f = fopen("/sys/module/sdp/parameters/family", "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f) && atoi(buf) > 0)
			sdp_family = atoi(buf);
		fclose(f);
	}

	path = getenv("LIBSDP_CONFIG_FILE");
	if (!path || !*path)
		path = DEFAULT_CONFIG;
	if (sdp_config_load(&cfg, path, report, NULL) < 0) {
		int err = errno;

		sdp_config_free(&cfg);
		if (err == ENOENT && !getenv("LIBSDP_CONFIG_FILE")) {
			/* No rules file: SDP where it works, else TCP. */
			sdp_config_default(&cfg);
		} else {
			logmsg(SDP_LOG_ERROR, "cannot read %s: %s; libsdp disabled",
			       path, strerror(err));
		}
	}
	s = getenv("LIBSDP_LOG_LEVEL");
	if (s && *s >= '1' && *s <= '9' && !s[1]) {
		/* sdp_run -v: everything, on standard error */
		cfg.log_level = *s - '0';
		cfg.log_dest = SDP_DEST_STDERR;
	}
	if (cfg.log_dest == SDP_DEST_FILE) {
		int fd = open(cfg.log_file, O_WRONLY | O_APPEND | O_CREAT |
			      O_CLOEXEC | O_NOFOLLOW, 0600);

		if (fd >= 0) {
			log_fd = real.fcntl(fd, F_DUPFD_CLOEXEC, hidden_min);
			if (log_fd < 0)
				log_fd = fd;
			else
				real.close(fd);
			mark_hidden(log_fd);
		} else {
			cfg.log_dest = SDP_DEST_STDERR;
			logmsg(SDP_LOG_ERROR, "cannot open log file %s: %s",
			       cfg.log_file, strerror(errno));
		}
	} else if (cfg.log_dest == SDP_DEST_SYSLOG) {
		openlog("libsdp", LOG_PID, LOG_USER);
	}
	if (cfg.n_errors) {
		logmsg(SDP_LOG_ERROR, "%u error%s in %s: libsdp disabled, every socket stays TCP",
		       cfg.n_errors, cfg.n_errors > 1 ? "s" : "", cfg.path);
		active = false;
	} else {
		active = sdp_config_for_program(&cfg, progname);
	}
	logmsg(SDP_LOG_DEBUG, "rules from %s: %zu for this program, %s",
	       cfg.path ? cfg.path : "built-in defaults", cfg.n_rules,
	       active ? "active" : "nothing to do");
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	atomic_store_explicit(&initialized, true, memory_order_release);
}

__attribute__((constructor)) static void libsdp_ctor(void)
{
	ensure_init();
}

/* -------------------------------------------------------------------- */
/* socket, setsockopt, getsockopt, getsockname                          */

static bool is_tcp(int domain, int type, int protocol)
{
	return (domain == AF_INET || domain == AF_INET6) &&
	       (type & 0xf) == SOCK_STREAM &&
	       (protocol == 0 || protocol == IPPROTO_TCP);
}

EXPORT int socket(int domain, int type, int protocol)
{
	struct fdent *e;
	sigset_t old;
	int fd;

	ensure_init();
	fd = real.socket(domain, type, protocol);
	if (fd < 0 || !active || !is_tcp(domain, type, protocol))
		return fd;
	lock_tab(&old);
	e = new_entry(FD_CAND, domain);
	/* Without memory it stays untracked: plain TCP. */
	if (e && !set(fd, e))
		free_entry(e);
	unlock_tab(&old);
	return fd;
}

/* SO_DOMAIN of a socket we do not track: is it SDP? */
static bool untracked_sdp(int fd)
{
	int dom = 0, saved = errno;
	socklen_t len = sizeof(dom);
	bool ret;

	ret = real.getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) == 0 &&
	      dom == sdp_family;
	errno = saved;
	return ret;
}

EXPORT int setsockopt(int fd, int level, int name, const void *val,
		      socklen_t len)
{
	struct fdent *e;
	sigset_t old;
	int ret, err, other = -1;

	ensure_init();
	e = get(fd);
	if (!e || e->kind == FD_HIDDEN || e->kind == FD_EPOLL) {
		ret = real.setsockopt(fd, level, name, val, len);
		if (ret < 0 && errno == ENOPROTOOPT && emulated(level, name) &&
		    untracked_sdp(fd)) {
			logmsg(SDP_LOG_DEBUG, "fd %d: option %d/%d has no SDP meaning: accepted",
			       fd, level, name);
			return 0;
		}
		return ret;
	}

	lock_tab(&old);
	e = get(fd);
	if (e && e->kind == FD_LISTEN_BOTH && level == SOL_SOCKET &&
	    (name == SO_RCVTIMEO || name == SO_RCVTIMEO_OLD)) {
		/* Ours on the TCP listener: keep the program's for it. */
		if (!val || len < sizeof(struct timeval)) {
			unlock_tab(&old);
			errno = val ? EINVAL : EFAULT;
			return -1;
		}
		memcpy(&e->shadow->rcvtimeo, val, sizeof(struct timeval));
		/* SDP connections inherit it from the shadow. */
		if (!e->shadow->retired)
			real.setsockopt(e->shadow->fd, level, name, val, len);
		unlock_tab(&old);
		return 0;
	}
	ret = real.setsockopt(fd, level, name, val, len);
	err = errno;
	if (!e) {
		/* gone meanwhile */
	} else if (ret == 0) {
		record_opt(e, level, name, val, len);
		if (e->kind == FD_LISTEN_BOTH && !e->shadow->retired)
			other = e->shadow->fd;
		else if (e->kind == FD_CONNECTING)
			other = e->tcp_fd;
		if (other >= 0)
			real.setsockopt(other, level, name, val, len);
	} else if (err == ENOPROTOOPT && emulated(level, name) &&
		   (e->kind == FD_SDP || e->kind == FD_CONNECTING)) {
		record_opt(e, level, name, val, len);
		if (e->kind == FD_CONNECTING)
			real.setsockopt(e->tcp_fd, level, name, val, len);
		ret = 0;
	}
	unlock_tab(&old);
	errno = err;
	return ret;
}

/* getsockopt() of an option SDP does not have: the remembered value, or
 * a neutral default; -1 (ENOPROTOOPT) if there is none. */
static int emulated_get(int fd, struct fdent *e, int level, int name,
			void *val, socklen_t *len)
{
	const struct optrec *o = NULL;
	sigset_t old;
	int v;

	if (!val || !len) {
		errno = EFAULT;
		return -1;
	}
	if (level == IPPROTO_TCP && name == TCP_INFO) {
		struct tcp_info ti;
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);

		memset(&ti, 0, sizeof(ti));
		ti.tcpi_state = real.getpeername(fd, (void *)&ss, &sl) == 0 ?
				TCP_ESTABLISHED : TCP_CLOSE;
		if (*len > sizeof(ti))
			*len = sizeof(ti);
		memcpy(val, &ti, *len);
		return 0;
	}
	if (e) {
		lock_tab(&old);
		if (get(fd) == e) {
			o = find_opt(e, level, name);
			if (o) {
				if (*len > o->len)
					*len = o->len;
				memcpy(val, o->val, *len);
			}
		}
		unlock_tab(&old);
		if (o)
			return 0;
	}
	if (!emulated(level, name) || name == TCP_CONGESTION) {
		errno = ENOPROTOOPT;
		return -1;
	}
	/* TCP_MAXSEG: an SDP message carries up to 32 KiB. */
	v = level == IPPROTO_TCP && name == TCP_MAXSEG ? 32768 : 0;
	if (*len > sizeof(v))
		*len = sizeof(v);
	memcpy(val, &v, *len);
	return 0;
}

static int settle(int fd, int wait_ms);

EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct fdent *e;
	sigset_t old;
	int ret;

	ensure_init();
	e = get(fd);
	if (e && level == SOL_SOCKET && name == SO_ERROR &&
	    (e->kind == FD_CONNECTING || e->kind == FD_FAILED)) {
		settle(fd, 0);
		lock_tab(&old);
		e = get(fd);
		if (e && e->kind == FD_FAILED && val && len &&
		    *len >= sizeof(int)) {
			memcpy(val, &e->err, sizeof(int));
			*len = sizeof(int);
			/* Reported once, as SO_ERROR is; then plain TCP. */
			set(fd, NULL);
			free_entry(e);
			unlock_tab(&old);
			return 0;
		}
		if (e && e->kind == FD_CONNECTING && val && len &&
		    *len >= sizeof(int)) {
			/* Still in progress (over SDP, or TCP next). */
			unlock_tab(&old);
			memset(val, 0, sizeof(int));
			*len = sizeof(int);
			return 0;
		}
		unlock_tab(&old);
		return real.getsockopt(fd, level, name, val, len);
	}
	if (e && e->kind == FD_LISTEN_BOTH && level == SOL_SOCKET &&
	    (name == SO_RCVTIMEO || name == SO_RCVTIMEO_OLD) && val && len) {
		struct timeval tv;

		lock_tab(&old);
		e = get(fd);
		if (e && e->kind == FD_LISTEN_BOTH) {
			tv = e->shadow->rcvtimeo;
			unlock_tab(&old);
			if (*len > sizeof(tv))
				*len = sizeof(tv);
			memcpy(val, &tv, *len);
			return 0;
		}
		unlock_tab(&old);
	}
	ret = real.getsockopt(fd, level, name, val, len);
	if (ret == 0 && level == SOL_SOCKET && name == SO_DOMAIN && val &&
	    len && *len >= sizeof(int) && *(int *)val == sdp_family) {
		/* An SDP socket stands in for an AF_INET(6) one. */
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int dom = e && e->kind != FD_HIDDEN ? e->domain : AF_INET;

		if (!(e && e->kind != FD_HIDDEN) &&
		    real.getsockname(fd, (void *)&ss, &sl) == 0)
			dom = ss.ss_family;
		memcpy(val, &dom, sizeof(dom));
		return 0;
	}
	if (ret < 0 && errno == ENOPROTOOPT && level != SOL_SOCKET &&
	    (e ? e->kind == FD_SDP || e->kind == FD_CONNECTING :
		 untracked_sdp(fd)))
		return emulated_get(fd, e, level, name, val, len);
	return ret;
}

/* An AF_INET6 socket that SDP answers for with AF_INET: v4-mapped. */
static void fix_family(int fd, struct sockaddr *addr, socklen_t *len,
		       socklen_t room)
{
	struct sockaddr_in6 sin6;
	struct sockaddr_in sin;
	struct fdent *e = get(fd);

	if (!e || e->domain != AF_INET6 || addr->sa_family != AF_INET ||
	    (e->kind != FD_SDP && e->kind != FD_CONNECTING))
		return;
	memcpy(&sin, addr, sizeof(sin) < room ? sizeof(sin) : room);
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = sin.sin_port;
	if (sin.sin_addr.s_addr != htonl(INADDR_ANY)) {
		sin6.sin6_addr.s6_addr[10] = 0xff;
		sin6.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&sin6.sin6_addr.s6_addr[12], &sin.sin_addr, 4);
	}
	memcpy(addr, &sin6, sizeof(sin6) < room ? sizeof(sin6) : room);
	*len = sizeof(sin6);
}

EXPORT int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	socklen_t room = len ? *len : 0;
	int ret;

	ensure_init();
	ret = real.getsockname(fd, addr, len);
	if (ret == 0 && addr && room)
		fix_family(fd, addr, len, room);
	return ret;
}

EXPORT int getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	socklen_t room = len ? *len : 0;
	int ret;

	ensure_init();
	ret = real.getpeername(fd, addr, len);
	if (ret == 0 && addr && room)
		fix_family(fd, addr, len, room);
	return ret;
}

/* -------------------------------------------------------------------- */
/* bind, listen                                                         */

static const struct sdp_rule *decide(enum sdp_role role,
				     const struct sockaddr *addr,
				     socklen_t len, enum sdp_use *use)
{
	const struct sdp_rule *rule;
	char r[160];

	*use = sdp_config_match(&cfg, role, NULL, addr, len, &rule);
	if (rule)
		logmsg(SDP_LOG_MATCH, "%s %s: %s:%u: %s", sdp_role_name(role),
		       ADDRSTR(addr, len), cfg.path ? cfg.path : "defaults",
		       rule->line, sdp_rule_str(rule, r, sizeof(r)));
	else
		logmsg(SDP_LOG_NOMATCH, "%s %s: no rule matches: tcp",
		       sdp_role_name(role), ADDRSTR(addr, len));
	return rule;
}

static uint16_t port_of(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct fdent *e;
	enum sdp_use use;
	sigset_t old;
	int ret, err;

	ensure_init();
	e = get(fd);
	if (!e || e->kind != FD_CAND || !addr ||
	    (addr->sa_family != AF_INET && addr->sa_family != AF_INET6) ||
	    len > sizeof(struct sockaddr_storage))
		return real.bind(fd, addr, len);

	/* listen() logs the decision; here it only matters for "sdp". */
	use = sdp_config_match(&cfg, SDP_ROLE_SERVER, NULL, addr, len, NULL);
	if (use == SDP_USE_SDP && port_of(addr) != 0) {
		/* SDP only, on a fixed port: TCP's port must not matter. */
		if (convert(fd, fd_nonblocking(fd)) == 0) {
			ret = real.bind(fd, addr, len);
			err = errno;
			logmsg(SDP_LOG_SUMMARY, "bind %s: sdp%s%s",
			       ADDRSTR(addr, len), ret ? ": " : "",
			       ret ? strerror(err) : "");
			errno = err;
			return ret;
		}
		logmsg(SDP_LOG_WARN, "bind %s: no SDP socket (%s): tcp",
		       ADDRSTR(addr, len), strerror(errno));
	}
	ret = real.bind(fd, addr, len);
	if (ret < 0)
		return ret;
	err = errno;
	lock_tab(&old);
	e = get(fd);
	if (e && e->kind == FD_CAND) {
		e->bound = true;
		memcpy(&e->bindaddr, addr, len);
		e->bindlen = len;
	}
	unlock_tab(&old);
	errno = err;
	return 0;
}

/* Where a listen() on @fd will listen, for the rules. */
static socklen_t listen_addr(int fd, int domain, struct sockaddr_storage *ss)
{
	socklen_t len = sizeof(*ss);

	if (real.getsockname(fd, (struct sockaddr *)ss, &len) == 0)
		return len;
	memset(ss, 0, sizeof(*ss));
	ss->ss_family = domain;
	return domain == AF_INET6 ? sizeof(struct sockaddr_in6) :
				    sizeof(struct sockaddr_in);
}

/* Set up the SDP shadow of the TCP listener @fd.  Without the lock. */
static int shadow_listen(int fd, int backlog)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct timeval retry = { 0, LISTEN_RETRY_MS * 1000 };
	struct timeval prog = { 0, 0 };
	struct shadow *sh;
	struct fdent *e;
	socklen_t tl = sizeof(prog);
	sigset_t old;
	int sfd, one = 1;

	if (real.getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -1;
	sfd = sdp_socket(fd, true);
	if (sfd < 0)
		return -1;
	real.setsockopt(sfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (real.bind(sfd, (struct sockaddr *)&ss, len) < 0 ||
	    real.listen(sfd, backlog) < 0) {
		int err = errno;

		real.close(sfd);
		errno = err;
		return -1;
	}
	sfd = hide_fd(sfd);
	if (sfd < 0)
		return -1;
	sh = calloc(1, sizeof(*sh));
	if (!sh) {
		real.close(sfd);
		errno = ENOMEM;
		return -1;
	}
	real.getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &prog, &tl);
	real.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &retry, sizeof(retry));
	sh->fd = sfd;
	sh->refs = 1;
	sh->rcvtimeo = prog;
	sh->lfd_hint = fd;

	lock_tab(&old);
	e = get(fd);
	if (!e || e->kind != FD_CAND) {
		unlock_tab(&old);
		real.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &prog,
				sizeof(prog));
		real.close(sfd);
		free(sh);
		errno = EBADF;
		return -1;
	}
	mark_hidden(sfd);
	e->shadow = sh;
	set_kind(fd, e, FD_LISTEN_BOTH);
	/* Registrations made before listen() now cover the shadow too. */
	for (unsigned int i = 0; i < e->n_eps; i++) {
		struct epoll_event ev = e->eps[i].ev;

		real.epoll_ctl(e->eps[i].epfd, EPOLL_CTL_ADD, sfd, &ev);
	}
	unlock_tab(&old);
	return 0;
}

EXPORT int listen(int fd, int backlog)
{
	struct sockaddr_storage ss;
	struct fdent *e;
	enum sdp_use use;
	socklen_t len;
	sigset_t old;
	int ret, err, sfd = -1;

	ensure_init();
	e = get(fd);
	if (e && e->kind == FD_LISTEN_BOTH) {
		ret = real.listen(fd, backlog);
		if (ret == 0) {
			lock_tab(&old);
			e = get(fd);
			if (e && e->kind == FD_LISTEN_BOTH &&
			    !e->shadow->retired)
				sfd = e->shadow->fd;
			if (sfd >= 0)
				real.listen(sfd, backlog);
			unlock_tab(&old);
		}
		return ret;
	}
	if (!e || e->kind != FD_CAND)
		return real.listen(fd, backlog);

	len = listen_addr(fd, e->domain, &ss);
	decide(SDP_ROLE_SERVER, (struct sockaddr *)&ss, len, &use);
	switch (use) {
	case SDP_USE_SDP:
		if (convert(fd, fd_nonblocking(fd)) < 0) {
			logmsg(SDP_LOG_WARN, "listen %s: no SDP socket (%s): tcp",
			       ADDRSTR(&ss, len), strerror(errno));
			break;
		}
		lock_tab(&old);
		e = get(fd);
		if (e && e->bound) {
			memcpy(&ss, &e->bindaddr, e->bindlen);
			len = e->bindlen;
		} else {
			len = 0;
		}
		unlock_tab(&old);
		if (len && real.bind(fd, (struct sockaddr *)&ss, len) < 0) {
			err = errno;
			logmsg(SDP_LOG_ERROR, "listen %s: sdp bind: %s",
			       ADDRSTR(&ss, len), strerror(err));
			errno = err;
			return -1;
		}
		ret = real.listen(fd, backlog);
		err = errno;
		logmsg(SDP_LOG_SUMMARY, "listen %s: sdp%s%s",
		       len ? ADDRSTR(&ss, len) : "(any)", ret ? ": " : "",
		       ret ? strerror(err) : "");
		errno = err;
		return ret;
	case SDP_USE_BOTH:
		ret = real.listen(fd, backlog);
		if (ret < 0)
			return ret;
		err = errno;
		len = listen_addr(fd, e->domain, &ss);
		if (shadow_listen(fd, backlog) < 0) {
			logmsg(SDP_LOG_WARN, "listen %s: tcp only (no SDP listener: %s)",
			       ADDRSTR(&ss, len), strerror(errno));
			forget(fd);
		} else {
			logmsg(SDP_LOG_SUMMARY, "listen %s: tcp and sdp",
			       ADDRSTR(&ss, len));
		}
		errno = err;
		return 0;
	case SDP_USE_TCP:
		break;
	}
	forget(fd);
	return real.listen(fd, backlog);
}

/* -------------------------------------------------------------------- */
/* accept                                                               */

static struct shadow *shadow_get(int fd)
{
	struct shadow *sh = NULL;
	struct fdent *e;
	sigset_t old;

	lock_tab(&old);
	e = get(fd);
	if (e && e->kind == FD_LISTEN_BOTH && !e->shadow->retired) {
		sh = e->shadow;
		sh->refs++;
	}
	unlock_tab(&old);
	return sh;
}

static void shadow_release(struct shadow *sh)
{
	sigset_t old;

	lock_tab(&old);
	shadow_put(sh);
	unlock_tab(&old);
}

/* accept() on a TCP listener with an SDP shadow. */
static int accept_both(int fd, struct shadow *sh, struct sockaddr *addr,
		       socklen_t *len, int flags)
{
	struct timeval tv;
	long long deadline = -1;
	bool nonblock = fd_nonblocking(fd);
	socklen_t room = len ? *len : 0;
	unsigned int first;
	sigset_t old;
	int ret = -1, i;

	lock_tab(&old);
	tv = sh->rcvtimeo;
	first = sh->turn++ & 1;
	unlock_tab(&old);
	if (tv.tv_sec || tv.tv_usec)
		deadline = now_ms() + tv.tv_sec * 1000LL + tv.tv_usec / 1000;

	for (;;) {
		struct pollfd p[2];
		int t;

		for (i = 0; i < 2; i++) {
			bool sdp = (first + i) & 1;

			if (len)
				*len = room;
			if (sdp) {
				if (sh->retired)
					continue;
				ret = real.accept4(sh->fd, addr, len, flags);
			} else {
				struct pollfd q = { fd, POLLIN, 0 };

				/* A blocking listener: only when it is ready
				 * (and SO_RCVTIMEO bounds a lost race). */
				if (!nonblock && real.ppoll(&q, 1,
					&(struct timespec){ 0, 0 }, NULL) == 0)
					continue;
				ret = real.accept4(fd, addr, len, flags);
				if (ret >= 0)
					real.setsockopt(ret, SOL_SOCKET,
							SO_RCVTIMEO, &tv,
							sizeof(tv));
			}
			if (ret >= 0) {
				logmsg(SDP_LOG_DEBUG, "accept on fd %d: fd %d over %s",
				       fd, ret, sdp ? "sdp" : "tcp");
				return ret;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != ECONNABORTED && errno != EPROTO)
				return -1;
		}
		if (nonblock) {
			errno = EAGAIN;
			return -1;
		}
		t = -1;
		if (deadline >= 0) {
			long long left = deadline - now_ms();

			if (left <= 0) {
				errno = EAGAIN;
				return -1;
			}
			t = left;
		}
		p[0] = (struct pollfd){ fd, POLLIN, 0 };
		p[1] = (struct pollfd){ sh->retired ? -1 : sh->fd, POLLIN, 0 };
		if (real.ppoll(p, 2, t < 0 ? NULL : &(struct timespec){
				t / 1000, t % 1000 * 1000000 }, NULL) < 0)
			return -1;	/* EINTR: as accept() on a signal */
		if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
			/* shut down or closed: let accept() say it */
			return real.accept4(fd, addr, len, flags);
		}
		first = p[1].revents ? 1 : 0;
	}
}

EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	struct shadow *sh;
	struct fdent *e;
	int ret, err;

	ensure_init();
	e = get(fd);
	if (!e || e->kind != FD_LISTEN_BOTH)
		return real.accept4(fd, addr, len, flags);
	sh = shadow_get(fd);
	if (!sh)
		return real.accept4(fd, addr, len, flags);
	ret = accept_both(fd, sh, addr, len, flags);
	err = errno;
	shadow_release(sh);
	errno = err;
	return ret;
}

EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct fdent *e;

	ensure_init();
	e = get(fd);
	if (!e || e->kind != FD_LISTEN_BOTH)
		return real.accept(fd, addr, len);
	return accept4(fd, addr, len, 0);
}

/* -------------------------------------------------------------------- */
/* connect                                                              */

/*
 * Wait up to @ms for a nonblocking connect on @fd; 0 when connected,
 * else -1 with the error (ETIMEDOUT when it did not finish).
 */
static int wait_connect(int fd, int ms)
{
	long long deadline = now_ms() + ms;
	socklen_t l = sizeof(int);
	int err = 0;

	for (;;) {
		struct pollfd p = { fd, POLLOUT, 0 };
		long long left = deadline - now_ms();
		struct timespec ts;

		if (left < 0)
			left = 0;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = left % 1000 * 1000000;
		if (real.ppoll(&p, 1, &ts, NULL) > 0)
			break;
		if (now_ms() >= deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
	if (real.getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
		return -1;
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* Bind a new socket where the program bound its TCP one. */
static void rebind(int fd, int sfd)
{
	struct sockaddr_storage ss;
	struct fdent *e;
	socklen_t len = 0;
	sigset_t old;

	lock_tab(&old);
	e = get(fd);
	if (e && e->bound) {
		ss = e->bindaddr;
		len = e->bindlen;
	}
	unlock_tab(&old);
	if (len && real.bind(sfd, (struct sockaddr *)&ss, len) < 0)
		logmsg(SDP_LOG_WARN, "cannot bind the SDP socket to %s (%s): connecting unbound",
		       ADDRSTR(&ss, len), strerror(errno));
}

/* "both": SDP first, then TCP. */
static int connect_both(int fd, const struct sockaddr *addr, socklen_t len)
{
	bool nonblock = fd_nonblocking(fd);
	struct fdent *e;
	sigset_t old;
	int sfd, tfd, ret, err;

	sfd = sdp_socket(fd, true);
	if (sfd < 0)
		goto tcp;
	rebind(fd, sfd);
	ret = real.connect(sfd, addr, len);
	if (ret < 0 && errno == EINPROGRESS && !nonblock)
		ret = wait_connect(sfd, connect_ms);
	if (ret < 0 && errno != EINPROGRESS) {
		err = errno;
		real.close(sfd);
		logmsg(SDP_LOG_SUMMARY, "connect %s: sdp failed (%s): tcp",
		       ADDRSTR(addr, len), strerrorname_np(err));
		goto tcp;
	}
	lock_tab(&old);
	e = get(fd);
	if (!e || e->kind != FD_CAND) {
		unlock_tab(&old);
		real.close(sfd);
		errno = EBADF;
		return -1;
	}
	if (ret == 0) {
		if (install(fd, e, sfd) < 0) {
			unlock_tab(&old);
			goto tcp;
		}
		set_kind(fd, e, FD_SDP);
		unlock_tab(&old);
		logmsg(SDP_LOG_SUMMARY, "connect %s: sdp", ADDRSTR(addr, len));
		return 0;
	}
	/* In progress, nonblocking: hold the TCP socket aside. */
	tfd = real.fcntl(fd, F_DUPFD_CLOEXEC, hidden_min);
	if (tfd < 0)
		tfd = real.fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (tfd < 0 || install(fd, e, sfd) < 0) {
		err = errno;
		if (tfd >= 0)
			real.close(tfd);
		unlock_tab(&old);
		logmsg(SDP_LOG_WARN, "connect %s: cannot set up the SDP attempt (%s): tcp",
		       ADDRSTR(addr, len), strerror(err));
		goto tcp;
	}
	e->tcp_fd = tfd;
	memcpy(&e->peer, addr, len);
	e->peerlen = len;
	e->deadline = now_ms() + connect_ms;
	mark_hidden(tfd);
	set_kind(fd, e, FD_CONNECTING);
	unlock_tab(&old);
	logmsg(SDP_LOG_DEBUG, "connect %s: trying sdp (nonblocking)",
	       ADDRSTR(addr, len));
	errno = EINPROGRESS;
	return -1;
tcp:
	forget(fd);
	return real.connect(fd, addr, len);
}

/*
 * Settle a "both" attempt in progress on @fd, waiting up to @wait_ms for
 * it.  Returns 1 while it is still in progress, 0 when it is settled
 * (over SDP, or a TCP connect was started on @fd, or failed: FD_FAILED).
 */
static int settle(int fd, int wait_ms)
{
	struct pollfd p = { fd, POLLOUT, 0 };
	struct sockaddr_storage peer;
	socklen_t l = sizeof(int), plen;
	struct fdent *e;
	long long left;
	sigset_t old;
	int err = 0, sdp_err, tfd, ret, fl;

	e = get(fd);
	if (!e || e->kind != FD_CONNECTING)
		return 0;
	left = e->deadline - now_ms();
	if (wait_ms > left)
		wait_ms = left > 0 ? left : 0;
	real.ppoll(&p, 1, &(struct timespec){ wait_ms / 1000,
					      wait_ms % 1000 * 1000000 },
		   NULL);

	lock_tab(&old);
	e = get(fd);
	if (!e || e->kind != FD_CONNECTING) {
		unlock_tab(&old);
		return 0;
	}
	p = (struct pollfd){ fd, POLLOUT, 0 };
	real.ppoll(&p, 1, &(struct timespec){ 0, 0 }, NULL);
	if (!p.revents && now_ms() < e->deadline) {
		unlock_tab(&old);
		return 1;
	}
	if (p.revents)
		real.getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l);
	else
		err = ETIMEDOUT;
	if (!err && (p.revents & POLLHUP))
		err = ECONNRESET;
	if (!err && (p.revents & POLLOUT)) {
		tfd = e->tcp_fd;
		set(tfd, NULL);
		real.close(tfd);
		e->tcp_fd = -1;
		set_kind(fd, e, FD_SDP);
		logmsg(SDP_LOG_SUMMARY, "connect %s: sdp",
		       ADDRSTR(&e->peer, e->peerlen));
		unlock_tab(&old);
		return 0;
	}
	/* SDP failed or took too long: the program's TCP socket takes over. */
	sdp_err = p.revents ? (err ? err : ECONNRESET) : ETIMEDOUT;
	tfd = e->tcp_fd;
	peer = e->peer;
	plen = e->peerlen;
	fl = real.fcntl(fd, F_GETFL);
	if (fl >= 0)
		real.fcntl(tfd, F_SETFL, fl);
	ret = real.connect(tfd, (struct sockaddr *)&peer, plen);
	err = ret < 0 ? errno : 0;
	set(tfd, NULL);
	e->tcp_fd = -1;
	if (install(fd, e, tfd) < 0) {
		/* Cannot happen with valid descriptors; leave SDP's error. */
		set_kind(fd, e, FD_SDP);
		unlock_tab(&old);
		return 0;
	}
	logmsg(SDP_LOG_SUMMARY, "connect %s: sdp %s (%s): tcp",
	       ADDRSTR(&peer, plen), p.revents ? "failed" : "took too long",
	       strerrorname_np(sdp_err));
	if (ret == 0 || err == EINPROGRESS) {
		set(fd, NULL);
		free_entry(e);
	} else {
		e->err = err;
		set_kind(fd, e, FD_FAILED);
	}
	unlock_tab(&old);
	return 0;
}

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct fdent *e;
	enum sdp_use use;
	sigset_t old;
	int ret, err;

	ensure_init();
	e = get(fd);
	if (!e)
		return real.connect(fd, addr, len);
	if (e->kind == FD_CONNECTING) {
		settle(fd, 0);
		e = get(fd);
		if (e && e->kind == FD_CONNECTING) {
			errno = EALREADY;
			return -1;
		}
	}
	if (e && e->kind == FD_FAILED) {
		lock_tab(&old);
		e = get(fd);
		if (e && e->kind == FD_FAILED) {
			err = e->err;
			set(fd, NULL);
			free_entry(e);
			unlock_tab(&old);
			errno = err;
			return -1;
		}
		unlock_tab(&old);
	}
	if (!e || e->kind != FD_CAND || !addr ||
	    (addr->sa_family != AF_INET && addr->sa_family != AF_INET6) ||
	    len > sizeof(struct sockaddr_storage))
		return real.connect(fd, addr, len);

	decide(SDP_ROLE_CLIENT, addr, len, &use);
	switch (use) {
	case SDP_USE_SDP:
		if (convert(fd, fd_nonblocking(fd)) < 0) {
			logmsg(SDP_LOG_WARN, "connect %s: no SDP socket (%s): tcp",
			       ADDRSTR(addr, len), strerror(errno));
			break;
		}
		rebind(fd, fd);
		ret = real.connect(fd, addr, len);
		err = errno;
		logmsg(SDP_LOG_SUMMARY, "connect %s: sdp%s%s",
		       ADDRSTR(addr, len), ret ? ": " : "",
		       ret ? strerror(err) : "");
		errno = err;
		return ret;
	case SDP_USE_BOTH:
		return connect_both(fd, addr, len);
	case SDP_USE_TCP:
		break;
	}
	forget(fd);
	return real.connect(fd, addr, len);
}

/* -------------------------------------------------------------------- */
/* close, dup, fcntl, shutdown                                          */

/* Take @fd out of the table as it is being closed; under the lock.
 * Returns a descriptor to close after unlocking (or -1). */
static int drop(int fd)
{
	struct fdent *e = get(fd);
	unsigned int i, j;

	if (!e || e->kind == FD_HIDDEN)
		return -1;
	set(fd, NULL);
	if (e->kind == FD_EPOLL) {
		/* Registrations in this set are gone with it. */
		for (i = 0; i < N_CHUNKS; i++) {
			fdslot *c = atomic_load(&chunks[i]);

			if (!c)
				continue;
			for (j = 0; j < CHUNK_SIZE; j++) {
				struct fdent *x = atomic_load(&c[j]);
				unsigned int k, n = 0;

				if (!x || x == &hidden_marker)
					continue;
				for (k = 0; k < x->n_eps; k++)
					if (x->eps[k].epfd != fd)
						x->eps[n++] = x->eps[k];
				x->n_eps = n;
			}
		}
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

/* Move a hidden descriptor out of the way of dup2(..., @fd). */
static int rehome_hidden(int fd)
{
	unsigned int i, j;
	int nfd;

	nfd = real.fcntl(fd, F_DUPFD_CLOEXEC, hidden_min);
	if (nfd < 0)
		nfd = real.fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0)
		return -1;
	if (fd == log_fd)
		log_fd = nfd;
	for (i = 0; i < N_CHUNKS; i++) {
		fdslot *c = atomic_load(&chunks[i]);

		if (!c)
			continue;
		for (j = 0; j < CHUNK_SIZE; j++) {
			struct fdent *x = atomic_load(&c[j]);

			if (!x || x == &hidden_marker)
				continue;
			if (x->shadow && x->shadow->fd == fd)
				x->shadow->fd = nfd;
			if (x->kind == FD_CONNECTING && x->tcp_fd == fd)
				x->tcp_fd = nfd;
		}
	}
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

static int fcntl_common(int fd, int cmd, void *arg)
{
	ensure_init();
	if ((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && get(fd))
		return do_dup(fd, (int)(long)arg, cmd, 1);
	return real.fcntl(fd, cmd, arg);
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(fd, cmd, arg);
}

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
			   fd >= (unsigned int)(N_CHUNKS * CHUNK_SIZE) - 1;
		struct fdent *e;

		if (fd >= (unsigned int)(N_CHUNKS * CHUNK_SIZE))
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
		for (int fd = lowfd; fd < N_CHUNKS * CHUNK_SIZE; fd++) {
			struct fdent *e = get(fd);

			if (!(e && e->kind == FD_HIDDEN))
				close(fd);
		}
	}
}

/* Retire a shadow: its SDP listener goes, its number stays ours until
 * the last user lets go (a placeholder that is never readable). */
static void shadow_retire(struct shadow *sh)
{
	int ph;

	if (sh->retired)
		return;
	sh->retired = true;
	ph = real.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ph >= 0) {
		real.dup3(ph, sh->fd, O_CLOEXEC);
		real.close(ph);
	}
}

EXPORT int shutdown(int fd, int how)
{
	struct fdent *e;
	sigset_t old;
	int ret, err;

	ensure_init();
	e = get(fd);
	ret = real.shutdown(fd, how);
	if (!e || e->kind != FD_LISTEN_BOTH || ret < 0 || how == SHUT_WR)
		return ret;
	err = errno;
	lock_tab(&old);
	e = get(fd);
	if (e && e->kind == FD_LISTEN_BOTH)
		shadow_retire(e->shadow);
	unlock_tab(&old);
	errno = err;
	return ret;
}

/* -------------------------------------------------------------------- */
/* poll, ppoll, select, pselect                                         */

static long long ts_deadline(const struct timespec *ts)
{
	if (!ts)
		return -1;
	return now_ms() + ts->tv_sec * 1000LL + (ts->tv_nsec + 999999) / 1000000;
}

/*
 * The wait of the program's poll() on @fds with the shadows of "both"
 * listeners added and "both" connects settled.  @deadline in ms (-1:
 * none).  Returns the count for the program's array.
 */
static int poll_special(struct pollfd *fds, nfds_t n, long long deadline,
			const sigset_t *mask)
{
	struct pollfd stack[64], *all = stack;
	struct shadow **shs = NULL, *shstack[64];
	int *owner = NULL, ostack[64];
	int ret;

	if (n > 32) {
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
		long long wake = deadline, now;
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

		now = now_ms();
		if (wake >= 0) {
			long long left = wake > now ? wake - now : 0;

			ts.tv_sec = left / 1000;
			ts.tv_nsec = left % 1000 * 1000000;
		}
		ret = real.ppoll(all, n + extra, wake >= 0 ? &ts : NULL, mask);
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
	struct pollfd stack[64], *p = stack;
	int fd, n = 0, ret, count = 0;

	if (nfds > 64) {
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

/*
 * epoll_wait() on a set that holds "both" connects in progress: settle
 * them when they have news or time is up, and hide the event of a failed
 * SDP attempt (the TCP socket now in its place reports for itself).
 */
static int epoll_special(int epfd, struct epoll_event *evs, int max,
			 long long deadline, const sigset_t *mask)
{
	for (;;) {
		struct epoll_event hide[16];
		int nhide = 0, i, j, ret, fd;
		long long wake = deadline, now;
		struct timespec ts;
		sigset_t old;
		int conn[16], nconn = 0;

		lock_tab(&old);
		for (fd = 0; fd < N_CHUNKS * CHUNK_SIZE && nconn < 16; fd++) {
			fdslot *c = atomic_load(&chunks[fd >> CHUNK_BITS]);
			struct fdent *e;

			if (!c) {
				fd |= CHUNK_SIZE - 1;
				continue;
			}
			e = atomic_load(&c[fd & (CHUNK_SIZE - 1)]);
			if (!e || e->kind != FD_CONNECTING)
				continue;
			for (i = 0; i < (int)e->n_eps; i++)
				if (e->eps[i].epfd == epfd)
					break;
			if (i == (int)e->n_eps)
				continue;
			conn[nconn++] = fd;
			if (wake < 0 || e->deadline < wake)
				wake = e->deadline;
		}
		unlock_tab(&old);

		now = now_ms();
		if (wake >= 0) {
			long long left = wake > now ? wake - now : 0;

			ts.tv_sec = left / 1000;
			ts.tv_nsec = left % 1000 * 1000000;
		}
		if (real.epoll_pwait2)
			ret = real.epoll_pwait2(epfd, evs, max,
						wake >= 0 ? &ts : NULL, mask);
		else
			ret = real.epoll_pwait(epfd, evs, max,
					       wake >= 0 ? (int)((ts.tv_sec * 1000) +
						 ts.tv_nsec / 1000000) : -1,
					       mask);
		if (ret < 0)
			return ret;

		for (i = 0; i < nconn; i++) {
			struct epoll_event ev = { 0 };
			struct fdent *e;
			bool have = false;
			unsigned int k;

			lock_tab(&old);
			e = get(conn[i]);
			if (e && e->kind == FD_CONNECTING) {
				for (k = 0; k < e->n_eps; k++)
					if (e->eps[k].epfd == epfd) {
						ev = e->eps[k].ev;
						have = true;
					}
			}
			unlock_tab(&old);
			if (!have)
				continue;
			settle(conn[i], 0);
			e = get(conn[i]);
			if ((!e || e->kind == FD_CONNECTING) && nhide < 16)
				hide[nhide++] = ev;
		}
		for (i = j = 0; i < ret; i++) {
			int h;

			for (h = 0; h < nhide; h++)
				if (evs[i].data.u64 == hide[h].data.u64)
					break;
			if (h == nhide)
				evs[j++] = evs[i];
		}
		ret = j;
		if (ret || (deadline >= 0 && now_ms() >= deadline))
			return ret;
	}
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
	if (!epoll_has_connecting()) {
		if (real.epoll_pwait2)
			return real.epoll_pwait2(epfd, evs, max, ts, mask);
		return real.epoll_pwait(epfd, evs, max,
					ts ? (int)(ts->tv_sec * 1000 +
						   ts->tv_nsec / 1000000) : -1,
					mask);
	}
	return epoll_special(epfd, evs, max, ts_deadline(ts), mask);
}
