// SPDX-License-Identifier: GPL-2.0
/*
 * Stress: random, racing socket calls on SDP sockets from several threads
 * for a bounded time, then the checks that nothing was left behind.
 *
 * What runs.  SDP_STRESS_THREADS workers share a table of SLOTS slots,
 * each an fd (or none) with a hint of what the socket is (fresh,
 * listening, connected, at end of stream).  A worker loops picking a
 * random operation (ops[] below, with weights) and random slots:
 *   socket (also with a bad type or protocol), bind (the test address,
 *   the wildcard, loopback, an address no device has, another
 *   listener's port, a v4-mapped address, bad lengths, families and
 *   pointers), listen, connect (to the table's listeners on the guest's
 *   own rxe address, to ports nobody listens on, to loopback, to an
 *   address that never answers; blocking and not), accept/accept4 (with
 *   and without an address, short and bad address buffers, bad flags),
 *   send/sendto/write/writev/sendmsg and recv/recvfrom/read/readv/
 *   recvmsg of every size class, from 0 bytes to twice the largest
 *   zero-copy advertisement: buffered (nonblocking or small) and
 *   zero-copy (blocking and at least SDP_ZCOPY_THRESH), with MSG_DONTWAIT,
 *   MSG_MORE, MSG_PEEK, MSG_WAITALL, MSG_OOB, from good memory and from
 *   bad memory (NULL, an unmapped low address, PROT_NONE pages, a kernel
 *   address, a buffer that runs into a guard page, iovecs with empty
 *   elements, NULL bases of length 0, unmapped bases, more than
 *   UIO_MAXIOV elements, an unmapped iovec array), sendfile() from a
 *   file of the same bytes (from offset 0: gathered for zero-copy; or
 *   from an odd one: copied),
 *   setsockopt/getsockopt at SOL_SOCKET, SOL_TCP, SOL_SDP and random
 *   levels with random names, lengths and pointers, ioctl (FIONREAD/
 *   SIOCINQ, SIOCOUTQ, SIOCOUTQNSD, SIOCATMARK, FIONBIO, random
 *   commands), shutdown,
 *   poll, getsockname/getpeername, dup/dup2/dup3/F_DUPFD_CLOEXEC over
 *   other slots, close (also with SO_LINGER {1, 0} and {1, 1}), and on
 *   purpose:
 *   - a helper thread closes, shuts down or dup2()s over a descriptor
 *     while the worker is in a blocking send or recv on it;
 *   - a helper thread munmap()s the memory a blocking send (zero-copy
 *     sized) or recv is using;
 *   - fork(): the child inherits every descriptor, makes a few calls on
 *     them (zero-copy sized sends among them) and exits, or is killed in
 *     the middle of one;
 *   - the main thread sends SIGUSR1 (no SA_RESTART) to random workers,
 *     so that waits end with EINTR.
 * net.sdp.fin_timeout is lowered to 5 s so that closed sockets whose
 * peer stays open are aborted by their timeout during the run, and
 * net.sdp.rx_idle_ms to 50 ms so that receive rings that grew shrink
 * back (and grow again) amid all of it.  Over iWARP,
 * net.ipv4.tcp_syn_retries goes down to 2 (7 s): a connect to an
 * address nobody has lasts as long as its SYN retries there, also after
 * the close (soft-iWARP connects synchronously; sdp(7), "iWARP
 * devices"), and the checks after the storm wait 60 s at most.
 *
 * Bounds.  Every blocking call is bounded: each socket gets SO_RCVTIMEO
 * and SO_SNDTIMEO of 20 ms to 1 s when it is made (accepted sockets get
 * them set too), poll() waits at most 20 ms, and the random socket
 * options never touch the timeouts.  A watchdog in the main thread fails
 * the test if a call has not returned after SDP_STRESS_STALL seconds, and
 * names the call.
 *
 * Descriptors.  The workers race on the sockets on purpose: a slot's fd
 * may be closed or replaced by another thread between the moment a
 * worker reads it and its call, so a call may land on another of the
 * test's sockets or on a closed number (EBADF).  It can land on nothing
 * else: during the storm the only descriptors made are sockets (no file
 * is opened, no pipe made; the fork child's calls are in its own table),
 * so a number freed by a close can only be reused for one of the test's
 * sockets, and the test's own descriptors (stdout, /dev/kmsg, the memfd,
 * the witness's connection: witness_setup()) are opened before the storm
 * and closed after it.  dup2() targets are slot descriptors only.
 * ENOTSOCK is therefore always a failure.  After the storm every
 * descriptor the storm made is closed, whichever slot (if any) it ended
 * up in.
 *
 * Pass criteria (SDP; with SDP_TEST_FAMILY=tcp SDP_TEST_ADDR=127.0.0.1
 * the storm runs against TCP, the reference, and the SDP-only checks are
 * skipped):
 *   test_stress_storm: every call returned (watchdog); every result was
 *     a success with a sane value -- a count no larger than asked nor
 *     than the memory that was accessible, no send of 0 bytes for a
 *     nonzero length, option lengths no larger than given, SO_ERROR,
 *     SO_DOMAIN, SO_TYPE, SO_PROTOCOL, SIOCINQ, SIOCOUTQ, SIOCATMARK and
 *     poll bits as they must be -- or an errno in that call's allowed set
 *     (see "Allowed errors" below); every byte received is one the test
 *     sent (all memory the test sends from holds the byte 0xa5); fork
 *     children exited cleanly (or by the parent's SIGKILL); the run did
 *     work (connections, accepts, bytes each way, bad-pointer calls,
 *     races, forks, and in /proc/net/sdp_stats connections established
 *     both ways and zero-copy sends read by RDMA); no pages stay pinned;
 *     no connection was aborted for a completion error; an ENOBUFS came
 *     only with a memory refusal counted; the kernel log has no Oops,
 *     BUG, WARNING, lockdep, hung-task or stall report and no SDP warning
 *     about its peer (both ends are this module: any such warning is a
 *     bug), except "no answer to SrcAvailCancel", which two ends that
 *     both write large blocks while neither reads can meet legitimately.
 *   test_stress_drains: after the storm, /proc/net/sdp and the CurrEstab,
 *     HalfOpen and MemPages gauges are back to their values before it, and
 *     the RDMA resources (PD, CQ, QP, CM id, MR) to their counts, within
 *     60 s.
 *   test_stress_unloads: the module unloads, holds no RDMA resource after
 *     that, loads again and carries a connection (buffered and
 *     zero-copy); on a real host (host mode) only when tests/run_tests
 *     loaded sdp for the run.
 *
 * Knobs (environment):
 *   SDP_STRESS_SEED     random seed (default: from the clock), always
 *                       printed; it replays the same choices per thread,
 *                       not the same interleaving of the threads.
 *   SDP_STRESS_SECONDS  how long the storm runs (default 20); the test's
 *                       alarm (SDP_TEST_TIMEOUT) is extended to fit.
 *   SDP_STRESS_THREADS  workers (default 6, 1..32).
 *   SDP_STRESS_STALL    seconds a call may take before the watchdog fails
 *                       the test (default 60).
 */
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sdp.h>
#include <linux/sockios.h>

#include "net.h"
#include "tap.h"
#include "util.h"

#define SLOTS		32
#define MAX_THREADS	32
#define MAX_IO		(2 << 20)	/* largest send or recv: 2 advertisements */
#define IOVS_MAX	1024		/* the kernel's UIO_MAXIOV */
#define FILL		0xa5		/* every byte the test sends */
#define MAX_FAILS	16
#define MAX_LISTENERS	6
/* SDP_TCP_FALLBACK_TIMEOUT's largest value (sdp(7)). */
#define SDP_FB_TIMEOUT_MAX	600000
#define DRAIN_MS	60000		/* sockets and RDMA resources drain */
#define UNLOAD_MS	30000
#define FIN_TIMEOUT	"5"		/* net.sdp.fin_timeout during the storm */
#define LOW_ADDR	((void *)0x1000)	/* below mmap_min_addr: never mapped */
#define KERNEL_ADDR	((void *)0xffff888000000000UL)	/* the direct map */
#define FIN_SYSCTL	"/proc/sys/net/sdp/fin_timeout"
#define RX_IDLE_MS	"50"		/* net.sdp.rx_idle_ms during the storm */
#define RX_IDLE_SYSCTL	"/proc/sys/net/sdp/rx_idle_ms"
#define SYN_RETRIES_SYSCTL "/proc/sys/net/ipv4/tcp_syn_retries"
#define THRESH_SYSCTL	"/proc/sys/net/sdp/zcopy_thresh"
#define BURST_SYSCTL	"/proc/sys/net/core/message_burst"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD	77
#endif

/* ---- Allowed errors ---- */

/*
 * The reference is TCP (Documentation/networking/sdp.rst: "where this
 * section does not say otherwise, an SDP socket behaves and fails as a
 * TCP socket does").  A call's result is checked against the set for
 * that call; a few errors are allowed only for the variant that provokes
 * them (EFAULT only with bad memory, EINVAL only with a bad length or
 * flag, or from a MSG_OOB receive with no urgent byte, ...).  EBADF is allowed everywhere: a
 * slot's descriptor may have been closed by another thread (on purpose).
 * EINTR is allowed for every call that can wait: SIGUSR1 arrives without
 * SA_RESTART.
 *
 * CONN_ERRS: the errors a connection can carry (sk_err) and report in a
 * later call on the socket -- connect, send, recv, SO_ERROR -- once, as
 * TCP's do.  A slot's socket may have had an earlier connect to any of
 * the targets, so each of them can come from any of those calls:
 *   ECONNREFUSED  nobody listened on the port, the listener's backlog
 *                 was full, or it closed with the request queued;
 *   ECONNRESET    the peer aborted: close with unread data, SO_LINGER
 *                 {1, 0}, its fin_timeout ran out;
 *   EPIPE         the same after the peer's end of stream (sdp.rst,
 *                 close); and, from connect(), the peer reset the
 *                 connection between its establishment and connect()
 *                 returning, as TCP can;
 *   ETIMEDOUT     our own abort: the CM's request retries ran out, no
 *                 answer to a SrcAvailCancel in 10 s, or TCP_USER_TIMEOUT
 *                 (set to 1 ms at random, it ends a connection whose
 *                 data waits for credits that long; sdp.rst, Dead peers);
 *   EHOSTUNREACH  address resolution of a target failed (sdp.rst, connect);
 *   ENETUNREACH   the loopback target: no RDMA device carries it;
 *   ECONNABORTED  connect()'s answer for an attempt that ended without an
 *                 error recorded (sdp_connect());
 *   ENOBUFS       the connection was refused for memory (net.sdp.mem);
 *                 cross-checked with MemRefused at the end.
 * recv() does not get EPIPE: TCP's recv() returns end of stream once the
 * peer's FIN came, also when a reset follows (tcp_recvmsg() looks at
 * SOCK_DONE before sk_err), so EPIPE from recv() is a difference from TCP.
 */
#define CONN_ERRS_BUT_EPIPE						\
	ECONNREFUSED, ECONNRESET, ETIMEDOUT, EHOSTUNREACH, ENETUNREACH,	\
	ECONNABORTED, ENOBUFS
#define CONN_ERRS	CONN_ERRS_BUT_EPIPE, EPIPE

static const int errs_conn[] = { CONN_ERRS, 0 };
/*
 * connect(): the above, and as TCP: EINPROGRESS (nonblocking, or
 * SO_SNDTIMEO ran out), EALREADY (an attempt is under way), EISCONN
 * (connected, or listening), EADDRINUSE (the port bound before was taken
 * meanwhile, sdp.rst), EINVAL (TCP: after shutdown() of a socket that was
 * not connected, which leaves it SS_DISCONNECTING).
 */
static const int errs_connect[] = { EBADF, EINTR, EINPROGRESS, EALREADY,
				    EISCONN, EADDRINUSE, EINVAL, CONN_ERRS,
				    0 };
/* send(): EAGAIN (no room, nonblocking or SO_SNDTIMEO), EPIPE (not
 * connected, shut down for writing, or the connection's error was
 * reported already). */
static const int errs_send[] = { EBADF, EINTR, EAGAIN, CONN_ERRS, 0 };
/* recv(): EAGAIN, ENOTCONN (listening, never connected, closed). */
static const int errs_recv[] = { EBADF, EINTR, EAGAIN, ENOTCONN,
				 CONN_ERRS_BUT_EPIPE, 0 };
/* accept(): EINVAL (not listening), EAGAIN (nothing queued). */
static const int errs_accept[] = { EBADF, EINTR, EAGAIN, EINVAL, 0 };
/* bind(): EINVAL (bound already, or not closed), EADDRINUSE. */
static const int errs_bind[] = { EBADF, EINVAL, EADDRINUSE, 0 };
/* listen(): EINVAL (connected or connecting), EADDRINUSE. */
static const int errs_listen[] = { EBADF, EINVAL, EADDRINUSE, 0 };
/* shutdown(): ENOTCONN (not connected). */
static const int errs_shutdown[] = { EBADF, ENOTCONN, 0 };
/* getsockname()/getpeername(): ENOTCONN (peer of an unconnected one). */
static const int errs_getname[] = { EBADF, ENOTCONN, 0 };
/* SIOCINQ/SIOCOUTQ/SIOCOUTQNSD: EINVAL on a listener, as TCP. */
static const int errs_inq[] = { EBADF, EINVAL, 0 };
/* dup2()/dup3(): EBUSY when racing with the allocation of that number. */
static const int errs_dup[] = { EBADF, EBUSY, 0 };
static const int errs_badf[] = { EBADF, 0 };
static const int errs_poll[] = { EINTR, 0 };
/*
 * SOL_SOCKET is the socket core's (net/core/sock.c), not SDP's: the
 * answers of sock_setsockopt()/sock_getsockopt() to the names and
 * values the test passes (zeroed or small values, odd lengths): EINVAL
 * (length or value), ENOPROTOOPT (unknown or read-only name),
 * EOPNOTSUPP (SO_ZEROCOPY, SO_RESERVE_MEM: not for this family; SO_PEEK_OFF
 * on TCP before 6.9), ENODEV (SO_BINDTODEVICE of a name that is no device), EPERM
 * (SO_TXTIME clock checks), ENOENT (SO_DETACH_FILTER with none),
 * EDOM (a timeval out of range: never passed, the timeouts are left
 * alone), ENODATA (SO_PEERGROUPS, SO_PEERPIDFD: no peer credentials),
 * ENOTCONN (SO_PEERNAME unconnected), ERANGE (SO_PEERSEC and friends
 * with a short buffer), EBADF (SO_ATTACH_BPF of a descriptor that is no
 * BPF program; SO_DEVMEM_DONTNEED on a socket that is not TCP).
 */
static const int errs_sol_socket[] = { EBADF, EINVAL, ENOPROTOOPT,
				       EOPNOTSUPP, ENODEV, EPERM, ENOENT,
				       ENODATA, ENOTCONN, ERANGE, 0 };
