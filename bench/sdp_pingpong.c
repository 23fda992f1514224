// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_pingpong: the latency distribution of a ping-pong, and what one
 * socket call costs, for scripts/bench-latency.
 *
 *   sdp_pingpong [-f sdp|tcp] [-a ADDR] [-s MSGSIZE] [-n ROUNDS]
 *   sdp_pingpong -F [-f sdp|tcp] [-a ADDR] [-n CALLS]
 *
 * A child process listens and echoes MSGSIZE-byte messages; the parent
 * connects (TCP_NODELAY) and times each round trip of ROUNDS.  Prints one
 * line, one-way microseconds (half a round trip, as qperf and perftest
 * report): min p50 p90 p99 p99.9 mean.
 *
 * With -F nothing is echoed: on the connected socket the parent times
 * CALLS of each of getppid() (a system call that does nothing), recv()
 * with MSG_DONTWAIT that finds no data, and send() of one byte with
 * MSG_MORE (copied into the send buffer, not sent: SDP holds one 32 KiB
 * message that way, so CALLS above about 32000 would include a post).
 * Prints one line, microseconds per call: getppid recv-eagain send-more.
 * These are the floor under each message: a ping-pong pays a send() and
 * a recv() per message before any protocol work.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "bench.h"

static double now_us(void)
{
	return now_s() * 1e6;
}

static void io_full(int fd, char *buf, size_t len, int rd)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = rd ? recv(fd, buf + off, len - off, 0) :
				 send(fd, buf + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die(rd ? "recv" : "send");
		off += n;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Per-call cost of the calls every message pays for; see the top. */
static void floor_costs(int fd, int calls)
{
	double t, getppid_us, eagain_us, more_us;
	char ch = 0;
	int i;

	t = now_us();
	for (i = 0; i < calls; i++)
		syscall(SYS_getppid);
	getppid_us = (now_us() - t) / calls;
	t = now_us();
	for (i = 0; i < calls; i++)
		if (recv(fd, &ch, 1, MSG_DONTWAIT) != -1 || errno != EAGAIN)
			die("recv (expected EAGAIN)");
	eagain_us = (now_us() - t) / calls;
	t = now_us();
	for (i = 0; i < calls; i++)
		if (send(fd, &ch, 1, MSG_MORE | MSG_NOSIGNAL) != 1)
			die("send MSG_MORE");
	more_us = (now_us() - t) / calls;
	printf("%.2f %.2f %.2f\n", getppid_us, eagain_us, more_us);
}

int main(int argc, char **argv)
{
	const char *addr = "10.55.0.1";
	int family = AF_INET_SDP, rounds = 20000, opt, l, fd, one = 1, i;
	struct sockaddr_in sin;
	size_t size = 64;
	bool floor_mode = false;
	double *rtt, sum = 0;
	char *buf;
	pid_t pid;

	while ((opt = getopt(argc, argv, "Ff:a:s:n:")) != -1) {
		switch (opt) {
		case 'F':
			floor_mode = true;
			break;
		case 'f':
			family = strcmp(optarg, "tcp") ? AF_INET_SDP : AF_INET;
			break;
		case 'a':
			addr = optarg;
			break;
		case 's':
			size = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			rounds = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-F] [-f sdp|tcp] [-a ADDR] [-s MSGSIZE] [-n ROUNDS]\n",
				argv[0]);
			return 2;
		}
	}
	buf = calloc(1, size ? size : 1);
	rtt = calloc(rounds > 0 ? rounds : 1, sizeof(*rtt));
	if (!buf || !rtt || !size || rounds <= 0)
		die("setup");

	l = bench_listen(family, addr, 0, &sin);
	pid = bench_fork_accept(l, &fd);
	if (!pid) {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (floor_mode) {
			/* Hold the connection until the parent closes it. */
			while (recv(fd, buf, size, 0) > 0)
				;
			_exit(0);
		}
		for (i = 0; i < rounds; i++) {
			io_full(fd, buf, size, 1);
			io_full(fd, buf, size, 0);
		}
		_exit(0);
	}
	close(l);
	fd = bench_connect(family, &sin);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

	if (floor_mode) {
		floor_costs(fd, rounds);
	} else {
		for (i = 0; i < rounds; i++) {
			double t = now_us();

			io_full(fd, buf, size, 0);
			io_full(fd, buf, size, 1);
			rtt[i] = (now_us() - t) / 2;
			sum += rtt[i];
		}
		qsort(rtt, rounds, sizeof(*rtt), cmp_double);
		printf("%.1f %.1f %.1f %.1f %.1f %.1f\n", rtt[0],
		       rtt[rounds / 2], rtt[rounds * 9 / 10],
		       rtt[rounds * 99 / 100], rtt[rounds * 999 / 1000],
		       sum / rounds);
	}
	close(fd);
	waitpid(pid, NULL, 0);
	return 0;
}
