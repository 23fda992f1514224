// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_scale: many connections, for scripts/bench-scale.
 *
 *   sdp_scale idle    [-f sdp|tcp] [-a ADDR] [-n CONNS]
 *   sdp_scale rate    [-f sdp|tcp|rsocket] [-a ADDR] [-n CONNS]
 *   sdp_scale streams [-f sdp|tcp] [-a ADDR] [-n STREAMS] [-s MSGSIZE]
 *                     [-t SECONDS]
 *
 * idle: a child accepts CONNS connections and keeps them; the parent
 * opens them, passes one byte each way on each, and measures how much
 * MemAvailable (/proc/meminfo) fell from before the first to 2 s after
 * the last (idle by then: net.sdp.tx_idle_ms is 1 s by default), both
 * ends being in this machine.  Prints: KiB per connection
 * (both ends), KiB per end.
 *
 * rate: CONNS times, one after the other, connect, accept and close both
 * ends (a thread accepts).  Prints connections per
 * second.  rsocket uses librdmacm's rsocket() calls, the user-space
 * sockets over RDMA that rsockets offers.
 *
 * streams: STREAMS connections at once, each sending MSGSIZE-byte
 * messages (default 64 KiB) for SECONDS (default 4) to its own reader.
 * Prints: aggregate MB/s, Jain's fairness index over the streams' bytes
 * ((sum x)^2 / (n * sum x^2), 1 when all are equal), the slowest and the
 * fastest stream in MB/s.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rsocket.h>
#include <linux/sdp.h>

#include "bench.h"

enum kind { K_SDP, K_TCP, K_RSOCKET };

/* The calls of each kind: the kernel's sockets, or librdmacm's. */
static int x_socket(enum kind k)
{
	if (k == K_RSOCKET)
		return rsocket(AF_INET, SOCK_STREAM, 0);
	return socket(k == K_SDP ? AF_INET_SDP : AF_INET, SOCK_STREAM, 0);
}

static int x_close(enum kind k, int fd)
{
	return k == K_RSOCKET ? rclose(fd) : close(fd);
}

static int x_listen(enum kind k, struct sockaddr_in *sin)
{
	socklen_t slen = sizeof(*sin);
	int l = x_socket(k), one = 1;

	if (l < 0)
		die("socket");
	if (k == K_RSOCKET) {
		rsetsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (rbind(l, (struct sockaddr *)sin, sizeof(*sin)) ||
		    rlisten(l, 1024) ||
		    rgetsockname(l, (struct sockaddr *)sin, &slen))
			die("rsocket listen");
		return l;
	}
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)sin, sizeof(*sin)) || listen(l, 1024) ||
	    getsockname(l, (struct sockaddr *)sin, &slen))
		die("listen");
	return l;
}

static int x_accept(enum kind k, int l)
{
	int fd;

	do
		fd = k == K_RSOCKET ? raccept(l, NULL, NULL) :
				      accept(l, NULL, NULL);
	while (fd < 0 && errno == EINTR);
	return fd;
}

static int x_connect(enum kind k, const struct sockaddr_in *sin)
{
	int fd = x_socket(k);

	if (fd < 0)
		die("socket");
	if ((k == K_RSOCKET ?
	     rconnect(fd, (const struct sockaddr *)sin, sizeof(*sin)) :
	     connect(fd, (const struct sockaddr *)sin, sizeof(*sin))))
		die("connect");
	return fd;
}

/* MemAvailable in KiB. */
static long mem_available(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* Enough descriptors for @n connections of each end. */
static void raise_nofile(int n)
{
	struct rlimit rl = { .rlim_cur = n + 64, .rlim_max = n + 64 };
	struct rlimit cur;

	if (!getrlimit(RLIMIT_NOFILE, &cur) && cur.rlim_cur >= rl.rlim_cur)
		return;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("RLIMIT_NOFILE");
}

static void xchg_byte(int fd, int first)
{
	char c = 'x';

	if (first && send(fd, &c, 1, 0) != 1)
		die("send");
	if (recv(fd, &c, 1, MSG_WAITALL) != 1)
		die("recv");
	if (!first && send(fd, &c, 1, 0) != 1)
		die("send");
}

static int idle(enum kind k, struct sockaddr_in *sin, int n)
{
	int l, i, *fds = calloc(n, sizeof(int)), ready[2], done[2];
	long before, after;
	char c;
	pid_t pid;

	if (!fds || pipe(ready) || pipe(done))
		die("setup");
	raise_nofile(n);
	before = mem_available();
	l = x_listen(k, sin);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		for (i = 0; i < n; i++) {
			fds[i] = x_accept(k, l);
			if (fds[i] < 0)
				die("accept");
			xchg_byte(fds[i], 0);
		}
		/* Held until the parent has measured. */
		if (write(ready[1], "r", 1) != 1 || read(done[0], &c, 1) != 1)
			die("pipe");
		_exit(0);
	}
	for (i = 0; i < n; i++) {
		fds[i] = x_connect(k, sin);
		xchg_byte(fds[i], 1);
	}
	if (read(ready[0], &c, 1) != 1)
		die("pipe");
	/* Deferred work settles; idle send rings go (net.sdp.tx_idle_ms). */
	sleep(2);
	after = mem_available();
	if (write(done[1], "d", 1) != 1)
		die("pipe");
	waitpid(pid, NULL, 0);
	for (i = 0; i < n; i++)
		close(fds[i]);
	close(l);
	printf("%.1f %.1f\n", (double)(before - after) / n,
	       (double)(before - after) / n / 2);
	free(fds);
	return 0;
}

