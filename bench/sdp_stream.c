// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_stream: one-way stream throughput and the sender's CPU time, for
 * scripts/bench and scripts/bench-wire.
 *
 *   sdp_stream [-f sdp|tcp|fallback] [-a ADDR] [-s MSGSIZE] [-r READSIZE] [-n BYTES]
 *              [-z THRESH] [-N] [-m send|sendfile|read|nb|nbzc]
 *              [-p PORT [-S]]
 *
 * (sizes take a K, M or G suffix)
 * Without -p, a child process listens on ADDR and reads everything with
 * READSIZE-byte reads (default MSGSIZE); the parent connects and sends
 * BYTES in MSGSIZE-byte blocking sends.  -f fallback: the listener is
 * a TCP one and the sender an SDP socket with SDP_TCP_FALLBACK, which
 * therefore sends over TCP (in-kernel fallback).  -z sets SOL_SDP
 * SDP_ZCOPY_THRESH on the sender (0: zero-copy off); -N sets TCP_NODELAY
 * on the sender.  -m sendfile sends from a file (a memfd of
 * min(BYTES, 16 MiB), sent over and over from its start) with
 * MSGSIZE-byte sendfile() calls; -m read reads the same file into the
 * buffer with pread() and sends that, as a server without sendfile()
 * does; -m send (the default) sends the buffer.  -m nb sends it as an
 * event-driven server does: a nonblocking socket, send() when poll()
 * says POLLOUT; -m nbzc the same with SO_ZEROCOPY and MSG_ZEROCOPY,
 * reading the completion notifications on POLLERR (the buffer never
 * changes, so it is not waited for).
 * Between two hosts: "-p PORT -S" serves on ADDR:PORT until killed
 * (each connection is read to its end, then answered with one byte);
 * "-p PORT" sends BYTES to the server at ADDR:PORT, closes its side and
 * waits for that byte.
 * The sender prints one line:  MB/s  sender-CPU-seconds-per-GB
 * zcopy-bytes  sends/s  (the sender's user + system time from
 * getrusage, so it includes the pinning or copying the send path does in
 * the kernel; the time runs until the last byte is known to have
 * arrived).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
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

/*
 * Read @fd with @rsize-byte reads until @total bytes or, if 0, its end.
 * Returns 0, or -1 if the connection failed first.
 */
static int drain(int fd, char *buf, size_t rsize, size_t total)
{
	size_t got = 0;
	ssize_t n;

	while (!total || got < total) {
		n = recv(fd, buf, rsize, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (!n && !total)
			return 0;
		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

/*
 * -S: serve connections one after another, until killed; one that fails
 * is closed without the byte, and its sender fails.
 */
static void serve(int family, const char *addr, unsigned short port,
		 char *buf, size_t rsize)
{
	struct sockaddr_in sin;
	int l = bench_listen(family, addr, port, &sin);

	for (;;) {
		int fd = accept(l, NULL, NULL);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept");
		}
		if (drain(fd, buf, rsize, 0) == 0 && send(fd, "x", 1, 0) != 1)
			perror("send ack");
		close(fd);
	}
}

enum mode { M_SEND, M_SENDFILE, M_READ, M_NB, M_NBZC };

/* Read every MSG_ZEROCOPY notification queued on @fd. */
static void read_notes(int fd)
{
	char control[128];
	struct msghdr msg;

	for (;;) {
		memset(&msg, 0, sizeof(msg));
		msg.msg_control = control;
		msg.msg_controllen = sizeof(control);
		if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			die("MSG_ERRQUEUE");
		}
	}
}

/*
 * An event loop's send of up to @size bytes of @buf: wait for POLLOUT,
 * reading notifications when POLLERR says some wait.
 */
static ssize_t send_nb(int fd, enum mode mode, char *buf, size_t size)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int flags = mode == M_NBZC ? MSG_ZEROCOPY : 0;
	ssize_t r;

	for (;;) {
		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p.revents & POLLERR)
			read_notes(fd);
		if (!(p.revents & POLLOUT))
			continue;
		r = send(fd, buf, size, flags | MSG_DONTWAIT);
		if (r >= 0 || errno != EAGAIN)
			return r;
	}
}