/*
 * ioctl() with a random command (the dangerous ones are never drawn,
 * random_ioctl()): the VFS and socket core answer ENOTTY for commands
 * nobody knows, EINVAL/EOPNOTSUPP/EPERM/EFAULT for the generic file
 * ioctls (FIBMAP, FIEMAP, ...) a socket has no use for.
 */
static const int errs_ioctl_random[] = { EBADF, ENOTTY, EINVAL, EOPNOTSUPP,
					 EPERM, EFAULT, 0 };

static bool in_set(int err, const int *set)
{
	for (; *set; set++)
		if (*set == err)
			return true;
	return false;
}

/* ---- State shared by the threads ---- */

enum kind { K_EMPTY, K_FRESH, K_LISTEN, K_CONN, K_EOF };
#define KM(k)		(1u << (k))
#define KM_ANY		(KM(K_FRESH) | KM(K_LISTEN) | KM(K_CONN) | KM(K_EOF))

/*
 * A slot of the table.  The lock keeps the bookkeeping consistent (fd,
 * kind and port change together); it is never held across a call on the
 * socket, except dup2() onto the slot's own number.  The kind is a hint:
 * the socket behind the number may have changed since.
 */
struct slot {
	pthread_mutex_t lock;
	int fd;
	enum kind kind;
	uint16_t port;		/* a listener's */
};

/* What a thread is doing, for the watchdog. */
struct callinfo {
	_Atomic long long start;	/* now_ms() when it began; 0: none */
	const char *_Atomic name;
	_Atomic int fd;
	_Atomic long len;
};

enum race_action { RACE_CLOSE, RACE_SHUTDOWN, RACE_DUP2, RACE_MUNMAP };

/* A worker's helper thread: one action, after a delay, on request. */
struct race {
	pthread_t thread;
	sem_t go, done;
	bool quit;
	enum race_action action;
	int fd, fd2, how;
	void *addr;
	size_t len;
	int delay_us;
	struct callinfo ci;
};

struct worker {
	int id;
	pthread_t thread;
	struct rng rng;
	unsigned char *sbuf, *rbuf;	/* bufsize bytes, then a PROT_NONE page */
	struct iovec *iov;		/* IOVS_MAX + 1 */
	struct race race;
	struct callinfo ci;
	bool running;
	char desc[512];
	unsigned long long op_count[32];
	long long op_ms[32];		/* time spent in each */
};

/* Written by a fork child, read by its parent (MAP_SHARED). */
struct child_report {
	int bad;
	char msg[600];
};

/* Work done, summed over the threads. */
struct counts {
	_Atomic unsigned long long calls, connects, refused, accepts, sent,
		zc_sends, received, efaults, eintrs, eofs, forks, kills,
		munmaps, close_races, dup2s, closes, signals, enobufs, badf;
};

static struct {
	int threads, seconds, stall_ms;
	uint64_t seed;
	bool sdp;
	int family;
	size_t page, bufsize, thresh;
	struct sockaddr_storage addr;		/* the test address, port 0 */
	struct slot slots[SLOTS];
	struct worker w[MAX_THREADS];
	unsigned char *noaccess;		/* PROT_NONE, never mapped */
	int memfd;				/* MAX_IO bytes of FILL */
	struct child_report *reports;		/* one per worker */
	struct witness {			/* SDP only: storm_witness() */
		int tx, rx;			/* a connection, both ends */
		pthread_t sender, reader;
		atomic_bool stop;
		unsigned long long sendfiles, sends, bursts, received, bad;
	} wit;
	atomic_bool stop;
	long long end_ms;
	pthread_mutex_t fail_lock;
	int nfail, nkinds;		/* failures, and different ones */
	char fail[MAX_FAILS][560];
	int fail_worker[MAX_FAILS], fail_count[MAX_FAILS];
	struct counts c;
} S;

/* In a fork child: where its failure goes (no locks, no stdio). */
static struct child_report *in_child;

/* Kept across the suite's tests (each runs in its own process). */
struct baseline {
	bool valid;
	int sockets;
	long long curr_estab, half_open, mem_pages;
	struct rdma_res res;
};
static struct baseline *base;

#define COUNT(f, n)	atomic_fetch_add(&S.c.f, (n))

static void failf(struct worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* @msg without its numbers: failures that differ only in them are one. */
static void fail_key(const char *msg, char *key, size_t size)
{
	size_t n = 0;

	for (; *msg && n + 1 < size; msg++)
		if (*msg < '0' || *msg > '9')
			key[n++] = *msg;
	key[n] = '\0';
}

/*
 * Record a failure: the test fails at the end of the storm, which goes on
 * (so that one problem does not hide the others); failures that differ
 * only in their numbers are counted once.  A fork child reports into
 * shared memory and exits.
 */
static void failf(struct worker *w, const char *fmt, ...)
{
	char msg[560], key[560], other[sizeof(S.fail[0])];
	va_list ap;
	int i;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (in_child) {
		snprintf(in_child->msg, sizeof(in_child->msg), "%s", msg);
		in_child->bad = 1;
		_exit(1);
	}
	fail_key(msg, key, sizeof(key));
	pthread_mutex_lock(&S.fail_lock);
	S.nfail++;
	for (i = 0; i < S.nkinds; i++) {
		fail_key(S.fail[i], other, sizeof(other));
		if (!strcmp(key, other))
			break;
	}
	if (i < S.nkinds) {
		S.fail_count[i]++;
	} else if (S.nkinds < MAX_FAILS) {
		snprintf(S.fail[i], sizeof(S.fail[0]), "%s", msg);
		S.fail_worker[i] = w ? w->id : -1;
		S.fail_count[i] = 1;
		S.nkinds++;
	}
	pthread_mutex_unlock(&S.fail_lock);
}

static uint64_t rnd(struct worker *w, uint64_t n)
{
	return rng_next(&w->rng) % n;
}

static bool chance(struct worker *w, int percent)
{
	return (int)rnd(w, 100) < percent;
}

static void call_begin(struct callinfo *ci, const char *name, int fd,
		       long len)
{
	atomic_store(&ci->name, name);
	atomic_store(&ci->fd, fd);
	atomic_store(&ci->len, len);
	atomic_store(&ci->start, now_ms());
}

static void call_end(struct callinfo *ci)
{
	atomic_store(&ci->start, 0);
	COUNT(calls, 1);
}

/* Run @expr as call @name on @fd, for the watchdog; errno after it in @err. */
#define CALL(w, name, fd, len, err, expr)				\
	({								\
		long __r;						\
		call_begin(&(w)->ci, name, fd, len);			\
		errno = 0;						\
		__r = (long)(expr);					\
		err = errno;						\
		call_end(&(w)->ci);					\
		if (__r < 0 && err == EINTR)				\
			COUNT(eintrs, 1);				\
		if (__r < 0 && err == EBADF)				\
			COUNT(badf, 1);					\
		__r;							\
	})

/* @what failed with @err: fail the test unless @err is in @set. */
static bool expect(struct worker *w, const char *what, int fd, int err,
		   const int *set)
{
	if (in_set(err, set))
		return true;
	failf(w, "%s on fd %d failed with %s, not an error this call may give",
	      what, fd, errname(err));
	return false;
}

/* ---- The slot table ---- */

struct pick {
	int idx, fd;
	enum kind kind;
	uint16_t port;
};

static void slot_read(int i, struct pick *p)
{
	struct slot *s = &S.slots[i];

	pthread_mutex_lock(&s->lock);
	p->idx = i;
	p->fd = s->fd;
	p->kind = s->kind;
	p->port = s->port;
	pthread_mutex_unlock(&s->lock);
}

/*
 * A random slot holding a socket, one of the kinds in @want if one is
 * found in a few tries (and one in ten times any kind: the error paths).
 * False if the table looks empty.
 */
static bool pick(struct worker *w, unsigned int want, struct pick *p)
{
	int tries;

	if (chance(w, 10))
		want = KM_ANY;
	for (tries = 0; tries < 12; tries++) {
		slot_read(rnd(w, SLOTS), p);
		if (p->fd >= 0 && (want & KM(p->kind)))
			return true;
	}
	for (tries = 0; tries < 8; tries++) {
		slot_read(rnd(w, SLOTS), p);
		if (p->fd >= 0)
			return true;
	}
	return false;
}

/* Update the hint of slot @idx if it still holds @fd. */
static void slot_hint(int idx, int fd, enum kind kind, uint16_t port)
{
	struct slot *s = &S.slots[idx];

	pthread_mutex_lock(&s->lock);
	if (s->fd == fd) {
		s->kind = kind;
		s->port = port;
	}
	pthread_mutex_unlock(&s->lock);
}

static int close_counted(struct worker *w, int fd)
{
	int err;

	if (CALL(w, "close", fd, 0, err, close(fd)) < 0) {
		expect(w, "close", fd, err, errs_badf);
		return -1;
	}
	COUNT(closes, 1);
	return 0;
}

/* Put a new descriptor in an empty slot; close it if there is none. */
static int slot_put(struct worker *w, int fd, enum kind kind, uint16_t port)
{
	int start = rnd(w, SLOTS), i;

	for (i = 0; i < SLOTS; i++) {
		struct slot *s = &S.slots[(start + i) % SLOTS];

		pthread_mutex_lock(&s->lock);
		if (s->fd < 0) {
			s->fd = fd;
			s->kind = kind;
			s->port = port;
			pthread_mutex_unlock(&s->lock);
			return (start + i) % SLOTS;
		}
		pthread_mutex_unlock(&s->lock);
	}
	close_counted(w, fd);
	return -1;
}

/* Take a socket out of the table (to close it): its fd, or -1. */
static int slot_take(struct worker *w, unsigned int want)
{
	struct pick p;
	struct slot *s;
	int fd = -1;

	if (!pick(w, want, &p))
		return -1;
	s = &S.slots[p.idx];
	pthread_mutex_lock(&s->lock);
	if (s->fd == p.fd) {
		fd = s->fd;
		s->fd = -1;
		s->kind = K_EMPTY;
	}
	pthread_mutex_unlock(&s->lock);
	return fd;
}

static int count_listeners(void)
{
	struct pick p;
	int i, n = 0;

	for (i = 0; i < SLOTS; i++) {
		slot_read(i, &p);
		n += p.fd >= 0 && p.kind == K_LISTEN;
	}
	return n;
}

/* ---- Addresses ---- */

static socklen_t ss_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					   sizeof(struct sockaddr_in);
}

static bool addr_v4(void)
{
	return S.addr.ss_family == AF_INET;
}

/* The test address with @port. */
static socklen_t addr_test(struct sockaddr_storage *ss, uint16_t port)
{
	*ss = S.addr;
	sockaddr_set_port(ss, port);
	return ss_len(ss);
}

/* @str (v4) or @str6 (v6), as the test address's family. */
static socklen_t addr_other(struct sockaddr_storage *ss, const char *str,
			    const char *str6, uint16_t port)
{
	return make_sockaddr(ss, addr_v4() ? str : str6, port);
}

/* The test address as a v4-mapped IPv6 address (SDP takes it as IPv4). */
static socklen_t addr_mapped(struct sockaddr_storage *ss, uint16_t port)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)&S.addr;

	memset(ss, 0, sizeof(*ss));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	sin6->sin6_addr.s6_addr[10] = 0xff;
	sin6->sin6_addr.s6_addr[11] = 0xff;
	memcpy(&sin6->sin6_addr.s6_addr[12], &sin->sin_addr, 4);
	return sizeof(*sin6);
}

/* An address on the test address's subnet that no host has. */
static socklen_t addr_absent(struct sockaddr_storage *ss, uint16_t port)
{
	unsigned char *last;

	addr_test(ss, port);
	last = ss->ss_family == AF_INET6 ?
	       &((struct sockaddr_in6 *)ss)->sin6_addr.s6_addr[15] :
	       (unsigned char *)&((struct sockaddr_in *)ss)->sin_addr + 3;
	*last = *last == 99 ? 98 : 99;
	return ss_len(ss);
}

/* A random listener's port, or a random port if there is none. */
static uint16_t listener_port(struct worker *w)
{
	struct pick p;
	int tries;

	for (tries = 0; tries < 16; tries++) {
		slot_read(rnd(w, SLOTS), &p);
		if (p.fd >= 0 && p.kind == K_LISTEN && p.port)
			return p.port;
	}
	return 1024 + rnd(w, 60000);
}

/* ---- Sockets ---- */

static void set_timeouts(struct worker *w, int fd)
{
	struct timeval tv;
	int err, i;

	for (i = 0; i < 2; i++) {
		long ms = 20 + rng_size(&w->rng, 980);

		tv.tv_sec = ms / 1000;
		tv.tv_usec = (ms % 1000) * 1000;
		if (CALL(w, "setsockopt", fd, 0, err,
			 setsockopt(fd, SOL_SOCKET,
				    i ? SO_SNDTIMEO : SO_RCVTIMEO, &tv,
				    sizeof(tv))) < 0)
			expect(w, "setsockopt(SO_RCVTIMEO/SO_SNDTIMEO)", fd,
			       err, errs_badf);
	}
}

/* A new socket with bounded timeouts (and sometimes small rings). */
static int new_socket(struct worker *w)
{
	int type = SOCK_STREAM, fd, err;

	if (chance(w, 20))
		type |= SOCK_NONBLOCK;
	if (chance(w, 50))
		type |= SOCK_CLOEXEC;
	fd = CALL(w, "socket", -1, 0, err,
		  socket(S.family, type, chance(w, 50) ? 0 : IPPROTO_TCP));
	if (fd < 0) {
		failf(w, "socket(%d, %#x): %s", S.family, type, errname(err));
		return -1;
	}
	set_timeouts(w, fd);
	if (chance(w, 30)) {
		/* 4 buffers each way: less memory, more credit stalls. */
		int v = 128 * 1024;

		if (CALL(w, "setsockopt", fd, 0, err,
			 setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) |
			 setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v))) < 0)
			expect(w, "setsockopt(SO_RCVBUF/SO_SNDBUF)", fd, err,
			       errs_badf);
	}
	return fd;
}

static void op_socket(struct worker *w)
{
	int fd, err;

	if (chance(w, 5)) {
		/* A protocol that is not TCP, or a type that is no stream. */
		static const int bad[][2] = {
			{ SOCK_STREAM, IPPROTO_UDP },
			{ SOCK_SEQPACKET, 0 },
		};
		int i = rnd(w, 2);

		fd = CALL(w, "socket", -1, 0, err,
			  socket(S.family, bad[i][0], bad[i][1]));
		if (fd >= 0) {
			failf(w, "socket(%d, %d, %d) succeeded", S.family,
			      bad[i][0], bad[i][1]);
			close(fd);
			return;
		}
		if (err != EPROTONOSUPPORT && err != ESOCKTNOSUPPORT)
			failf(w, "socket(%d, %d, %d): %s, not EPROTONOSUPPORT/ESOCKTNOSUPPORT",
			      S.family, bad[i][0], bad[i][1], errname(err));
		return;
	}
	fd = new_socket(w);
	if (fd >= 0)
		slot_put(w, fd, K_FRESH, 0);
}

