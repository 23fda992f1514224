// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_stream: one-way stream throughput and the sender's CPU time, for
 * scripts/bench.
 *
 *   sdp_stream [-f sdp|tcp] [-a ADDR] [-s MSGSIZE] [-r READSIZE] [-n BYTES]
 *              [-z THRESH] [-N]
 *
 * (sizes take a K, M or G suffix)
 * A child process listens and reads everything with READSIZE-byte reads
 * (default MSGSIZE); the parent connects and sends BYTES in MSGSIZE-byte
 * blocking sends.  -z sets SOL_SDP SDP_ZCOPY_THRESH on the sender (0:
 * zero-copy off); -N sets TCP_NODELAY on the sender.
 * Prints one line:  MB/s  sender-CPU-seconds-per-GB  zcopy-bytes  sends/s
 * (the sender's user + system time from getrusage, so it includes the
 * pinning or copying the send path does in the kernel).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "bench.h"

/* A size with an optional K, M or G suffix (powers of 1024). */
static size_t parse_size(const char *s)
{
	char *end;
	size_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'G': case 'g':
		v <<= 10;
		/* fall through */
	case 'M': case 'm':
		v <<= 10;
		/* fall through */
	case 'K': case 'k':
		v <<= 10;
	}
	return v;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	const char *addr = "10.55.0.1";
	size_t size = 1 << 20, rsize = 0, total = 256 << 20, sent = 0;
	int family = AF_INET_SDP, zthresh = -1, nodelay = 0, opt, l, fd;
	struct sockaddr_in sin;
	int pipefd[2];
	double t0, c0, t, c;
	char *buf;
	pid_t pid;

	while ((opt = getopt(argc, argv, "f:a:s:r:n:z:N")) != -1) {
		switch (opt) {
		case 'f':
			family = strcmp(optarg, "tcp") ? AF_INET_SDP : AF_INET;
			break;
		case 'a':
			addr = optarg;
			break;
		case 's':
			size = parse_size(optarg);
			break;
		case 'n':
			total = parse_size(optarg);
			break;
		case 'r':
			rsize = parse_size(optarg);
			break;
		case 'z':
			zthresh = atoi(optarg);
			break;
		case 'N':
			nodelay = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-f sdp|tcp] [-a ADDR] [-s MSGSIZE] [-r READSIZE] [-n BYTES] [-z THRESH] [-N]\n",
				argv[0]);
			return 2;
		}
	}
	if (!rsize)
		rsize = size;
	buf = malloc(size > rsize ? size : rsize);
	if (!buf)
		die("setup");
	memset(buf, 0x5a, size > rsize ? size : rsize);

	l = bench_listen(family, addr, &sin);
	if (pipe(pipefd))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		size_t got = 0;
		ssize_t n;

		fd = accept(l, NULL, NULL);
		if (fd < 0)
			die("accept");
		while (got < total) {
			n = recv(fd, buf, rsize, 0);
			if (n <= 0)
				die("recv");
			got += n;
		}
		/* Tell the sender the last byte arrived. */
		if (write(pipefd[1], "x", 1) != 1)
			die("pipe write");
		close(fd);
		_exit(0);
	}
	close(l);
	fd = bench_connect(family, &sin);
	if (zthresh >= 0 && family == AF_INET_SDP &&
	    setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &zthresh,
		       sizeof(zthresh)))
		die("SDP_ZCOPY_THRESH");
	if (nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay,
				  sizeof(nodelay)))
		die("TCP_NODELAY");

	t0 = now_s();
	c0 = cpu_s();
	while (sent < total) {
		ssize_t n = send(fd, buf, size, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("send");
		sent += n;
	}
	c = cpu_s() - c0;
	if (read(pipefd[0], buf, 1) != 1)
		die("pipe read");
	t = now_s() - t0;
	{
		unsigned long long zc = 0;

		if (family == AF_INET_SDP) {
			struct sdp_info si;
			socklen_t len = sizeof(si);

			if (!getsockopt(fd, SOL_SDP, SDP_INFO, &si, &len))
				zc = si.sdpi_zcopy_tx_bytes;
		}
		printf("%.1f %.3f %llu %.0f\n", total / t / 1e6, c / (total / 1e9),
		       zc, total / size / t);
	}
	close(fd);
	waitpid(pid, NULL, 0);
	return 0;
}