/* The file the sendfile and read modes send: @len bytes of 0x5a. */
static int make_file(char *buf, size_t bufsize, size_t len)
{
	int fd = memfd_create("sdp_stream", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		die("memfd_create");
	while (done < len) {
		size_t n = len - done < bufsize ? len - done : bufsize;

		if (write(fd, buf, n) != (ssize_t)n)
			die("write the file");
		done += n;
	}
	return fd;
}

/* Send up to @size bytes of the file @ffd from *@off (wrapping at @flen). */
static ssize_t send_file(int fd, int ffd, enum mode mode, char *buf,
			 size_t size, off_t *off, size_t flen)
{
	size_t n = size;
	ssize_t r;

	if (*off >= (off_t)flen)
		*off = 0;
	if (n > flen - *off)
		n = flen - *off;
	if (mode == M_SENDFILE)
		return sendfile(fd, ffd, off, n);
	r = pread(ffd, buf, n, *off);
	if (r <= 0)
		return -1;
	r = send(fd, buf, r, 0);
	if (r > 0)
		*off += r;
	return r;
}

int main(int argc, char **argv)
{
	const char *addr = "10.55.0.1";
	size_t size = 1 << 20, rsize = 0, total = 256 << 20, sent = 0;
	int family = AF_INET_SDP, zthresh = -1, nodelay = 0, opt, l, fd;
	int fallback = 0;
	int port = 0, server = 0, pipefd[2] = { -1, -1 };
	struct sockaddr_in sin;
	double t0, c0, t, c;
	char *buf;
	enum mode mode = M_SEND;
	size_t flen = 0;
	int ffd = -1;
	off_t foff = 0;
	pid_t pid = 0;

	while ((opt = getopt(argc, argv, "f:a:s:r:n:z:Nm:p:S")) != -1) {
		switch (opt) {
		case 'f':
			family = strcmp(optarg, "tcp") ? AF_INET_SDP : AF_INET;
			fallback = !strcmp(optarg, "fallback");
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
		case 'm':
			mode = !strcmp(optarg, "sendfile") ? M_SENDFILE :
			       !strcmp(optarg, "read") ? M_READ :
			       !strcmp(optarg, "nb") ? M_NB :
			       !strcmp(optarg, "nbzc") ? M_NBZC : M_SEND;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'S':
			server = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-f sdp|tcp|fallback] [-a ADDR] [-s MSGSIZE] [-r READSIZE] [-n BYTES] [-z THRESH] [-N] [-m send|sendfile|read|nb|nbzc] [-p PORT [-S]]\n",
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
	if (mode == M_SENDFILE || mode == M_READ) {
		flen = total < (16 << 20) ? total : (16 << 20);
		ffd = make_file(buf, size > rsize ? size : rsize, flen);
	}

	if (server) {
		if (!port) {
			fprintf(stderr, "-S needs -p PORT\n");
			return 2;
		}
		serve(family, addr, port, buf, rsize);
	}
	if (port) {
		bench_addr(&sin, addr, port);
	} else {
		l = bench_listen(fallback ? AF_INET : family, addr, 0, &sin);
		if (pipe(pipefd))
			die("pipe");
		pid = bench_fork_accept(l, &fd);
		if (!pid) {
			if (drain(fd, buf, rsize, total))
				die("recv");
			/* Tell the sender the last byte arrived. */
			if (write(pipefd[1], "x", 1) != 1)
				die("pipe write");
			close(fd);
			_exit(0);
		}
		close(l);
	}
	if (fallback) {
		fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
		if (fd < 0 ||
		    setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK, &(int){ 1 },
			       sizeof(int)) ||
		    connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
			die("connect with fallback");
	} else {
		fd = bench_connect(family, &sin);
	}
	if (zthresh >= 0 && family == AF_INET_SDP &&
	    setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &zthresh,
		       sizeof(zthresh)))
		die("SDP_ZCOPY_THRESH");
	if (nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay,
				  sizeof(nodelay)))
		die("TCP_NODELAY");
	if (mode == M_NBZC &&
	    setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &(int){ 1 }, sizeof(int)))
		die("SO_ZEROCOPY");

	t0 = now_s();
	c0 = cpu_s();
	while (sent < total) {
		size_t want = total - sent < size ? total - sent : size;
		ssize_t n = mode == M_SEND ? send(fd, buf, want, 0) :
			    mode == M_NB || mode == M_NBZC ?
			    send_nb(fd, mode, buf, want) :
			    send_file(fd, ffd, mode, buf, want, &foff, flen);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("send");
		sent += n;
	}
	if (port) {
		/* Our end of the stream, then the server's byte. */
		if (shutdown(fd, SHUT_WR))
			die("shutdown");
		if (recv(fd, buf, 1, MSG_WAITALL) != 1)
			die("recv ack");
	} else if (read(pipefd[0], buf, 1) != 1) {
		die("pipe read");
	}
	c = cpu_s() - c0;
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
	if (pid)
		waitpid(pid, NULL, 0);
	return 0;
}