/* A socket from the table (@want kinds), or a new one (*@fresh set). */
static int socket_for(struct worker *w, unsigned int want, int new_pct,
		      struct pick *p, bool *fresh)
{
	*fresh = chance(w, new_pct) || !pick(w, want, p);
	if (*fresh) {
		p->idx = -1;
		p->kind = K_FRESH;
		p->fd = new_socket(w);
		return p->fd;
	}
	return p->fd;
}

static void op_bind(struct worker *w)
{
	struct sockaddr_storage ss;
	const void *addr = &ss;
	const char *what;
	socklen_t len;
	struct pick p;
	bool fresh;
	int fd, err, extra = 0, v = rnd(w, 16);

	fd = socket_for(w, KM(K_FRESH), 30, &p, &fresh);
	if (fd < 0)
		return;
	switch (v) {
	case 0 ... 4:
		what = "bind(test address, port 0)";
		len = addr_test(&ss, 0);
		break;
	case 5:
		what = "bind(a listener's port)";
		len = addr_test(&ss, listener_port(w));
		break;
	case 6:
		what = "bind(wildcard)";
		len = addr_other(&ss, "0.0.0.0", "::", 0);
		break;
	case 7:
		/* sdp.rst: loopback can be bound; no device carries it. */
		what = "bind(loopback)";
		len = addr_other(&ss, "127.0.0.1", "::1", 0);
		break;
	case 8:
		what = "bind(an address no device has)";
		len = addr_other(&ss, "10.99.99.99", "2001:db8::99", 0);
		extra = EADDRNOTAVAIL;
		break;
	case 9:
		what = "bind(short length)";
		len = addr_test(&ss, 0);
		len = rnd(w, 2) ? 4 : 1;
		extra = EINVAL;
		break;
	case 10:
		what = "bind(AF_UNIX)";
		len = addr_test(&ss, 0);
		ss.ss_family = AF_UNIX;
		extra = EAFNOSUPPORT;
		break;
	case 11:
		what = "bind(NULL)";
		len = sizeof(struct sockaddr_in);
		addr = NULL;
		extra = EFAULT;
		break;
	case 12:
		what = "bind(unmapped address)";
		len = sizeof(struct sockaddr_in);
		addr = LOW_ADDR;
		extra = EFAULT;
		break;
	case 13:
		if (S.sdp && addr_v4()) {
			/* OFED-era programs: sin_family AF_INET_SDP. */
			what = "bind(sin_family AF_INET_SDP)";
			len = addr_test(&ss, 0);
			ss.ss_family = AF_INET_SDP;
			break;
		}
		/* fall through */
	default:
		if (S.sdp && addr_v4()) {
			what = "bind(v4-mapped test address)";
			len = addr_mapped(&ss, 0);
		} else {
			what = "bind(test address, port 0)";
			len = addr_test(&ss, 0);
		}
		break;
	}
	if (CALL(w, "bind", fd, len, err, bind(fd, addr, len)) < 0) {
		if (err != extra)
			expect(w, what, fd, err, errs_bind);
	} else if (extra) {
		failf(w, "%s on fd %d succeeded", what, fd);
	}
	if (fresh)
		slot_put(w, fd, K_FRESH, 0);
}

static void op_listen(struct worker *w)
{
	static const int backlogs[] = { 0, 1, 2, 4, 16, 128, -1 };
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct pick p;
	bool fresh = false;
	int fd, err;

	if (count_listeners() < MAX_LISTENERS || chance(w, 10))
		fd = socket_for(w, KM(K_FRESH), 50, &p, &fresh);
	else
		fd = pick(w, KM_ANY, &p) ? p.fd : -1;
	if (fd < 0)
		return;
	if (chance(w, 40)) {
		socklen_t len = addr_test(&ss, 0);

		if (CALL(w, "bind", fd, len, err, bind(fd, (void *)&ss, len)) < 0)
			expect(w, "bind(test address, port 0)", fd, err,
			       errs_bind);
	}
	if (CALL(w, "listen", fd, 0, err,
		 listen(fd, backlogs[rnd(w, 7)])) < 0) {
		expect(w, "listen", fd, err, errs_listen);
		if (fresh)
			slot_put(w, fd, K_FRESH, 0);
		return;
	}
	/* The port to connect to (the number may be another socket by now). */
	memset(&ss, 0, sizeof(ss));
	if (CALL(w, "getsockname", fd, 0, err,
		 getsockname(fd, (void *)&ss, &sl)) < 0) {
		expect(w, "getsockname", fd, err, errs_badf);
		sl = 0;
	}
	if (fresh)
		slot_put(w, fd, K_LISTEN, sl ? sockaddr_port(&ss) : 0);
	else
		slot_hint(p.idx, fd, K_LISTEN, sl ? sockaddr_port(&ss) : 0);
}

/* After EINPROGRESS: wait a little for the outcome, check SO_ERROR. */
static bool connect_outcome(struct worker *w, int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int r, err, soerr = -1;

	r = CALL(w, "poll", fd, 0, err, poll(&pfd, 1, rnd(w, 20)));
	if (r < 0) {
		expect(w, "poll", fd, err, errs_poll);
		return false;
	}
	if (r == 0 || (pfd.revents & POLLNVAL))
		return false;
	if (CALL(w, "getsockopt", fd, 0, err,
		 getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len)) < 0) {
		expect(w, "getsockopt(SO_ERROR)", fd, err, errs_badf);
		return false;
	}
	if (soerr && !in_set(soerr, errs_conn))
		failf(w, "SO_ERROR after a nonblocking connect on fd %d is %s",
		      fd, errname(soerr));
	return !soerr && (pfd.revents & POLLOUT) &&
	       !(pfd.revents & (POLLERR | POLLHUP));
}

static void op_connect(struct worker *w)
{
	struct sockaddr_storage ss;
	const void *addr = &ss;
	const char *what = "connect(a listener)";
	int fd, err, extra = 0, v = rnd(w, 100);
	socklen_t len;
	struct pick p;
	bool fresh;
	long r;

	fd = socket_for(w, KM(K_FRESH), 70, &p, &fresh);
	if (fd < 0)
		return;
	if (v < 80) {
		len = addr_test(&ss, listener_port(w));
		if (S.sdp && addr_v4() && chance(w, 10))
			len = addr_mapped(&ss, sockaddr_port(&ss));
	} else if (v < 88) {
		what = "connect(a random port)";
		len = addr_test(&ss, 1024 + rnd(w, 60000));
	} else if (v < 92) {
		what = "connect(loopback)";
		len = addr_other(&ss, "127.0.0.1", "::1", listener_port(w));
	} else if (v < 93 && S.sdp) {
		/*
		 * Nobody has this address on the dummy (NOARP) link: the CM
		 * retries its request for about 100 s (sdp.rst); the socket
		 * stays connecting until it is closed.
		 */
		what = "connect(an address nobody has)";
		len = addr_absent(&ss, 4000);
	} else if (v < 95) {
		what = "connect(short length)";
		len = addr_test(&ss, listener_port(w));
		len = rnd(w, 2) ? 4 : 1;
		extra = EINVAL;
	} else if (v < 97) {
		what = "connect(AF_UNIX)";
		len = addr_test(&ss, listener_port(w));
		ss.ss_family = AF_UNIX;
		extra = EAFNOSUPPORT;
	} else if (v < 98 && S.sdp) {
		/* TCP disconnects on AF_UNSPEC; SDP takes inet addresses only. */
		what = "connect(AF_UNSPEC)";
		len = addr_test(&ss, 0);
		ss.ss_family = AF_UNSPEC;
		extra = EAFNOSUPPORT;
	} else {
		what = "connect(NULL)";
		len = sizeof(struct sockaddr_in);
		addr = chance(w, 50) ? NULL : LOW_ADDR;
		extra = EFAULT;
	}
	/*
	 * A bad address gets its own error (@extra), or, as TCP answers
	 * from the socket's state before it looks at the address (an
	 * attempt under way: EALREADY, or 0 once it completes), any answer
	 * of connect().
	 */
	r = CALL(w, "connect", fd, len, err, connect(fd, addr, len));
	if (r == 0) {
		COUNT(connects, 1);
	} else if (err != extra) {
		if (expect(w, what, fd, err, errs_connect)) {
			if (err == ECONNREFUSED)
				COUNT(refused, 1);
			if (err == ENOBUFS)
				COUNT(enobufs, 1);
			if (err == EINPROGRESS && chance(w, 50) &&
			    connect_outcome(w, fd)) {
				COUNT(connects, 1);
				r = 0;
			}
		}
	}
	if (fresh)
		slot_put(w, fd, r == 0 ? K_CONN : K_FRESH, 0);
	else if (r == 0)
		slot_hint(p.idx, fd, K_CONN, 0);
}

static void op_accept(struct worker *w)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss), given;
	socklen_t *slp = &sl;
	void *addr = &ss;
	int flags = 0, extra = 0, fd, nfd, err, v = rnd(w, 20);
	struct pick p;

	if (!pick(w, KM(K_LISTEN), &p))
		return;
	fd = p.fd;
	if (chance(w, 50)) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (CALL(w, "poll", fd, 0, err, poll(&pfd, 1, rnd(w, 20))) < 0)
			expect(w, "poll", fd, err, errs_poll);
	}
	if (chance(w, 30))
		flags |= SOCK_NONBLOCK;
	if (chance(w, 30))
		flags |= SOCK_CLOEXEC;
	if (v == 0) {
		addr = NULL;
		slp = NULL;
	} else if (v == 1) {
		sl = 4;		/* truncated: the full length comes back */
	} else if (v == 2) {
		addr = LOW_ADDR;
		extra = EFAULT;
	} else if (v == 3) {
		slp = LOW_ADDR;
		extra = EFAULT;
	} else if (v == 4) {
		flags |= 0x1;	/* no such flag */
		extra = EINVAL;
	}
	given = sl;
	memset(&ss, 0, sizeof(ss));
	nfd = CALL(w, "accept4", fd, 0, err, accept4(fd, addr, slp, flags));
	if (nfd < 0) {
		if (err != extra)
			expect(w, "accept4", fd, err, errs_accept);
		return;
	}
	if (extra)
		failf(w, "accept4 on fd %d succeeded where %s was due", fd,
		      errname(extra));
	if (addr == &ss && slp) {
		if (sl != sizeof(struct sockaddr_in) &&
		    sl != sizeof(struct sockaddr_in6))
			failf(w, "accept4 on fd %d: address length %u", fd, sl);
		else if (given >= 2 && ss.ss_family != AF_INET &&
			 ss.ss_family != AF_INET6)
			failf(w, "accept4 on fd %d: address family %u", fd,
			      ss.ss_family);
	}
	COUNT(accepts, 1);
	set_timeouts(w, nfd);
	slot_put(w, nfd, K_CONN, 0);
}

/* ---- Data: send and recv ---- */

enum api { API_PLAIN, API_TO, API_RW, API_VEC, API_MSG, API_N };
static const char *const api_tx[] = { "send", "sendto", "write", "writev",
				      "sendmsg" };
static const char *const api_rx[] = { "recv", "recvfrom", "read", "readv",
				      "recvmsg" };

/* One send or recv, and what its result may be. */
struct xfer {
	bool tx;
	int fd;
	enum api api;
	int flags;
	size_t len;		/* bytes asked for */
	void *base;		/* the buffer (API_PLAIN, _TO, _RW) */
	struct iovec *iov;	/* the vector (API_VEC, _MSG) */
	int iovcnt;
	size_t mapped;		/* bytes the call can move at most */
	bool bad;		/* bad memory: EFAULT is a legitimate answer */
	int extra;		/* the one answer due (too many iovecs) */
	bool unmapped;		/* the memory may be gone: do not look at it */
	const char *what;	/* the memory, for messages */
};

static const char *flag_str(int flags, char *buf, size_t size)
{
	static const struct { int f; const char *n; } names[] = {
		{ MSG_DONTWAIT, "DONTWAIT" }, { MSG_NOSIGNAL, "NOSIGNAL" },
		{ MSG_MORE, "MORE" }, { MSG_PEEK, "PEEK" },
		{ MSG_WAITALL, "WAITALL" }, { MSG_OOB, "OOB" },
	};
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (flags & names[i].f)
			n += snprintf(buf + n, size - n, "%s%s", n ? "|" : "",
				      names[i].n);
	if (!n)
		snprintf(buf, size, "0");
	return buf;
}

static const char *xfer_str(struct worker *w, const struct xfer *x)
{
	char fl[64], iovs[32] = "";

	if (x->iovcnt)
		snprintf(iovs, sizeof(iovs), ", %d iovecs", x->iovcnt);
	snprintf(w->desc, sizeof(w->desc),
		 "%s(fd %d, %zu bytes, flags %s, %s memory, %zu accessible%s)",
		 x->tx ? api_tx[x->api] : api_rx[x->api], x->fd, x->len,
		 flag_str(x->flags, fl, sizeof(fl)), x->what, x->mapped, iovs);
	return w->desc;
}

/* A size of one of the classes, up to @max. */
static size_t pick_size(struct worker *w, size_t max)
{
	size_t t = S.thresh, n;

	switch (rnd(w, 20)) {
	case 0:
		n = 0;
		break;
	case 1 ... 3:
		n = 1 + rnd(w, 16);
		break;
	case 4 ... 7:
		n = 17 + rnd(w, 4096 - 16);
		break;
	case 8 ... 9:
		n = 4097 + rnd(w, t > 4097 ? t - 4097 : 1);
		break;
	case 10:
		n = t - 1 + rnd(w, 3);		/* around the threshold */
		break;
	case 11 ... 15:
		n = t + rnd(w, (1 << 20) - t + 1);
		break;
	case 16 ... 17:
		n = (1 << 20) + rnd(w, MAX_IO - (1 << 20) + 1);
		break;
	default:
		n = rng_size(&w->rng, MAX_IO);
		break;
	}
	return n < max ? n : max;
}

/*
 * A vector of @len bytes at @buf with empty elements (base and length 0,
 * NULL and length 0, an unmapped base and length 0) among the pieces,
 * and sometimes one bad element (NULL, unmapped or kernel base, nonzero
 * length): x->mapped is what comes before it.
 */
static void build_iov(struct worker *w, struct xfer *x, unsigned char *buf,
		      size_t len)
{
	int max = chance(w, 3) ? IOVS_MAX : 2 + rnd(w, 63), n = 0;
	bool bad = chance(w, 25);
	size_t left = len, total = 0, mapped = 0;
	bool bad_seen = false;

	while (n < max - 1 && left) {
		struct iovec *v = &x->iov[n];
		int r = rnd(w, 10);

		if (r == 0) {
			*v = (struct iovec){ NULL, 0 };
		} else if (r == 1) {
			*v = (struct iovec){ buf, 0 };
		} else if (r == 2) {
			*v = (struct iovec){ LOW_ADDR, 0 };
		} else if (r == 3 && bad && !bad_seen) {
			static void *const bases[] = { NULL, LOW_ADDR,
						       KERNEL_ADDR };

			*v = (struct iovec){ bases[rnd(w, 2)],
					     1 + rnd(w, 65536) };
			if (rnd(w, 3) == 0)
				v->iov_base = S.noaccess;
			bad_seen = true;
			total += v->iov_len;
		} else {
			size_t piece = (max - n <= 2) ? left :
				       1 + rnd(w, left < 65536 ? left :
						  (chance(w, 50) ? left : 65536));

			*v = (struct iovec){ buf, piece };
			buf += piece;
			left -= piece;
			total += piece;
			if (!bad_seen)
				mapped += piece;
		}
		n++;
	}
	if (left) {
		x->iov[n++] = (struct iovec){ buf, left };
		total += left;
		if (!bad_seen)
			mapped += left;
	}
	x->iovcnt = n;
	x->len = total;
	x->mapped = mapped;
	x->bad = bad_seen;
	x->what = bad_seen ? "iovec with a bad element" : "iovec";
}