struct acceptor {
	enum kind k;
	int l, n;
};

/* rate's accepting side: a thread (rsockets do not survive a fork). */
static void *acceptor(void *arg)
{
	struct acceptor *a = arg;
	int i, fd;

	for (i = 0; i < a->n; i++) {
		fd = x_accept(a->k, a->l);
		if (fd < 0)
			die("accept");
		x_close(a->k, fd);
	}
	return NULL;
}

static int rate(enum kind k, struct sockaddr_in *sin, int n)
{
	struct acceptor a = { .k = k, .l = x_listen(k, sin), .n = n };
	pthread_t t;
	double t0;
	int i;

	if (pthread_create(&t, NULL, acceptor, &a))
		die("pthread_create");
	t0 = now_s();
	for (i = 0; i < n; i++)
		x_close(k, x_connect(k, sin));
	pthread_join(t, NULL);
	printf("%.0f\n", n / (now_s() - t0));
	x_close(k, a.l);
	return 0;
}

static volatile sig_atomic_t stop;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

static int streams(enum kind k, struct sockaddr_in *sin, int n, size_t size,
		   int secs)
{
	unsigned long long *bytes = mmap(NULL, n * sizeof(*bytes),
					 PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	double sum = 0, sq = 0, lo = -1, hi = 0;
	int l = x_listen(k, sin), i, ready[2], go[2];
	struct sigaction sa = { .sa_handler = on_alarm };
	char c;

	if (bytes == MAP_FAILED || pipe(ready) || pipe(go))
		die("setup");
	raise_nofile(2 * n);
	sigaction(SIGALRM, &sa, NULL);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (!pid) {
			/* Stream i: a reader and a writer process. */
			char *buf = malloc(size);
			int fd, r;

			close(go[1]);	/* only the parent's closing says go */
			if (!buf)
				die("malloc");
			memset(buf, 0x5a, size);
			r = fork();
			if (r < 0)
				die("fork");
			if (!r) {
				ssize_t got;

				fd = x_accept(k, l);
				while ((got = recv(fd, buf, size, 0)) > 0)
					;
				_exit(0);
			}
			fd = x_connect(k, sin);
			/* All streams start together: connected, then go. */
			if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1))
				die("start");
			alarm(secs);
			while (!stop) {
				ssize_t m = send(fd, buf, size, 0);

				if (m > 0)
					bytes[i] += m;
				else if (m < 0 && errno != EINTR)
					die("send");
			}
			close(fd);
			waitpid(r, NULL, 0);
			_exit(0);
		}
	}
	for (i = 0; i < n; i++)
		if (read(ready[0], &c, 1) != 1)
			die("a stream did not start");
	close(go[1]);		/* go */
	while (wait(NULL) > 0)
		;
	for (i = 0; i < n; i++) {
		double x = bytes[i] / 1e6 / secs;

		sum += x;
		sq += x * x;
		if (lo < 0 || x < lo)
			lo = x;
		if (x > hi)
			hi = x;
	}
	printf("%.1f %.3f %.2f %.2f\n", sum, sq ? sum * sum / (n * sq) : 0,
	       lo, hi);
	close(l);
	return 0;
}

int main(int argc, char **argv)
{
	const char *addr = "10.55.0.1", *mode;
	enum kind k = K_SDP;
	int n = 100, secs = 4, opt;
	size_t size = 64 << 10;
	struct sockaddr_in sin;

	if (argc < 2) {
		fprintf(stderr, "usage: %s idle|rate|streams [-f sdp|tcp|rsocket] [-a ADDR] [-n N] [-s MSGSIZE] [-t SECONDS]\n",
			argv[0]);
		return 2;
	}
	mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "f:a:n:s:t:")) != -1) {
		switch (opt) {
		case 'f':
			k = !strcmp(optarg, "tcp") ? K_TCP :
			    !strcmp(optarg, "rsocket") ? K_RSOCKET : K_SDP;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 's':
			size = strtoul(optarg, NULL, 0);
			break;
		case 't':
			secs = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	bench_addr(&sin, addr, 0);
	if (n < 1 || !size)
		return 2;
	if (!strcmp(mode, "idle") && k != K_RSOCKET)
		return idle(k, &sin, n);
	if (!strcmp(mode, "rate"))
		return rate(k, &sin, n);
	if (!strcmp(mode, "streams") && k != K_RSOCKET)
		return streams(k, &sin, n, size, secs);
	fprintf(stderr, "%s: unknown mode %s (or not for this kind)\n", argv[0],
		mode);
	return 2;
}
