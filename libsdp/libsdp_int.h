/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsdp.so's internal interface: what the parts of the library share.
 * libsdp.c has the implementer's description of the whole; each .c file
 * owns one seam:
 *
 *   libsdp.c    the real libc functions, the configuration, logging, the
 *               rules decision, initialisation
 *   table.c     the descriptor table, its entries and lock, hidden
 *               descriptors, turning a candidate TCP socket into SDP
 *   options.c   socket(), setsockopt(), getsockopt(), getsockname(),
 *               getpeername(); the record of options and their replay
 *   listen.c    bind(), listen(), accept(), accept4(), shutdown(): the
 *               SDP shadow of a "both" listener
 *   connect.c   connect(): "sdp" and "both" clients, settling a
 *               nonblocking "both" attempt
 *   dup.c       close(), dup(), dup2(), dup3(), fcntl(), close_range(),
 *               closefrom(): the table follows the program's descriptors
 *   wait.c      poll(), ppoll(), select(), pselect(), epoll_ctl(),
 *               epoll_wait(), epoll_pwait(), epoll_pwait2()
 *
 * Everything here is hidden (-fvisibility=hidden and the pragma below):
 * only the functions marked EXPORT, the interposed libc calls, leave the
 * library.
 */
#ifndef LIBSDP_INT_H
#define LIBSDP_INT_H

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <linux/sdp.h>

#include "rules.h"

#pragma GCC visibility push(hidden)

#define EXPORT __attribute__((visibility("default")))

#define LISTEN_RETRY_MS		100	/* see "both", server side */
#define MODULE_RETRY_MS		10000	/* after socket(AF_INET_SDP) failed */
#define HIDDEN_FD_MIN		100
#define MAX_OPT_LEN		32	/* larger option values are not replayed */
/* An SDP message carries up to 32 KiB: what TCP_MAXSEG reads as. */
#define SDP_EMULATED_MSS	32768
/* socket()'s type without SOCK_NONBLOCK and SOCK_CLOEXEC (SOCK_TYPE_MASK). */
#define SOCK_TYPE_BITS		0xf
/*
 * Waits on the stack: poll() and ppoll() arrays up to POLL_STACK_FDS
 * entries (with room for as many shadows), select() and pselect() sets
 * below SELECT_STACK_FDS, epoll_wait() on sets with up to
 * EPOLL_STACK_CONNECTS "both" connects in progress.  Larger ones
 * allocate; where that fails the call fails with ENOMEM (libsdp(7)).
 */
#define POLL_STACK_FDS		32
#define SELECT_STACK_FDS	64
#define EPOLL_STACK_CONNECTS	16
/* The libc functions the library stands in front of. */
struct libc_fns {
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
};

extern struct libc_fns real;

/* ---- State (table.c) ------------------------------------------------ */

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
#define N_CHUNKS	1024
/* Descriptors from here up are not tracked: they stay plain TCP. */
#define MAX_TRACKED_FD	(N_CHUNKS * CHUNK_SIZE)

typedef struct fdent *_Atomic fdslot;
extern fdslot *_Atomic chunks[N_CHUNKS];

/* Entries that poll(), select() and epoll_wait() must look at. */
extern atomic_int n_special;
extern atomic_int n_connecting;
/* The entry of every hidden descriptor. */
extern struct fdent hidden_marker;

/* ---- Configuration (libsdp.c) --------------------------------------- */

extern struct sdp_config cfg;
extern bool active;		/* some rule can select SDP for us */
extern int sdp_family;
extern int connect_ms;
extern bool kernel_fb;		/* "both" clients use the module's fallback */
extern int log_fd;
extern int hidden_min;

extern pthread_once_t init_once;
extern atomic_bool initialized;

void init(void);

static inline void ensure_init(void)
{
	if (__builtin_expect(!atomic_load_explicit(&initialized,
						   memory_order_acquire), 0))
		pthread_once(&init_once, init);
}

static inline long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

void logmsg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define ADDRSTR(sa, len) \
	sdp_addr_str((const void *)(sa), (len), (char[64]){ 0 }, 64)

int log_sdp_call(const char *call, const void *addr, socklen_t len, int ret);
const struct sdp_rule *decide(enum sdp_role role, const struct sockaddr *addr,
			      socklen_t len, enum sdp_use *use);

/* ---- The table (table.c) -------------------------------------------- */

static inline struct fdent *get(int fd)
{
	fdslot *chunk;

	if (fd < 0 || fd >= MAX_TRACKED_FD)
		return NULL;
	chunk = atomic_load_explicit(&chunks[fd >> CHUNK_BITS],
				     memory_order_acquire);
	if (!chunk)
		return NULL;
	return atomic_load_explicit(&chunk[fd & (CHUNK_SIZE - 1)],
				    memory_order_acquire);
}

static inline bool is_special(const struct fdent *e)
{
	return e && (e->kind == FD_LISTEN_BOTH || e->kind == FD_CONNECTING ||
		     e->kind == FD_FAILED);
}

/* A TCP socket that a rule may turn into SDP, going to an IP address. */
static inline bool is_candidate(const struct fdent *e,
				const struct sockaddr *addr, socklen_t len)
{
	return e && e->kind == FD_CAND && addr &&
	       (addr->sa_family == AF_INET || addr->sa_family == AF_INET6) &&
	       len <= sizeof(struct sockaddr_storage);
}

void lock_tab(sigset_t *old);
void unlock_tab(sigset_t *old);
void atfork_prepare(void);
void atfork_parent(void);
void atfork_child(void);
bool set(int fd, struct fdent *e);
void table_each(bool (*fn)(void *arg, int fd, struct fdent *e), void *arg);
void set_kind(int fd, struct fdent *e, enum fd_kind kind);
struct fdent *new_entry(enum fd_kind kind, int domain);
int free_entry(struct fdent *e);
struct fdent *dup_entry(const struct fdent *src);
int hide_fd(int fd);
void mark_hidden(int fd);
void shadow_put(struct shadow *sh);
int sdp_socket(int fd, bool nonblock);
bool fd_nonblocking(int fd);
int install(int fd, struct fdent *e, int sfd);
void forget(int fd);
int convert(int fd, bool nonblock);

/* ---- Options (options.c) -------------------------------------------- */

void replay_opts(int sfd, const struct optrec *opts, unsigned int n);
struct optrec *opts_copy(int fd, unsigned int *n);

/* ---- connect (connect.c) -------------------------------------------- */

int settle(int fd, int wait_ms);

#pragma GCC visibility pop

#endif /* LIBSDP_INT_H */