/* Random api, flags, size and memory for a send (@tx) or recv. */
static void xfer_random(struct worker *w, struct xfer *x, bool tx, int fd)
{
	unsigned char *buf = tx ? w->sbuf : w->rbuf;
	unsigned char *end = buf + S.bufsize;	/* the guard page */
	size_t off = rnd(w, S.page);
	int kind = rnd(w, 100);

	memset(x, 0, sizeof(*x));
	x->tx = tx;
	x->fd = fd;
	x->api = rnd(w, API_N);
	if (x->api != API_RW && x->api != API_VEC) {
		if (tx) {
			if (chance(w, 80))
				x->flags |= MSG_NOSIGNAL;
			if (chance(w, 35))
				x->flags |= MSG_DONTWAIT;
			if (chance(w, 10))
				x->flags |= MSG_MORE;
		} else {
			if (chance(w, 40))
				x->flags |= MSG_DONTWAIT;
			if (chance(w, 10))
				x->flags |= MSG_PEEK;
			if (chance(w, 8))
				x->flags |= MSG_WAITALL;
		}
		if (chance(w, 2))
			x->flags |= MSG_OOB;
	}
	x->len = pick_size(w, MAX_IO);
	x->what = "good";
	x->base = buf + off;
	x->mapped = x->len;
	if (kind < 8) {
		static const char *const names[] = {
			"NULL", "NULL", "NULL", "unmapped", "unmapped",
			"PROT_NONE", "PROT_NONE", "kernel",
		};

		x->base = kind < 3 ? NULL : kind < 5 ? LOW_ADDR :
			  kind < 7 ? S.noaccess + rnd(w, S.page) : KERNEL_ADDR;
		x->what = names[kind];
		x->mapped = 0;
	} else if (kind < 13 && x->len > 1) {
		size_t k = 1 + rnd(w, x->len - 1);

		x->base = end - k;	/* the rest is in the guard page */
		x->mapped = k;
		x->what = "guard-page tail";
	}
	/* A bad pointer may fail even for 0 bytes (access_ok()). */
	x->bad = x->mapped < x->len || kind < 8;
	if (x->api != API_VEC && x->api != API_MSG)
		return;

	x->iov = w->iov;
	if (kind >= 20 && kind < 45 && x->len) {
		build_iov(w, x, buf + off, x->len);
	} else if (kind == 45) {
		int i;

		/* One more than UIO_MAXIOV: EINVAL (readv/writev), EMSGSIZE. */
		for (i = 0; i <= IOVS_MAX; i++)
			x->iov[i] = (struct iovec){ buf + off + i, 1 };
		x->iovcnt = IOVS_MAX + 1;
		x->len = IOVS_MAX + 1;
		x->mapped = 0;
		x->extra = x->api == API_VEC ? EINVAL : EMSGSIZE;
		x->what = "too many iovecs";
	} else if (kind == 46) {
		x->iov = LOW_ADDR;	/* the vector itself is unmapped */
		x->iovcnt = 1 + rnd(w, 4);
		x->mapped = 0;
		x->bad = true;
		x->unmapped = true;
		x->what = "unmapped iovec array";
	} else {
		x->iov[0] = (struct iovec){ x->base, x->len };
		x->iovcnt = 1;
	}
}

static ssize_t xfer_call(struct xfer *x)
{
	struct msghdr m = { .msg_iov = x->iov, .msg_iovlen = x->iovcnt };
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);

	switch (x->api) {
	case API_PLAIN:
		return x->tx ? send(x->fd, x->base, x->len, x->flags) :
			       recv(x->fd, x->base, x->len, x->flags);
	case API_TO:
		return x->tx ? sendto(x->fd, x->base, x->len, x->flags, NULL, 0) :
			       recvfrom(x->fd, x->base, x->len, x->flags,
					(void *)&from, &fl);
	case API_RW:
		return x->tx ? write(x->fd, x->base, x->len) :
			       read(x->fd, x->base, x->len);
	case API_VEC:
		return x->tx ? writev(x->fd, x->iov, x->iovcnt) :
			       readv(x->fd, x->iov, x->iovcnt);
	default:
		return x->tx ? sendmsg(x->fd, &m, x->flags) :
			       recvmsg(x->fd, &m, x->flags);
	}
}

/* Received bytes must all be the test's: FILL, in the accessible part. */
static void check_data(struct worker *w, const struct xfer *x, size_t n)
{
	const unsigned char *p;
	size_t i, seg, done = 0;
	int e = 0;

	for (;;) {
		if (x->api == API_VEC || x->api == API_MSG) {
			if (e >= x->iovcnt)
				return;
			p = x->iov[e].iov_base;
			seg = x->iov[e++].iov_len;
		} else {
			p = x->base;
			seg = n;
		}
		if (seg > n - done)
			seg = n - done;
		for (i = 0; i < seg; i++)
			if (p[i] != FILL) {
				failf(w, "%s returned %zu bytes; byte %zu is %#x, not the %#x every sender wrote",
				      xfer_str(w, x), n, done + i, p[i], FILL);
				return;
			}
		done += seg;
		if (done == n)
			return;
	}
}

/* Run @x and check its result. */
static ssize_t xfer_run(struct worker *w, struct xfer *x)
{
	bool oob = x->flags & MSG_OOB;
	ssize_t r;
	int err;

	/* The first page of a receive buffer: a claimed byte not written shows. */
	if (!x->tx && x->mapped && !x->bad && x->api != API_VEC &&
	    x->api != API_MSG)
		memset(x->base, 0, x->mapped < S.page ? x->mapped : S.page);
	r = CALL(w, x->tx ? api_tx[x->api] : api_rx[x->api], x->fd,
		 (long)x->len, err, xfer_call(x));
	if (r >= 0) {
		if ((size_t)r > x->len)
			failf(w, "%s returned %zd, more than asked",
			      xfer_str(w, x), r);
		else if ((size_t)r > x->mapped)
			failf(w, "%s returned %zd, more than the accessible bytes",
			      xfer_str(w, x), r);
		else if (x->tx && x->len && !r)
			failf(w, "%s returned 0", xfer_str(w, x));
		else if (x->extra)
			failf(w, "%s succeeded", xfer_str(w, x));
		else if (!x->tx && r && !x->unmapped)
			check_data(w, x, r);
		if (x->tx) {
			COUNT(sent, r);
			if (r && x->len >= S.thresh && !(x->flags & MSG_DONTWAIT))
				COUNT(zc_sends, 1);
		} else if (!(x->flags & MSG_PEEK)) {
			COUNT(received, r);
		}
		return r;
	}
	if (err == EFAULT)
		COUNT(efaults, 1);
	if (err == ENOBUFS)
		COUNT(enobufs, 1);
	if (x->extra) {
		if (err != x->extra && err != EBADF)
			failf(w, "%s failed with %s, not %s", xfer_str(w, x),
			      errname(err), errname(x->extra));
	} else if (!in_set(err, x->tx ? errs_send : errs_recv) &&
		   !(x->bad && err == EFAULT) &&
		   !(oob && !x->tx && err == EINVAL)) {	/* no urgent data */
		failf(w, "%s failed with %s, not an error this call may give",
		      xfer_str(w, x), errname(err));
	}
	return -1;
}

static void op_send(struct worker *w)
{
	struct xfer x;
	struct pick p;

	if (!pick(w, KM(K_CONN) | KM(K_EOF), &p))
		return;
	xfer_random(w, &x, true, p.fd);
	xfer_run(w, &x);
}

/*
 * sendfile() from the FILL file: from offset 0, so that its pages are
 * gathered and go zero-copy, or from an odd one (copied); 1 byte to
 * MAX_IO.  Its bytes are FILL, as every sender's.
 */
static void op_sendfile(struct worker *w)
{
	off_t off = chance(w, 50) ? 1 + rnd(w, S.page - 1) : 0;
	size_t len = 1 + rnd(w, MAX_IO - off);
	struct pick p;
	long r;
	int err;

	if (!pick(w, KM(K_CONN) | KM(K_EOF), &p))
		return;
	snprintf(w->desc, sizeof(w->desc), "sendfile(%zu bytes at %lld)",
		 len, (long long)off);
	r = CALL(w, "sendfile", p.fd, len, err,
		 sendfile(p.fd, S.memfd, &off, len));
	if (r < 0)
		expect(w, w->desc, p.fd, err, errs_send);
	else if (!r || (size_t)r > len)
		failf(w, "%s on fd %d returned %ld", w->desc, p.fd, r);
	else
		COUNT(sent, r);
}

static void op_recv(struct worker *w)
{
	struct xfer x;
	struct pick p;

	if (!pick(w, KM(K_CONN), &p))
		return;
	xfer_random(w, &x, false, p.fd);
	if (xfer_run(w, &x) == 0 && x.len && !x.bad) {
		COUNT(eofs, 1);
		slot_hint(p.idx, p.fd, K_EOF, 0);
	}
}

/* A plain blocking recv of up to @max bytes into good memory. */
static ssize_t recv_good(struct worker *w, int fd, size_t max, int flags)
{
	struct xfer x = {
		.tx = false, .fd = fd, .api = API_PLAIN, .flags = flags,
		.base = w->rbuf, .what = "good",
	};

	x.len = 1 + rnd(w, max);
	x.mapped = x.len;
	return xfer_run(w, &x);
}

/* A blocking send of a zero-copy size from good memory. */
static ssize_t send_big(struct worker *w, int fd)
{
	struct xfer x = {
		.tx = true, .fd = fd, .api = API_PLAIN, .flags = MSG_NOSIGNAL,
		.base = w->sbuf, .what = "good",
	};

	x.len = S.thresh + rnd(w, (1 << 20) - S.thresh + 1);
	x.mapped = x.len;
	return xfer_run(w, &x);
}

/*
 * The readers that make zero-copy sends complete: poll the connected
 * sockets and read what is there, mostly in large blocking reads (which
 * RDMA-read advertisements straight into the buffer).
 */
static void op_drain(struct worker *w)
{
	struct pollfd pfd[SLOTS];
	int idx[SLOTS], n = 0, i, r, err, done = 0, start;
	struct pick p;

	for (i = 0; i < SLOTS; i++) {
		slot_read(i, &p);
		if (p.fd >= 0 && p.kind == K_CONN) {
			pfd[n] = (struct pollfd){ .fd = p.fd, .events = POLLIN };
			idx[n++] = i;
		}
	}
	if (!n)
		return;
	r = CALL(w, "poll", -1, n, err, poll(pfd, n, rnd(w, 20)));
	if (r < 0) {
		expect(w, "poll", -1, err, errs_poll);
		return;
	}
	start = rnd(w, n);
	for (i = 0; i < n && done < 4 && !atomic_load(&S.stop); i++) {
		int k = (start + i) % n;

		if (!(pfd[k].revents & POLLIN))
			continue;
		done++;
		if (recv_good(w, pfd[k].fd, chance(w, 70) ? MAX_IO / 2 : 65536,
			      chance(w, 30) ? MSG_DONTWAIT : 0) == 0) {
			COUNT(eofs, 1);
			slot_hint(idx[k], pfd[k].fd, K_EOF, 0);
		}
	}
}

/* ---- Socket options ---- */

/* SOL_SOCKET options set with chosen values: {name, lowest, highest}. */
static const int sol_socket_set[][3] = {
	{ SO_REUSEADDR, 0, 1 }, { SO_KEEPALIVE, 0, 1 }, { SO_DEBUG, 0, 1 },
	{ SO_DONTROUTE, 0, 1 }, { SO_BROADCAST, 0, 1 }, { SO_OOBINLINE, 0, 1 },
	{ SO_PASSCRED, 0, 1 }, { SO_TIMESTAMP, 0, 1 }, { SO_REUSEPORT, 0, 1 },
	{ SO_SNDBUF, 0, 1 << 20 }, { SO_RCVBUF, 0, 1 << 20 },
	{ SO_PRIORITY, 0, 6 }, { SO_RCVLOWAT, 0, 65536 }, { SO_MARK, 0, 7 },
	{ SO_BUSY_POLL, 0, 50 }, { SO_ZEROCOPY, 0, 1 },
	{ SO_INCOMING_CPU, -1, 1 }, { SO_TIMESTAMPING, 0, 0xffff },
	{ SO_LINGER, 0, 1 }, { SO_BINDTODEVICE, 0, 0 },
};

/* The SOL_TCP names SDP takes (sdp.rst, Socket options); TCP_INFO reads only. */
static bool sdp_tcp_name(int name, bool set)
{
	switch (name) {
	case TCP_NODELAY: case TCP_CORK: case TCP_MAXSEG:
	case TCP_NOTSENT_LOWAT: case TCP_CONGESTION: case TCP_QUICKACK:
	case TCP_DEFER_ACCEPT: case TCP_KEEPIDLE: case TCP_KEEPINTVL:
	case TCP_KEEPCNT: case TCP_USER_TIMEOUT: case TCP_SYNCNT:
	case TCP_FASTOPEN: case TCP_FASTOPEN_CONNECT: case TCP_LINGER2:
	case TCP_INQ:
		return true;
	case TCP_INFO:
		return !set;
	default:
		return false;
	}
}

/*
 * Random SOL_SOCKET names set to zero: never the timeouts (0 = forever),
 * nor SO_PEEK_OFF (peeks would no longer start at the data checked).
 */
static bool sol_socket_unsafe(int name)
{
	return name == SO_RCVTIMEO || name == SO_SNDTIMEO ||
	       name == SO_RCVTIMEO_NEW || name == SO_SNDTIMEO_NEW ||
	       name == SO_PEEK_OFF;
}

static void check_sol_socket_value(struct worker *w, int fd, int name,
				   int v)
{
	bool ok = true;

	switch (name) {
	case SO_ERROR:
		ok = !v || in_set(v, errs_conn);
		break;
	case SO_DOMAIN:
		ok = v == S.family;
		break;
	case SO_TYPE:
		ok = v == SOCK_STREAM;
		break;
	case SO_PROTOCOL:
		ok = v == IPPROTO_TCP;
		break;
	case SO_ACCEPTCONN:
		ok = v == 0 || v == 1;
		break;
	}
	if (!ok)
		failf(w, "getsockopt(SOL_SOCKET, %d) on fd %d gave %d", name,
		      fd, v);
}

