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
 *   Where the module falls back to TCP itself (SDP_TCP_FALLBACK), the
 *   descriptor becomes an SDP socket with that option on and the
 *   fallback timeout as SDP_TCP_FALLBACK_TIMEOUT, and the module does the
 *   rest: the same socket connects over TCP when SDP cannot, and its
 *   negative cache spares the next connect() the SDP attempt.  Otherwise
 *   (an older module, or LIBSDP_KERNEL_FALLBACK=0) the library does it:
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
 *   TCP_WINDOW_CLAMP, IP_TTL, ...) are accepted and remembered on SDP
 *   sockets, since they only tune TCP; getsockopt(TCP_INFO) returns a
 *   zeroed tcp_info with the state filled in.  Errno is preserved across
 *   the library's own calls.
 *
 * Files
 *   This file has the real functions, the configuration, logging and
 *   initialisation; libsdp_int.h lists the other parts (the table, the
 *   options, listen, connect, dup and close, the waits) and what they
 *   share.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <syslog.h>
#include <unistd.h>

#include "libsdp_int.h"

/* -------------------------------------------------------------------- */
/* The real functions and the configuration                             */

struct libc_fns real;

struct sdp_config cfg;
bool active;
static const char *progname = "?";
int sdp_family = AF_INET_SDP;
int connect_ms = SDP_CONNECT_MS_DEFAULT;
bool kernel_fb = true;
int log_fd = -1;
int hidden_min = HIDDEN_FD_MIN;

pthread_once_t init_once = PTHREAD_ONCE_INIT;
atomic_bool initialized;

/* -------------------------------------------------------------------- */
/* Logging                                                              */

void logmsg(int level, const char *fmt, ...)
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

/*
 * Log what an SDP bind(), listen() or connect() on @addr (@len 0: any
 * address) gave, @ret with errno; returns @ret, errno kept.
 */
int log_sdp_call(const char *call, const void *addr, socklen_t len, int ret)
{
	int err = errno;

	logmsg(SDP_LOG_SUMMARY, "%s %s: sdp%s%s", call,
	       len ? ADDRSTR(addr, len) : "(any)", ret ? ": " : "",
	       ret ? strerror(err) : "");
	errno = err;
	return ret;
}

/* The rule for a bind()/listen() (server) or connect() (client); logged. */
const struct sdp_rule *decide(enum sdp_role role, const struct sockaddr *addr,
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

void init(void)
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

		if (!*end && v >= 0 && v <= SDP_CONNECT_MS_MAX)
			connect_ms = v;
	}
	s = getenv("LIBSDP_KERNEL_FALLBACK");
	if (s && !strcmp(s, "0"))
		kernel_fb = false;
	/* The module may have been loaded with another family number. */
	f = fopen("/sys/module/sdp/parameters/family", "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f) && atoi(buf) > 0)
			sdp_family = atoi(buf);
		fclose(f);
	}

	path = getenv("LIBSDP_CONFIG_FILE");
	if (!path || !*path)
		path = SDP_DEFAULT_CONFIG;
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