static void op_sockopt(struct worker *w)
{
	union {
		int i;
		struct linger l;
		char raw[256];
	} val;
	static const socklen_t lens[] = { 0, 1, 2, 4, 4, 4, 8, 16, 64, 256 };
	int fd, level, name, err, lp = rnd(w, 10);
	socklen_t len = sizeof(int), given;
	bool set = chance(w, 50), badptr = false, exact, known, refused;
	void *ptr = &val;
	socklen_t *lenp = &len;
	const char *what;
	struct pick p;
	long r;

	if (!pick(w, KM_ANY, &p))
		return;
	fd = p.fd;
	memset(&val, 0, sizeof(val));
	if (lp < 4) {
		level = SOL_SOCKET;
		what = "SOL_SOCKET";
	} else if (lp < 6 || (!S.sdp && lp >= 8)) {
		level = SOL_TCP;
		what = "SOL_TCP";
	} else if (lp < 8) {
		level = SOL_SDP;
		what = "SOL_SDP";
	} else {
		static const int levels[] = { SOL_IP, SOL_IPV6, IPPROTO_UDP, 255,
					       1024, 1026, -1, 0x7fffffff };

		level = levels[rnd(w, 8)];
		what = "a random level";
	}

	if (level == SOL_SOCKET && set && chance(w, 70)) {
		const int *o = sol_socket_set[rnd(w, sizeof(sol_socket_set) /
						     sizeof(sol_socket_set[0]))];

		name = o[0];
		val.i = o[1] + rnd(w, o[2] - o[1] + 1);
		if (name == SO_LINGER) {
			/* {0, x} off, {1, 0} abort, {1, 1} up to a second. */
			val.l.l_onoff = rnd(w, 2);
			val.l.l_linger = rnd(w, 2);
			len = sizeof(val.l);
		} else if (name == SO_BINDTODEVICE) {
			len = 0;	/* unbind */
		}
	} else if (level == SOL_SOCKET) {
		do
			name = rnd(w, 100);
		while (sol_socket_unsafe(name) || name == SO_PEERPIDFD);
		len = lens[rnd(w, 10)];
	} else if (level == SOL_TCP) {
		/*
		 * SDP takes the names of sdp_tcp_name() and refuses others
		 * with ENOPROTOOPT; the TCP reference keeps to TCP_NODELAY
		 * and TCP_CORK (TCP_REPAIR and friends change what its
		 * calls answer).
		 */
		name = chance(w, 60) || !S.sdp ?
		       (rnd(w, 2) ? TCP_NODELAY : TCP_CORK) : (int)rnd(w, 40);
		val.i = rnd(w, 2);
		len = chance(w, 85) ? sizeof(int) : lens[rnd(w, 10)];
	} else if (level == SOL_SDP) {
		static const int th[] = { 0, 1, 4096, -1, 0x7fffffff };

		name = chance(w, 70) ? (chance(w, 70) ? SDP_ZCOPY_THRESH : SDP_INFO) :
				       (int)rnd(w, 20);
		/* Mostly the default: zero-copy must happen. */
		val.i = chance(w, 60) ? (int)S.thresh : th[rnd(w, 5)];
		/*
		 * SDP_TCP_FALLBACK and SDP_NO_IWARP are set to 0 only: the
		 * storm's answers are SDP's, over iWARP too
		 * (tests/fallback.c and tests/stream-fallback cover them).
		 */
		if (name == SDP_TCP_FALLBACK || name == SDP_NO_IWARP)
			val.i = 0;
		len = chance(w, 85) ? sizeof(int) : lens[rnd(w, 10)];
		if (!set && name == SDP_INFO)
			len = chance(w, 70) ? sizeof(struct sdp_info) : lens[rnd(w, 10)];
	} else {
		name = rnd(w, 100);
		len = lens[rnd(w, 10)];
	}
	if (chance(w, 4)) {
		ptr = chance(w, 50) ? NULL : LOW_ADDR;
		badptr = true;
	}
	if (!set && chance(w, 3)) {
		lenp = chance(w, 50) ? NULL : LOW_ADDR;
		badptr = true;
	}
	if (!set && chance(w, 3))
		len = (socklen_t)-1;
	given = len;

	if (set)
		r = CALL(w, "setsockopt", fd, name, err,
			 setsockopt(fd, level, name, ptr, len));
	else
		r = CALL(w, "getsockopt", fd, name, err,
			 getsockopt(fd, level, name, ptr, lenp));
	snprintf(w->desc, sizeof(w->desc), "%s(%s %d, name %d, len %d%s)",
		 set ? "setsockopt" : "getsockopt", what, level, name,
		 (int)given, badptr ? ", bad pointer" : "");

	if (level == SOL_SOCKET) {
		if (r < 0) {
			if (!(badptr && err == EFAULT))
				expect(w, w->desc, fd, err, errs_sol_socket);
		} else if (!set && (int)given >= 0 && len > given) {
			failf(w, "%s on fd %d returned length %u", w->desc, fd,
			      len);
		} else if (!set && !badptr && given >= sizeof(int) &&
			   len == sizeof(int)) {
			check_sol_socket_value(w, fd, name, val.i);
		}
		return;
	}
	if (!S.sdp)
		return;		/* TCP has its own IP and TCP options */

	/*
	 * SDP's own levels (sdp.rst, Socket options): at SOL_TCP the names
	 * of sdp_tcp_name(), SOL_SDP SDP_ZCOPY_THRESH (negative: EINVAL),
	 * SDP_TCP_FALLBACK (set to 0 here), SDP_TCP_FALLBACK_TIMEOUT (0 to
	 * 600000, else EINVAL), SDP_NO_IWARP (set to 0 here) and SDP_INFO
	 * (read only), SOL_IP IP_TOS, SOL_IPV6 IPV6_V6ONLY and
	 * IPV6_TCLASS; other names ENOPROTOOPT; other levels ENOPROTOOPT.  With an int-sized length and good pointers the
	 * answer is exact for TCP_NODELAY, TCP_CORK and SOL_SDP; the other
	 * TCP names check their values as TCP does (sdp.rst), so a random
	 * value may be refused: EINVAL (out of range, or TCP_FASTOPEN_CONNECT
	 * once connected), ENOENT (TCP_CONGESTION: no such algorithm),
	 * EOPNOTSUPP (TCP_FASTOPEN_CONNECT with client fast open off).
	 * Odd lengths and pointers may meet the length check (EINVAL), the
	 * copy (EFAULT) or the name check first.
	 */
	known = level == SOL_TCP ? sdp_tcp_name(name, set) :
		level == SOL_SDP ? (name == SDP_ZCOPY_THRESH ||
				    name == SDP_TCP_FALLBACK ||
				    name == SDP_TCP_FALLBACK_TIMEOUT ||
				    name == SDP_NO_IWARP ||
				    (!set && name == SDP_INFO)) :
		level == SOL_IP ? name == IP_TOS :
		level == SOL_IPV6 && (name == IPV6_V6ONLY ||
				      name == IPV6_TCLASS);
	if (level == SOL_TCP && known && name != TCP_NODELAY &&
	    name != TCP_CORK) {
		if (r < 0 && err != EBADF && err != EINVAL && err != ENOENT &&
		    err != EOPNOTSUPP && !(badptr && err == EFAULT))
			failf(w, "%s on fd %d failed with %s", w->desc, fd,
			      errname(err));
		else if (r == 0 && !set && (int)given >= 0 && len > given)
			failf(w, "%s on fd %d returned length %u", w->desc,
			      fd, len);
		return;
	}
	exact = !badptr && given == sizeof(int);
	/*
	 * The IP levels: IP_TOS, IPV6_V6ONLY and IPV6_TCLASS as on TCP (a
	 * value or length may be refused: EINVAL; IPV6_V6ONLY once bound),
	 * other names ENOPROTOOPT, but at SOL_IP a negative length is
	 * EINVAL first, as TCP's do_ip_getsockopt() has it.
	 */
	if (level != SOL_TCP && level != SOL_SDP) {
		if (known) {
			if (r < 0 && err != EBADF && err != EINVAL &&
			    !(badptr && err == EFAULT))
				failf(w, "%s on fd %d failed with %s", w->desc,
				      fd, errname(err));
			else if (r == 0 && !set && (int)given >= 0 &&
				 len > given)
				failf(w, "%s on fd %d returned length %u",
				      w->desc, fd, len);
		} else if (r == 0 || (err != ENOPROTOOPT && err != EBADF &&
				      !(badptr && err == EFAULT) &&
				      !(level == SOL_IP && !set &&
					(int)given < 0 && err == EINVAL))) {
			failf(w, "%s on fd %d: %s, not ENOPROTOOPT", w->desc,
			      fd, r ? errname(err) : "succeeded");
		}
		return;
	}
	refused = set && level == SOL_SDP &&
		  (val.i < 0 || (name == SDP_TCP_FALLBACK_TIMEOUT &&
				 val.i > SDP_FB_TIMEOUT_MAX));
	if (r < 0) {
		int due = !known ? ENOPROTOOPT : refused ? EINVAL : 0;

		if (err == EBADF)
			return;
		if (exact || (!set && !badptr && (int)given >= 0 &&
			      level == SOL_SDP && name == SDP_INFO)) {
			if (err != due)
				failf(w, "%s on fd %d failed with %s, not %s",
				      w->desc, fd, errname(err),
				      due ? errname(due) : "success");
		} else if (err != EINVAL && err != EFAULT &&
			   err != ENOPROTOOPT) {
			failf(w, "%s on fd %d failed with %s", w->desc, fd,
			      errname(err));
		}
		return;
	}
	/* Succeeded: only the known names, and values that make sense. */
	if (!known || refused) {
		failf(w, "%s on fd %d succeeded", w->desc, fd);
		return;
	}
	if (set)
		return;
	if ((int)given >= 0 && len > given)
		failf(w, "%s on fd %d returned length %u", w->desc, fd, len);
	else if (level == SOL_TCP && len == sizeof(int) && val.i != 0 &&
		 val.i != 1)
		failf(w, "%s on fd %d gave %d", w->desc, fd, val.i);
	else if (name == SDP_ZCOPY_THRESH && len == sizeof(int) && val.i < 0)
		failf(w, "%s on fd %d gave %d", w->desc, fd, val.i);
	else if (level == SOL_SDP && name == SDP_TCP_FALLBACK &&
		 len == sizeof(int) && val.i)
		failf(w, "%s on fd %d gave %d", w->desc, fd, val.i);
	else if (level == SOL_SDP && name == SDP_TCP_FALLBACK_TIMEOUT &&
		 len == sizeof(int) &&
		 (val.i < 0 || val.i > SDP_FB_TIMEOUT_MAX))
		failf(w, "%s on fd %d gave %d", w->desc, fd, val.i);
}

/* ---- ioctl ---- */

/*
 * A random ioctl command that cannot change anything outside the socket:
 * not the network device ioctls (0x89xx: SIOCSIFADDR and friends; 0x8bxx:
 * wireless), not FIOASYNC/FIOSETOWN/SIOCSPGRP (signals to other
 * processes), not FIFREEZE/FITHAW ('X') nor the clone/dedupe ioctls
 * (0x94), nor the tty ones ('T', FIONBIO and FIOCLEX among them, drawn
 * on purpose elsewhere).
 */
static unsigned long random_ioctl(struct worker *w)
{
	for (;;) {
		unsigned int cmd = rng_next(&w->rng);
		unsigned int type;

		if (chance(w, 50))
			cmd &= 0xffff;		/* an old-style number */
		type = (cmd >> 8) & 0xff;
		if (type == 0x89 || type == 0x8b || type == 0x94 ||
		    type == 'X' || type == 'T')
			continue;
		return cmd;
	}
}

static void op_ioctl(struct worker *w)
{
	char buf[256];
	int fd, err, v = 0, r, c = rnd(w, 10);
	void *arg = &v;
	bool badptr = chance(w, 5);
	const char *what;
	unsigned long cmd;
	struct pick p;

	if (!pick(w, KM_ANY, &p))
		return;
	fd = p.fd;
	if (badptr)
		arg = chance(w, 50) ? NULL : LOW_ADDR;
	switch (c) {
	case 0 ... 2:
		cmd = c ? SIOCINQ : FIONREAD;
		what = c ? "ioctl(SIOCINQ)" : "ioctl(FIONREAD)";
		break;
	case 3 ... 4:
		cmd = c == 3 ? SIOCOUTQ : SIOCOUTQNSD;
		what = c == 3 ? "ioctl(SIOCOUTQ)" : "ioctl(SIOCOUTQNSD)";
		break;
	case 5:
		cmd = SIOCATMARK;
		what = "ioctl(SIOCATMARK)";
		break;
	case 6:
		cmd = FIONBIO;
		v = rnd(w, 2);
		what = "ioctl(FIONBIO)";
		break;
	default:
		cmd = random_ioctl(w);
		memset(buf, 0, sizeof(buf));
		if (!badptr)
			arg = buf;
		what = "ioctl(random)";
		break;
	}
	r = CALL(w, "ioctl", fd, (long)cmd, err, ioctl(fd, cmd, arg));
	snprintf(w->desc, sizeof(w->desc), "%s %#lx%s", what, cmd,
		 badptr ? " with a bad pointer" : "");
	if (r < 0) {
		if (badptr && err == EFAULT)
			return;
		expect(w, w->desc, fd, err,
		       c <= 4 ? errs_inq : c <= 6 ? errs_badf :
		       errs_ioctl_random);
		return;
	}
	if (c > 6)
		return;
	if (badptr)
		failf(w, "%s on fd %d succeeded", w->desc, fd);
	else if (c <= 4 && (v < 0 || v > (256 << 20)))
		failf(w, "%s on fd %d gave %d", w->desc, fd, v);
	else if (c == 5 && v != 0 && v != 1)
		failf(w, "%s on fd %d gave %d (not 0 or 1)", w->desc, fd, v);
}

/* ---- shutdown, poll, names, dup, close ---- */

static void op_shutdown(struct worker *w)
{
	static const int bad_how[] = { -1, 3, 42 };
	int how = rnd(w, 3), err;
	bool bad = chance(w, 5);
	struct pick p;

	if (!pick(w, KM(K_CONN) | KM(K_EOF), &p))
		return;
	if (bad)
		how = bad_how[rnd(w, 3)];
	snprintf(w->desc, sizeof(w->desc), "shutdown(%d)", how);
	if (CALL(w, "shutdown", p.fd, how, err, shutdown(p.fd, how)) < 0) {
		if (!(bad && err == EINVAL))
			expect(w, w->desc, p.fd, err, errs_shutdown);
	} else if (bad) {
		failf(w, "%s on fd %d succeeded", w->desc, p.fd);
	}
}

static void op_poll(struct worker *w)
{
	static const short evs[] = { POLLIN, POLLOUT, POLLPRI, POLLRDHUP,
				     POLLRDNORM, POLLWRNORM, POLLRDBAND,
				     POLLWRBAND };
	struct pollfd pfd[8];
	int n = 1 + rnd(w, 8), i, r, err;
	struct pick p;

	for (i = 0; i < n; i++) {
		short e = 0;
		int k;

		slot_read(rnd(w, SLOTS), &p);
		for (k = 0; k < 8; k++)
			if (chance(w, 30))
				e |= evs[k];
		pfd[i] = (struct pollfd){ .fd = p.fd, .events = e };
	}
	r = CALL(w, "poll", pfd[0].fd, n, err, poll(pfd, n, rnd(w, 20)));
	if (r < 0) {
		expect(w, "poll", -1, err, errs_poll);
		return;
	}
	if (r > n)
		failf(w, "poll of %d descriptors returned %d", n, r);
	for (i = 0; i < n; i++) {
		short allowed = pfd[i].events | POLLERR | POLLHUP | POLLNVAL;

		if (pfd[i].revents & ~allowed)
			failf(w, "poll on fd %d: revents %#x for events %#x",
			      pfd[i].fd, pfd[i].revents, pfd[i].events);
	}
}

static void op_getname(struct worker *w)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss), given;
	socklen_t *lenp = &len;
	void *addr = &ss;
	bool peer = chance(w, 50), badptr = false;
	int v = rnd(w, 12), err, extra = 0;
	struct pick p;
	long r;

	if (!pick(w, KM_ANY, &p))
		return;
	if (v == 0) {
		len = 4;
	} else if (v == 1) {
		len = 0;
	} else if (v == 2) {
		len = (socklen_t)-1;
		extra = EINVAL;
	} else if (v == 3) {
		addr = LOW_ADDR;
		badptr = true;
	} else if (v == 4) {
		lenp = LOW_ADDR;
		badptr = true;
	}
	given = len;
	memset(&ss, 0, sizeof(ss));
	r = CALL(w, peer ? "getpeername" : "getsockname", p.fd, 0, err,
		 peer ? getpeername(p.fd, addr, lenp) :
			getsockname(p.fd, addr, lenp));
	snprintf(w->desc, sizeof(w->desc), "%s(len %d%s)",
		 peer ? "getpeername" : "getsockname", (int)given,
		 badptr ? ", bad pointer" : "");
	if (r < 0) {
		if (!(badptr && err == EFAULT) && err != extra)
			expect(w, w->desc, p.fd, err, errs_getname);
		return;
	}
	if (extra || (badptr && lenp != &len))
		failf(w, "%s on fd %d succeeded", w->desc, p.fd);
	else if (lenp == &len && len != sizeof(struct sockaddr_in) &&
		 len != sizeof(struct sockaddr_in6))
		failf(w, "%s on fd %d: length %u", w->desc, p.fd, len);
	else if (addr == &ss && given >= 2 && ss.ss_family != AF_INET &&
		 ss.ss_family != AF_INET6)
		failf(w, "%s on fd %d: family %u", w->desc, p.fd, ss.ss_family);
}

static void op_dup(struct worker *w)
{
	struct pick src, dst;
	int v = rnd(w, 10), nfd, err;
	struct slot *s;

	if (!pick(w, KM_ANY, &src))
		return;
	if (v < 4) {
		nfd = CALL(w, "dup", src.fd, 0, err,
			   v < 3 ? dup(src.fd) :
			   fcntl(src.fd, F_DUPFD_CLOEXEC, 100 + rnd(w, 100)));
		if (nfd < 0) {
			expect(w, "dup", src.fd, err, errs_badf);
			return;
		}
		slot_put(w, nfd, src.kind, src.port);
		return;
	}
	/* dup2()/dup3() over another slot's socket, racing its users. */
	if (!pick(w, KM_ANY, &dst))
		return;
	s = &S.slots[dst.idx];
	pthread_mutex_lock(&s->lock);
	if (s->fd == dst.fd) {
		bool same = src.fd == dst.fd, three = v >= 8;

		nfd = CALL(w, three ? "dup3" : "dup2", src.fd, dst.fd, err,
			   three ? dup3(src.fd, dst.fd, O_CLOEXEC) :
				   dup2(src.fd, dst.fd));
		if (nfd < 0) {
			if (!(three && same && err == EINVAL))
				expect(w, three ? "dup3" : "dup2", src.fd, err,
				       errs_dup);
		} else if (nfd != dst.fd || (three && same)) {
			failf(w, "%s(%d, %d) returned %d", three ? "dup3" : "dup2",
			      src.fd, dst.fd, nfd);
		} else {
			s->kind = src.kind;
			s->port = src.port;
			COUNT(dup2s, 1);
		}
	}
	pthread_mutex_unlock(&s->lock);
}

static void set_linger(struct worker *w, int fd, int secs)
{
	struct linger l = { 1, secs };
	int err;

	if (CALL(w, "setsockopt", fd, 0, err,
		 setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l))) < 0)
		expect(w, "setsockopt(SO_LINGER)", fd, err, errs_badf);
}

static void op_close(struct worker *w)
{
	int fd = slot_take(w, KM(K_EOF) | KM(K_FRESH) | KM(K_CONN));

	if (fd < 0)
		return;
	if (chance(w, 20))
		set_linger(w, fd, 0);		/* abort */
	else if (chance(w, 5))
		set_linger(w, fd, 1);		/* wait up to a second */
	close_counted(w, fd);
}

/* ---- The helper thread: closes, shuts down, dup2()s or unmaps ---- */

static void *race_fn(void *arg)
{
	struct worker *w = arg;
	struct race *rc = &w->race;
	sigset_t set;

	/* Signals are for the workers: their waits are what they interrupt. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (;;) {
		struct timespec ts;

		while (sem_wait(&rc->go) && errno == EINTR)
			;
		if (rc->quit)
			return NULL;
		ts.tv_sec = 0;
		ts.tv_nsec = rc->delay_us * 1000L;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		switch (rc->action) {
		case RACE_CLOSE:
			call_begin(&rc->ci, "close (racing)", rc->fd, 0);
			close(rc->fd);
			break;
		case RACE_SHUTDOWN:
			call_begin(&rc->ci, "shutdown (racing)", rc->fd, 0);
			shutdown(rc->fd, rc->how);
			break;
		case RACE_DUP2:
			call_begin(&rc->ci, "dup2 (racing)", rc->fd, 0);
			dup2(rc->fd2, rc->fd);
			break;
		case RACE_MUNMAP:
			call_begin(&rc->ci, "munmap (racing)", -1, rc->len);
			munmap(rc->addr, rc->len);
			break;
		}
		call_end(&rc->ci);
		sem_post(&rc->done);
	}
}

static void race_start(struct worker *w, enum race_action action, int fd,
		       int fd2, void *addr, size_t len)
{
	struct race *rc = &w->race;

	rc->action = action;
	rc->fd = fd;
	rc->fd2 = fd2;
	rc->how = rnd(w, 3);
	rc->addr = addr;
	rc->len = len;
	rc->delay_us = rnd(w, 4) ? rnd(w, 3000) : rnd(w, 100);
	sem_post(&rc->go);
}

static void race_wait(struct worker *w)
{
	call_begin(&w->ci, "waiting for the helper", -1, 0);
	while (sem_wait(&w->race.done) && errno == EINTR)
		;
	call_end(&w->ci);
}

/* close/shutdown/dup2 of a descriptor while a blocking call uses it. */
static void op_close_race(struct worker *w)
{
	enum race_action a = rnd(w, 3);
	struct pick other;
	int fd, fd2 = -1;

	fd = slot_take(w, KM(K_CONN));
	if (fd < 0)
		return;
	if (a == RACE_DUP2) {
		if (!pick(w, KM_ANY, &other) || other.fd == fd) {
			a = RACE_SHUTDOWN;
		} else {
			fd2 = other.fd;
			COUNT(dup2s, 1);
		}
	}
	race_start(w, a, fd, fd2, NULL, 0);
	if (chance(w, 50))
		send_big(w, fd);
	else
		recv_good(w, fd, MAX_IO / 2, 0);
	race_wait(w);
	COUNT(close_races, 1);
	if (a != RACE_CLOSE)
		close_counted(w, fd);
}

/*
 * munmap() of the memory of a blocking send or recv while it runs.  The
 * memory is a mapping of the memfd, whose every byte is FILL from the
 * start (private for a recv): whatever gets mapped into the hole while the
 * call still runs -- another worker's victim -- holds FILL too, so a send
 * that copies from there sends the test's bytes.
 */
static void op_munmap(struct worker *w, bool tx)
{
	size_t len = S.page * (1 + rnd(w, MAX_IO / S.page));
	struct xfer x = { .tx = tx, .api = API_PLAIN, .bad = true,
			  .unmapped = true, .what = "unmapped while in use" };
	size_t off, cut, cutlen;
	unsigned char *m;
	struct pick p;
	int err;

	if (!pick(w, KM(K_CONN), &p))
		return;
	if (tx && chance(w, 70) && len < S.thresh)
		len = (S.thresh + S.page - 1) / S.page * S.page;
	call_begin(&w->ci, "mmap", -1, len);
	m = tx ? mmap(NULL, len, PROT_READ, MAP_SHARED, S.memfd, 0) :
		 mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		      S.memfd, 0);
	err = errno;
	call_end(&w->ci);
	if (m == MAP_FAILED) {
		failf(w, "mmap of %zu bytes: %s", len, errname(err));
		return;
	}
	/* All of it, or some pages in the middle. */
	cut = chance(w, 50) ? 0 : S.page * rnd(w, len / S.page);
	cutlen = chance(w, 50) ? len - cut :
		 S.page * (1 + rnd(w, (len - cut) / S.page));
	off = rnd(w, 64);
	x.fd = p.fd;
	x.base = m + off;
	x.len = len - off;
	x.mapped = x.len;
	x.flags = tx ? MSG_NOSIGNAL : 0;
	race_start(w, RACE_MUNMAP, -1, -1, m + cut, cutlen);
	xfer_run(w, &x);
	race_wait(w);
	if (cut)
		munmap(m, cut);
	if (cut + cutlen < len)
		munmap(m + cut + cutlen, len - cut - cutlen);
	COUNT(munmaps, 1);
}

static void op_munmap_send(struct worker *w)
{
	op_munmap(w, true);
}

static void op_munmap_recv(struct worker *w)
{
	op_munmap(w, false);
}

/* ---- fork ---- */

/*
 * The child: a few calls on inherited sockets (read without locks: the
 * other threads do not exist here), then _exit().  Only system calls and
 * the checks above, which report into shared memory (failf()).
 */
static void child_run(struct worker *w)
{
	int n = 1 + rnd(w, 4), i, err;

	for (i = 0; i < n; i++) {
		int fd = S.slots[rnd(w, SLOTS)].fd;
		struct xfer x;

		if (fd < 0)
			continue;
		switch (rnd(w, 6)) {
		case 0:
			xfer_random(w, &x, true, fd);
			x.flags |= MSG_DONTWAIT;
			xfer_run(w, &x);
			break;
		case 1:
			xfer_random(w, &x, false, fd);
			xfer_run(w, &x);
			break;
		case 2:
			send_big(w, fd);	/* pins the child's pages */
			break;
		case 3:
			recv_good(w, fd, MAX_IO / 2, 0);
			break;
		case 4:
			if (shutdown(fd, rnd(w, 3)) < 0) {
				err = errno;
				expect(w, "shutdown (child)", fd, err,
				       errs_shutdown);
			}
			break;
		default:
			if (close(fd) < 0) {
				err = errno;
				expect(w, "close (child)", fd, err, errs_badf);
			}
			break;
		}
	}
}

static void op_fork(struct worker *w)
{
	struct child_report *rep = &S.reports[w->id];
	long long end;
	bool killed = false;
	int status, err;
	pid_t pid, r;

	rep->bad = 0;
	rep->msg[0] = '\0';
	call_begin(&w->ci, "fork", -1, 0);
	pid = fork();
	err = errno;
	call_end(&w->ci);
	if (pid < 0) {
		failf(w, "fork: %s", errname(err));
		return;
	}
	if (pid == 0) {
		in_child = rep;
		rng_seed(&w->rng, rng_next(&w->rng) ^ getpid());
		child_run(w);
		_exit(0);
	}
	COUNT(forks, 1);
	if (chance(w, 40)) {
		/* Kill it in the middle of whatever it does. */
		sleep_ms_poll(rnd(w, 30));
		kill(pid, SIGKILL);
		killed = true;
		COUNT(kills, 1);
	}
	end = now_ms() + S.stall_ms / 2;
	call_begin(&w->ci, "waitpid (fork child)", pid, 0);
	while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now_ms() < end)
		poll(NULL, 0, 2);
	call_end(&w->ci);
	if (r != pid) {
		failf(w, "fork child %d has not exited after %d s", pid,
		      S.stall_ms / 2000);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && killed)
		return;
	if (WIFEXITED(status) && rep->bad)
		failf(w, "fork child: %s", rep->msg);
	else
		failf(w, "fork child ended with status %#x", status);
}

/* ---- The workers ---- */

static const struct op {
	const char *name;
	void (*fn)(struct worker *w);
	int weight;
} ops[] = {
	{ "socket", op_socket, 4 },
	{ "bind", op_bind, 3 },
	{ "listen", op_listen, 3 },
	{ "connect", op_connect, 8 },
	{ "accept", op_accept, 8 },
	{ "send", op_send, 18 },
	{ "sendfile", op_sendfile, 4 },
	{ "recv", op_recv, 10 },
	{ "drain", op_drain, 14 },
	{ "sockopt", op_sockopt, 8 },
	{ "ioctl", op_ioctl, 4 },
	{ "shutdown", op_shutdown, 2 },
	{ "poll", op_poll, 3 },
	{ "getname", op_getname, 2 },
	{ "dup", op_dup, 3 },
	{ "close", op_close, 5 },
	{ "close_race", op_close_race, 3 },
	{ "munmap_send", op_munmap_send, 2 },
	{ "munmap_recv", op_munmap_recv, 1 },
	{ "fork", op_fork, 1 },
};
#define NOPS	((int)(sizeof(ops) / sizeof(ops[0])))

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	int total = 0, i;
	long long t;

	for (i = 0; i < NOPS; i++)
		total += ops[i].weight;
	while (!atomic_load(&S.stop) && now_ms() < S.end_ms) {
		int r = rnd(w, total);

		for (i = 0; r >= ops[i].weight; i++)
			r -= ops[i].weight;
		w->op_count[i]++;
		t = now_ms();
		ops[i].fn(w);
		w->op_ms[i] += now_ms() - t;
	}
	return NULL;
}

static void on_sigusr1(int sig)
{
	(void)sig;
}

/* Memory of @size bytes followed by a PROT_NONE page. */
static unsigned char *guarded(size_t size, int fill)
{
	unsigned char *m = mmap(NULL, size + S.page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(m != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK_OK(mprotect(m + size, S.page, PROT_NONE));
	memset(m, fill, size);
	return m;
}

/*
 * The witness: beside the storm, on a connection of its own that no
 * worker can reach (made before it, closed after it), a sender that
 * alternates sendfile() of 256 KiB from the FILL file's offset 0
 * (gathered pages: zero-copy), a blocking 256-KiB send (zero-copy
 * sized) and a burst of 8-KiB sends (buffered: the reader's ring grows),
 * ten times a second at most (the pause lets that ring shrink back:
 * RX_IDLE_MS), and a reader that drains the other end and checks every
 * byte.
 * The workers' zero-copy transfers and ring changes come by chance (on
 * a debug kernel few of the connections live long enough); the
 * witness's come every time, amid the storm, so that the checks after
 * it test the module, not the dice.
 */
#define WITNESS_LEN	(256 << 10)
#define WITNESS_BURST	16		/* sends of 8 KiB */

static void *witness_send(void *arg)
{
	struct witness *wt = arg;
	unsigned char *buf = guarded(WITNESS_LEN, FILL);
	off_t off;
	long r;
	int i;

	while (!atomic_load(&wt->stop)) {
		off = 0;
		r = sendfile(wt->tx, S.memfd, &off, WITNESS_LEN);
		if (r > 0)
			wt->sendfiles++;
		else if (errno != EAGAIN && errno != EINTR)
			break;
		r = send(wt->tx, buf, WITNESS_LEN, MSG_NOSIGNAL);
		if (r > 0)
			wt->sends++;
		else if (errno != EAGAIN && errno != EINTR)
			break;
		for (i = 0; i < WITNESS_BURST; i++) {
			r = send(wt->tx, buf, 8192, MSG_NOSIGNAL);
			if (r < 0 && errno != EAGAIN && errno != EINTR)
				goto out;
		}
		wt->bursts++;
		usleep(100000);	/* a witness, not a load of its own */
	}
out:
	shutdown(wt->tx, SHUT_WR);
	munmap(buf, WITNESS_LEN + S.page);
	return NULL;
}

static void *witness_read(void *arg)
{
	struct witness *wt = arg;
	unsigned char *buf = guarded(WITNESS_LEN, 0);
	long r, i;

	for (;;) {
		r = recv(wt->rx, buf, WITNESS_LEN, 0);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			break;
		for (i = 0; i < r; i++)
			wt->bad += buf[i] != FILL;
		if (r > 0)
			wt->received += r;
	}
	munmap(buf, WITNESS_LEN + S.page);
	return NULL;
}

/* The witness's connection, before the storm (storm_setup()). */
static void witness_setup(void)
{
	struct timeval tv = { 10, 0 };
	struct sockaddr_storage a = S.addr;
	int l;

	l = socket(AF_INET_SDP, SOCK_STREAM, 0);
	CHECK(l >= 0, "socket: %s", strerror(errno));
	CHECK_OK(bind(l, (struct sockaddr *)&a, sockaddr_len(&a)));
	CHECK_OK(listen(l, 1));
	local_addr(l, &a);
	S.wit.tx = socket(AF_INET_SDP, SOCK_STREAM, 0);
	CHECK(S.wit.tx >= 0, "socket: %s", strerror(errno));
	CHECK_OK(connect(S.wit.tx, (struct sockaddr *)&a, sockaddr_len(&a)));
	S.wit.rx = net_accept(l, 10000);
	close(l);
	/* Bounded: a stuck transfer shows as a failed witness, not a hang. */
	CHECK_OK(setsockopt(S.wit.tx, SOL_SOCKET, SO_SNDTIMEO, &tv,
			    sizeof(tv)));
	CHECK_OK(setsockopt(S.wit.rx, SOL_SOCKET, SO_RCVTIMEO, &tv,
			    sizeof(tv)));
}

static void witness_start(void)
{
	int err;

	err = pthread_create(&S.wit.sender, NULL, witness_send, &S.wit);
	CHECK(!err, "pthread_create: %s", strerror(err));
	err = pthread_create(&S.wit.reader, NULL, witness_read, &S.wit);
	CHECK(!err, "pthread_create: %s", strerror(err));
}

static void witness_stop(void)
{
	atomic_store(&S.wit.stop, true);
	CHECK(join_ms(S.wit.sender, 60000) == 0 &&
	      join_ms(S.wit.reader, 60000) == 0,
	      "the witness did not stop within 60 s");
	close(S.wit.tx);
	close(S.wit.rx);
	tap_diag("witness: %llu sendfiles and %llu sends of %d KiB, %llu bursts, %llu bytes received, %llu not the test's",
		 S.wit.sendfiles, S.wit.sends, WITNESS_LEN >> 10,
		 S.wit.bursts, S.wit.received, S.wit.bad);
	CHECK(S.wit.sendfiles >= 1 && S.wit.sends >= 1 && S.wit.bursts >= 1 &&
	      !S.wit.bad &&
	      S.wit.received >= 2ULL * WITNESS_LEN,
	      "the witness's transfers did not go through");
}

static void storm_setup(void)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 };
	unsigned char *fill;
	int i;

	S.page = sysconf(_SC_PAGESIZE);
	S.bufsize = MAX_IO + S.page;
	test_sockaddr(&S.addr, 0);
	S.family = S.sdp ? AF_INET_SDP : S.addr.ss_family;
	pthread_mutex_init(&S.fail_lock, NULL);
	for (i = 0; i < SLOTS; i++) {
		pthread_mutex_init(&S.slots[i].lock, NULL);
		S.slots[i].fd = -1;
	}
	S.noaccess = mmap(NULL, 1 << 20, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(S.noaccess != MAP_FAILED, "mmap: %s", strerror(errno));
	S.reports = mmap(NULL, sizeof(*S.reports) * MAX_THREADS,
			 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			 -1, 0);
	CHECK(S.reports != MAP_FAILED, "mmap: %s", strerror(errno));

	/* The senders' victims: pages that hold FILL from the start. */
	S.memfd = memfd_create("stress", MFD_CLOEXEC);
	CHECK(S.memfd >= 0, "memfd_create: %s", strerror(errno));
	fill = guarded(MAX_IO, FILL);
	CHECK(write(S.memfd, fill, MAX_IO) == MAX_IO, "memfd write");
	munmap(fill, MAX_IO + S.page);

	CHECK_OK(sigaction(SIGUSR1, &sa, NULL));	/* no SA_RESTART */
	if (S.sdp)
		witness_setup();
	signal(SIGPIPE, SIG_IGN);

	for (i = 0; i < S.threads; i++) {
		struct worker *w = &S.w[i];

		w->id = i;
		rng_seed(&w->rng, S.seed + i);
		w->sbuf = guarded(S.bufsize, FILL);
		w->rbuf = guarded(S.bufsize, 0);
		w->iov = calloc(IOVS_MAX + 1, sizeof(*w->iov));
		CHECK(w->iov, "calloc");
		CHECK_OK(sem_init(&w->race.go, 0, 0));
		CHECK_OK(sem_init(&w->race.done, 0, 0));
	}
}

/* The set of descriptors open before the storm (to close what it made). */
struct fdset {
	int n;
	struct { int fd; dev_t dev; ino_t ino; } e[256];
};

static void fds_snapshot(struct fdset *s)
{
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	struct stat st;

	CHECK(dir, "/proc/self/fd: %s", strerror(errno));
	s->n = 0;
	while ((d = readdir(dir)) && s->n < 256) {
		int fd = atoi(d->d_name);

		if (d->d_name[0] == '.' || fd == dirfd(dir) || fstat(fd, &st))
			continue;
		s->e[s->n].fd = fd;
		s->e[s->n].dev = st.st_dev;
		s->e[s->n++].ino = st.st_ino;
	}
	closedir(dir);
}

/* Close every descriptor the storm made; how many were not sockets. */
static int fds_close_new(const struct fdset *before, int *closed)
{
	struct fdset now;
	int i, j, odd = 0;

	*closed = 0;
	fds_snapshot(&now);
	for (i = 0; i < now.n; i++) {
		struct stat st;
		bool old = false;

		for (j = 0; j < before->n; j++)
			old |= before->e[j].fd == now.e[i].fd &&
			       before->e[j].dev == now.e[i].dev &&
			       before->e[j].ino == now.e[i].ino;
		if (old)
			continue;
		if (!fstat(now.e[i].fd, &st) && !S_ISSOCK(st.st_mode)) {
			tap_diag("fd %d made during the storm is no socket (mode %#o)",
				 now.e[i].fd, st.st_mode);
			odd++;
		}
		close(now.e[i].fd);
		(*closed)++;
	}
	return odd;
}

/* Watch the workers, interrupt them now and then, stop them at the end. */
static void storm_watch(void)
{
	struct rng rng;
	int i;

	rng_seed(&rng, S.seed ^ 0x5bd1e995);
	while (!atomic_load(&S.stop) && now_ms() < S.end_ms) {
		long long now;

		poll(NULL, 0, 20 + rng_range(&rng, 0, 80));
		if (rng_range(&rng, 0, 1)) {
			pthread_kill(S.w[rng_range(&rng, 0, S.threads - 1)].thread,
				     SIGUSR1);
			COUNT(signals, 1);
		}
		now = now_ms();
		for (i = 0; i < 2 * S.threads; i++) {
			struct worker *w = &S.w[i / 2];
			struct callinfo *ci = i % 2 ? &w->race.ci : &w->ci;
			long long start = atomic_load(&ci->start);

			if (start && now - start > S.stall_ms) {
				failf(w, "watchdog: %s%s(fd %d, %ld) has not returned after %lld s",
				      i % 2 ? "the helper's " : "",
				      atomic_load(&ci->name), atomic_load(&ci->fd),
				      atomic_load(&ci->len), (now - start) / 1000);
				atomic_store(&S.stop, true);
			}
		}
	}
	atomic_store(&S.stop, true);
}

static void storm_run(void)
{
	int i, err;

	S.end_ms = now_ms() + S.seconds * 1000LL;
	if (S.sdp)
		witness_start();
	for (i = 0; i < S.threads; i++) {
		struct worker *w = &S.w[i];

		err = pthread_create(&w->race.thread, NULL, race_fn, w);
		CHECK(!err, "pthread_create: %s", strerror(err));
		err = pthread_create(&w->thread, NULL, worker_fn, w);
		CHECK(!err, "pthread_create: %s", strerror(err));
		w->running = true;
	}
	storm_watch();
	for (i = 0; i < S.threads; i++) {
		struct worker *w = &S.w[i];

		if (join_ms(w->thread, S.stall_ms)) {
			long long start = atomic_load(&w->ci.start);

			tap_fail(__FILE__, __LINE__,
				 "worker %d did not stop within %d s; it is in %s(fd %d, %ld) since %lld s",
				 i, S.stall_ms / 1000, atomic_load(&w->ci.name),
				 atomic_load(&w->ci.fd), atomic_load(&w->ci.len),
				 start ? (now_ms() - start) / 1000 : 0);
		}
		w->race.quit = true;
		sem_post(&w->race.go);
		CHECK(join_ms(w->race.thread, S.stall_ms) == 0,
		      "helper %d did not stop", i);
	}
	if (S.sdp)
		witness_stop();
}

/* ---- The kernel log ---- */

/* What the guest's runner (tests/vm/run) calls kernel trouble. */
static const char *const kernel_trouble[] = {
	"Oops", "BUG:", "WARNING:", "KASAN:", "UBSAN:", "kernel BUG at",
	"general protection fault", "possible circular locking",
	"possible recursive locking", "inconsistent lock state",
	"possible irq lock inversion", "deadlock", "suspicious RCU usage",
	"blocked for more than", "soft lockup", "hard LOCKUP",
	"detected stalls", "self-detected stall", "Kernel panic",
	"list_add corruption", "list_del corruption", "refcount_t:",
	"unreferenced object", "Call Trace:",
};

/*
 * Read what the kernel logged since @fd was opened: print and count
 * the lines that are kernel trouble, and SDP warnings (level <= 4);
 * *@cancels gets the "no answer to SrcAvailCancel" lines, which are not
 * counted as bad.
 */
static int kmsg_bad_lines(int fd, int *cancels)
{
	char rec[8192];
	int bad = 0;
	ssize_t n;

	*cancels = 0;
	for (;;) {
		char *text, *nl;
		size_t i;
		int prio;
		bool trouble = false;

		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records */
		if (n <= 0)
			return bad;
		rec[n] = '\0';
		prio = atoi(rec) & 7;
		text = strchr(rec, ';');
		if (!text)
			continue;
		text++;
		nl = strchr(text, '\n');
		if (nl)
			*nl = '\0';
		for (i = 0; i < sizeof(kernel_trouble) / sizeof(kernel_trouble[0]); i++)
			trouble |= strstr(text, kernel_trouble[i]) != NULL;
		if (strstr(text, "no answer to SrcAvailCancel")) {
			(*cancels)++;
			continue;
		}
		if (prio <= 4 && !strncmp(text, "sdp: ", 5))
			trouble = true;
		if (trouble) {
			if (bad < 20)
				tap_diag("kernel: %s", text);
			bad++;
		}
	}
}

/* ---- The tests ---- */

static long long stat_of(const char *name)
{
	return S.sdp ? sdp_stat(name) : 0;
}

static const char *const stat_names[] = {
	"ActiveEstab", "PassiveEstab", "ActiveRefused", "ActiveFails",
	"PassiveFails", "ListenOverflows", "BcopyTxBytes", "BcopyRxBytes",
	"ZcopyTxMsgs", "ZcopyTxBytes", "ZcopyTxSplicedBytes", "ZcopyRdmaReads",
	"SendSmTx", "SrcAvailCancelTx", "ZcopyFallbacks", "AbortOnClose",
	"AbortOnTimeout", "AbortByPeer", "AbortOnProtoError", "AbortOnCqError",
	"AbortOnCmDisconnect", "MemRefused", "HalfOpenRefused",
	"CreditStalls", "RxRingGrows", "RxRingShrinks",
};
#define NSTATS	((int)(sizeof(stat_names) / sizeof(stat_names[0])))

static long long stat_delta(const long long *before, const char *name)
{
	int i;

	for (i = 0; i < NSTATS; i++)
		if (!strcmp(stat_names[i], name))
			return stat_of(name) - before[i];
	return 0;
}

static int env_int(const char *name, int dflt, int lo, int hi)
{
	const char *v = getenv(name);
	int n = v && *v ? atoi(v) : dflt;

	CHECK(n >= lo && n <= hi, "%s=%s: not in %d..%d", name, v, lo, hi);
	return n;
}

static void knobs(void)
{
	const char *seed = getenv("SDP_STRESS_SEED");

	S.seconds = env_int("SDP_STRESS_SECONDS", 20, 1, 24 * 3600);
	S.threads = env_int("SDP_STRESS_THREADS", 6, 1, MAX_THREADS);
	S.stall_ms = env_int("SDP_STRESS_STALL", 60, 5, 3600) * 1000;
	S.seed = seed && *seed ? strtoull(seed, NULL, 0) :
				 (uint64_t)now_us() ^ ((uint64_t)getpid() << 32);
	S.sdp = test_is_sdp();
}

static bool sockets_at_base(void *arg)
{
	(void)arg;
	return proc_net_sdp_count() <= base->sockets;
}

static bool no_sockets(void *arg)
{
	(void)arg;
	return proc_net_sdp_count() == 0;
}

static bool nothing_pinned(void *arg)
{
	(void)arg;
	return vm_pin_kb() <= 0;
}

/* The RDMA device's port counters (hw_counters), by name. */
#define MAX_HWC	48
struct hwc {
	int n;
	char name[MAX_HWC][48];
	long long val[MAX_HWC];
};

static void hwc_read(struct hwc *h)
{
	char dir[256], path[512];
	struct dirent *e;
	DIR *d;

	h->n = 0;
	snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports/1/hw_counters",
		 TEST_IBDEV());
	d = opendir(dir);
	if (!d)
		return;
	while (h->n < MAX_HWC && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lifespan"))
			continue;
		if (strlen(e->d_name) >= sizeof(h->name[0]))
			continue;
		memcpy(h->name[h->n], e->d_name, strlen(e->d_name) + 1);
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		h->val[h->n++] = read_ull(path);
	}
	closedir(d);
}

/*
 * The device counters that moved during the storm, beside the packet
 * counts: retries, duplicates and NAKs explain a completion error.
 */
static void hwc_diag(const struct hwc *h0)
{
	char line[2048];
	struct hwc h1;
	size_t n = 0;
	int i, j;

	hwc_read(&h1);
	for (i = 0; i < h1.n && n < sizeof(line) - 64; i++)
		for (j = 0; j < h0->n; j++)
			if (!strcmp(h0->name[j], h1.name[i]) &&
			    h1.val[i] != h0->val[j])
				n += snprintf(line + n, sizeof(line) - n, " %s +%lld",
					      h1.name[i], h1.val[i] - h0->val[j]);
	line[n] = '\0';
	tap_diag("%s counters:%s", TEST_IBDEV(), n ? line : " none moved");
}

static void summary(const long long *st0)
{
	char ops_line[1024];
	unsigned long long per_op[NOPS] = { 0 };
	long long ms[NOPS] = { 0 };
	size_t n = 0;
	int i, t;

	for (t = 0; t < S.threads; t++)
		for (i = 0; i < NOPS; i++) {
			per_op[i] += S.w[t].op_count[i];
			ms[i] += S.w[t].op_ms[i];
		}
	for (i = 0; i < NOPS; i++)
		n += snprintf(ops_line + n, sizeof(ops_line) - n, " %s %llu",
			      ops[i].name, per_op[i]);
	tap_diag("ops:%s", ops_line);
	n = 0;
	for (i = 0; i < NOPS; i++)
		n += snprintf(ops_line + n, sizeof(ops_line) - n, " %s %lld",
			      ops[i].name, per_op[i] ? ms[i] / (long long)per_op[i] : 0);
	tap_diag("mean ms per op:%s", ops_line);
	tap_diag("stress %s: %d s, %d threads, seed %llu: %llu calls, connects %llu (refused %llu), accepts %llu, sent %llu KiB (zero-copy sized %llu), received %llu KiB, EOFs %llu, EFAULT %llu, EINTR %llu (signals %llu), EBADF %llu, ENOBUFS %llu, forks %llu (killed %llu), munmap races %llu, close races %llu, dup2 %llu, closes %llu",
		 test_family_name(), S.seconds, S.threads,
		 (unsigned long long)S.seed, S.c.calls, S.c.connects,
		 S.c.refused, S.c.accepts, S.c.sent >> 10, S.c.zc_sends,
		 S.c.received >> 10, S.c.eofs, S.c.efaults, S.c.eintrs,
		 S.c.signals, S.c.badf, S.c.enobufs, S.c.forks, S.c.kills,
		 S.c.munmaps, S.c.close_races, S.c.dup2s, S.c.closes);
	if (S.sdp) {
		n = 0;
		for (i = 0; i < NSTATS; i++)
			n += snprintf(ops_line + n, sizeof(ops_line) - n,
				      " %s %lld", stat_names[i],
				      stat_of(stat_names[i]) - st0[i]);
		tap_diag("sdp_stats:%s", ops_line);
	}
}

static void test_stress_storm(void)
{
	long long st0[NSTATS];
	struct fdset before;
	struct hwc hwc0;
	int kmsg, i, left, odd, closed, cancels, more, bad;
	char buf[64];

	knobs();
	tap_diag("seed %llu (SDP_STRESS_SEED=%llu replays the choices), %d s, %d threads, family %s",
		 (unsigned long long)S.seed, (unsigned long long)S.seed,
		 S.seconds, S.threads, test_family_name());
	/* The storm, the joins and the checks after it must fit the alarm. */
	left = alarm(0);
	alarm(left > S.seconds + 2 * S.stall_ms / 1000 + 120 ? left :
	      S.seconds + 2 * S.stall_ms / 1000 + 120);

	S.thresh = 65536;
	if (S.sdp) {
		CHECK_OK(sdp_ensure_loaded());
		/* Earlier suites' sockets finish their close first. */
		if (!wait_until(no_sockets, NULL, DRAIN_MS))
			tap_diag("%d SDP sockets from before are still there",
				 proc_net_sdp_count());
		base->sockets = proc_net_sdp_count();
		base->curr_estab = sdp_stat("CurrEstab");
		base->half_open = sdp_stat("HalfOpen");
		base->mem_pages = sdp_stat("MemPages");
		CHECK(rdma_res_read(&base->res) == 0, "rdma resource show failed");
		base->valid = true;
		CHECK(write_file(FIN_SYSCTL, FIN_TIMEOUT) == 0, "%s", FIN_SYSCTL);
		CHECK(write_file(RX_IDLE_SYSCTL, RX_IDLE_MS) == 0, "%s",
		      RX_IDLE_SYSCTL);
		if (test_device_iwarp())
			CHECK(write_file(SYN_RETRIES_SYSCTL, "2") == 0, "%s",
			      SYN_RETRIES_SYSCTL);
		if (read_file(THRESH_SYSCTL, buf, sizeof(buf)) == 0 &&
		    atoi(buf) > 0)
			S.thresh = atoi(buf);
		/* Put back by main() after the suite (a real host's too). */
		if (write_file(BURST_SYSCTL, "10000"))
			tap_diag("cannot raise %s: the kernel log check may miss lines",
				 BURST_SYSCTL);
	}
	for (i = 0; i < NSTATS; i++)
		st0[i] = stat_of(stat_names[i]);
	hwc_read(&hwc0);
	kmsg = kmsg_open();
	CHECK(kmsg >= 0, "/dev/kmsg: %s", strerror(errno));

	storm_setup();
	fds_snapshot(&before);
	storm_run();

	/* Everything the storm made is closed, in a slot or not. */
	for (i = 0; i < SLOTS; i++)
		if (S.slots[i].fd >= 0)
			close(S.slots[i].fd);
	odd = fds_close_new(&before, &closed);
	tap_diag("closed %d descriptors the storm left", closed);
	summary(st0);
	hwc_diag(&hwc0);
	/* The kernel's lines first: they explain a failed check below. */
	bad = kmsg_bad_lines(kmsg, &cancels);

	for (i = 0; i < S.nkinds; i++)
		tap_diag("FAIL (%dx, first by worker %d) %s", S.fail_count[i],
			 S.fail_worker[i], S.fail[i]);
	CHECK(S.nfail == 0, "%d failed calls, %d different (first: %s)",
	      S.nfail, S.nkinds, S.fail[0]);
	CHECK(odd == 0, "%d descriptors made during the storm were no sockets",
	      odd);

	/* The run did work, so that it cannot pass by doing nothing. */
	CHECK(S.c.connects >= 10 && S.c.accepts >= 10,
	      "only %llu connects and %llu accepts", S.c.connects, S.c.accepts);
	CHECK(S.c.sent >= (1 << 20) && S.c.received >= (1 << 20),
	      "only %llu bytes sent and %llu received", S.c.sent, S.c.received);
	CHECK(S.c.efaults >= 10, "only %llu EFAULTs", S.c.efaults);
	CHECK(S.c.zc_sends >= 1, "no zero-copy sized send went through");
	CHECK(S.c.close_races >= 1 && S.c.munmaps >= 1 && S.c.forks >= 1,
	      "close races %llu, munmap races %llu, forks %llu",
	      S.c.close_races, S.c.munmaps, S.c.forks);
	if (!S.sdp)
		return;

	CHECK(stat_delta(st0, "ActiveEstab") >= 10 &&
	      stat_delta(st0, "PassiveEstab") >= 10,
	      "ActiveEstab %lld, PassiveEstab %lld",
	      stat_delta(st0, "ActiveEstab"), stat_delta(st0, "PassiveEstab"));
	CHECK(stat_delta(st0, "ZcopyTxMsgs") >= 1 &&
	      stat_delta(st0, "ZcopyRdmaReads") >= 1,
	      "no zero-copy transfer: ZcopyTxMsgs %lld, ZcopyRdmaReads %lld",
	      stat_delta(st0, "ZcopyTxMsgs"), stat_delta(st0, "ZcopyRdmaReads"));
	CHECK(stat_delta(st0, "ZcopyTxSplicedBytes") >= 1,
	      "no sendfile() page went zero-copy (ZcopyTxSplicedBytes)");
	CHECK(stat_delta(st0, "RxRingShrinks") >= 1,
	      "no receive ring shrank (RxRingGrows %lld, RxRingShrinks %lld)",
	      stat_delta(st0, "RxRingGrows"),
	      stat_delta(st0, "RxRingShrinks"));
	CHECK(wait_until(nothing_pinned, NULL, 10000),
	      "%ld kB still pinned after every call returned", vm_pin_kb());
	/* Both ends are this module on one healthy device. */
	CHECK(stat_delta(st0, "AbortOnCqError") == 0,
	      "%lld connections aborted for a completion error",
	      stat_delta(st0, "AbortOnCqError"));
	CHECK(!S.c.enobufs || stat_delta(st0, "MemRefused") > 0,
	      "%llu ENOBUFS without a memory refusal (MemRefused)",
	      S.c.enobufs);
	bad += kmsg_bad_lines(kmsg, &more);
	cancels += more;
	close(kmsg);
	tap_diag("kernel log: %d \"no answer to SrcAvailCancel\" lines", cancels);
	CHECK(bad == 0, "%d kernel log lines of trouble (above)", bad);
	CHECK(stat_delta(st0, "AbortOnProtoError") <= cancels,
	      "%lld aborts for a protocol error, %d of them explained by an unanswered SrcAvailCancel",
	      stat_delta(st0, "AbortOnProtoError"), cancels);
}

static void need_storm(void)
{
	if (!test_is_sdp())
		tap_skip("SDP only");
	if (!base->valid)
		tap_skip("test_stress_storm did not run");
}

static bool gauges_at_base(void *arg)
{
	(void)arg;
	return sdp_stat("CurrEstab") <= base->curr_estab &&
	       sdp_stat("HalfOpen") <= base->half_open &&
	       sdp_stat("MemPages") <= base->mem_pages;
}

static void test_stress_drains(void)
{
	struct rdma_res now;
	char a[128], b[128], line[512];
	int left = alarm(0);

	need_storm();
	alarm(left > 3 * DRAIN_MS / 1000 + 60 ? left : 3 * DRAIN_MS / 1000 + 60);
	/*
	 * Again: the runner put it back after the storm, and TCP reads it
	 * at each retransmission.  (The storm's state S is its own child's:
	 * need_storm() made sure this is SDP.)
	 */
	if (test_device_iwarp())
		CHECK(write_file(SYN_RETRIES_SYSCTL, "2") == 0, "%s",
		      SYN_RETRIES_SYSCTL);
	if (!wait_until(sockets_at_base, NULL, DRAIN_MS)) {
		FILE *f = fopen("/proc/net/sdp", "re");

		while (f && fgets(line, sizeof(line), f))
			tap_diag("%s", strtok(line, "\n"));
		if (f)
			fclose(f);
		CHECK(0, "%d SDP sockets %d s after the storm, %d before it",
		      proc_net_sdp_count(), DRAIN_MS / 1000, base->sockets);
	}
	CHECK(wait_until(gauges_at_base, NULL, DRAIN_MS),
	      "CurrEstab %lld HalfOpen %lld MemPages %lld, before the storm %lld %lld %lld",
	      sdp_stat("CurrEstab"), sdp_stat("HalfOpen"), sdp_stat("MemPages"),
	      base->curr_estab, base->half_open, base->mem_pages);
	CHECK(rdma_res_wait(&base->res, &now, DRAIN_MS),
	      "RDMA resources %s, before the storm %s",
	      rdma_res_str(&now, a, sizeof(a)),
	      rdma_res_str(&base->res, b, sizeof(b)));
}

static void test_stress_unloads(void)
{
	struct sockaddr_storage addr;
	struct rdma_res now;
	char a[128], b[128];
	size_t len = 256 * 1024;
	int l, c, s, ret, kmsg, cancels;
	char *buf;

	test_need_own_module();
	need_storm();
	kmsg = kmsg_open();
	CHECK(kmsg >= 0, "/dev/kmsg: %s", strerror(errno));
	ret = sdp_unload(UNLOAD_MS);
	CHECK(ret == 0, "unload: %s (%d SDP sockets, refcnt %d)",
	      strerror(-ret), proc_net_sdp_count(), sdp_refcnt());
	CHECK(!sdp_loaded(), "still loaded after the unload");
	CHECK(rdma_res_read(&now) == 0, "rdma resource show failed");
	CHECK(rdma_res_within(&now, &base->res),
	      "RDMA resources %s after the unload, %s before the storm",
	      rdma_res_str(&now, a, sizeof(a)),
	      rdma_res_str(&base->res, b, sizeof(b)));
	CHECK_OK(sdp_ensure_loaded());

	/* The module works again: a buffered and a zero-copy sized write. */
	buf = malloc(len);
	CHECK(buf, "malloc");
	l = net_listener(&addr, 1, 0);
	c = net_connect(&addr, 0);
	s = net_accept(l, 10000);
	memset(buf, FILL, len);
	CHECK(write_all(c, buf, 1000) == 1000, "write: %s", strerror(errno));
	CHECK(read_all(s, buf, 1000) == 1000, "read: %s", strerror(errno));
	CHECK(write_all(s, buf, len) == (ssize_t)len, "write: %s",
	      strerror(errno));
	CHECK(read_all(c, buf, len) == (ssize_t)len, "read: %s",
	      strerror(errno));
	close(c);
	close(s);
	close(l);
	free(buf);
	CHECK(kmsg_bad_lines(kmsg, &cancels) == 0,
	      "kernel log lines of trouble (above)");
	close(kmsg);
}

static const struct tap_test tests[] = {
	TAP_TEST(test_stress_storm),
	TAP_TEST(test_stress_drains),
	TAP_TEST(test_stress_unloads),
};

int main(int argc, char **argv)
{
	char burst[32];
	bool saved;
	int ret;

	/* Each test runs in its own child: the baseline is shared memory. */
	base = mmap(NULL, sizeof(*base), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	/* test_stress_storm() raises net.core.message_burst: put it back. */
	saved = read_file(BURST_SYSCTL, burst, sizeof(burst)) == 0;
	ret = tap_main(tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
	if (saved)
		write_file(BURST_SYSCTL, burst);
	return ret;
}
