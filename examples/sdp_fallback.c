// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_fallback: SDP sockets that fall back to TCP, and why, as an example
 * of SDP_TCP_FALLBACK and of reading the transport from SDP_INFO.
 *
 * Usage: sdp_fallback ADDRESS [NO-RDMA-ADDRESS [SILENT-ADDRESS]] [-- CMD...]
 *
 * ADDRESS is an address of an RDMA device.  On it, an SDP listener with
 * fallback on (it listens on TCP too) and a plain TCP listener; then
 * connections with fallback on to each: to the SDP listener (over SDP),
 * to the TCP one (rejected: no SDP listener there), to it again (cached),
 * and a plain TCP client of the SDP listener (tcp-client).  With
 * NO-RDMA-ADDRESS, an address of a device without RDMA: a TCP listener
 * there and a connection to it (no-device).  With SILENT-ADDRESS, an
 * address nobody has on the RDMA device's network: a nonblocking connect
 * with a 300 ms fallback timeout (unreachable; TCP then tries too, and
 * stays in SYN_SENT).  Each line printed is one connection's transport
 * and reason.  CMD (sdpstat -a, say) runs while they are all up.  Used
 * by `make demo`.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sdp.h>

static const char *const reasons[] = {
	[SDP_FB_NONE] = "-",
	[SDP_FB_NO_DEVICE] = "no-device",
	[SDP_FB_ADDR_ERROR] = "addr-error",
	[SDP_FB_ROUTE_ERROR] = "route-error",
	[SDP_FB_UNREACHABLE] = "unreachable",
	[SDP_FB_REJECTED] = "rejected",
	[SDP_FB_TCP_CLIENT] = "tcp-client",
	[SDP_FB_CACHED] = "cached",
	[SDP_FB_IWARP] = "iwarp",
};

static void die(const char *what)
{
	fprintf(stderr, "sdp_fallback: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct sockaddr_in addr_of(const char *ip)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
		fprintf(stderr, "sdp_fallback: not an IPv4 address: %s\n", ip);
		exit(2);
	}
	return sin;
}

/* A listener of @family on @sin (any port: *@sin gets it). */
static int listener(int family, struct sockaddr_in *sin, int fallback)
{
	socklen_t len = sizeof(*sin);
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0)
		die("socket");
	if (fallback && setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK, &fallback,
				   sizeof(fallback)))
		die("SDP_TCP_FALLBACK (is the module older?)");
	if (bind(fd, (struct sockaddr *)sin, sizeof(*sin)) || listen(fd, 8) ||
	    getsockname(fd, (struct sockaddr *)sin, &len))
		die("listen");
	return fd;
}

/* The transport of SDP socket @fd and why, as SDP_INFO says. */
static void show(const char *what, int fd)
{
	struct sdp_info info;
	socklen_t len = sizeof(info);
	unsigned int why;

	if (getsockopt(fd, SOL_SDP, SDP_INFO, &info, &len))
		die("SDP_INFO");
	why = info.sdpi_fallback_reason;
	printf("  %-36s %s%s%s\n", what,
	       info.sdpi_transport == SDP_TRANSPORT_TCP ? "tcp" : "sdp",
	       why ? ", reason " : "",
	       why ? (why < sizeof(reasons) / sizeof(reasons[0]) ?
		      reasons[why] : "?") : "");
}

/* An SDP socket with fallback on, connected to @sin (blocking). */
static int sdp_connect(const struct sockaddr_in *sin)
{
	int fd = socket(AF_INET_SDP, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		die("socket(AF_INET_SDP)");
	if (setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK, &one, sizeof(one)))
		die("SDP_TCP_FALLBACK");
	if (connect(fd, (const struct sockaddr *)sin, sizeof(*sin)))
		die("connect");
	return fd;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sdp_l, tcp_l, plain;
	int fds[16], n = 0, i, one = 1, ms = 300, fd, tl, st;
	char **cmd = NULL;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			cmd = argv + i + 1;
			argv[i] = NULL;
			argc = i;
			break;
		}
	}
	if (argc < 2 || argc > 4 || (cmd && !*cmd)) {
		fprintf(stderr, "usage: sdp_fallback ADDRESS [NO-RDMA-ADDRESS [SILENT-ADDRESS]] [-- CMD...]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sdp_l = addr_of(argv[1]);
	tcp_l = sdp_l;
	fds[n++] = listener(AF_INET_SDP, &sdp_l, 1);
	fds[n++] = tl = listener(AF_INET, &tcp_l, 0);

	fd = fds[n++] = sdp_connect(&sdp_l);
	show("to the SDP listener:", fd);
	fd = fds[n++] = sdp_connect(&tcp_l);
	show("to the TCP listener:", fd);
	fd = fds[n++] = sdp_connect(&tcp_l);
	show("to the TCP listener again:", fd);
	fd = fds[n++] = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sdp_l, sizeof(sdp_l)))
		die("TCP connect");
	/* The SDP listener's accept queue: its SDP and its TCP client. */
	for (i = 0; i < 2; i++) {
		fd = fds[n++] = accept(fds[0], NULL, NULL);
		if (fd < 0)
			die("accept");
		show("accepted by the SDP listener:", fd);
	}

	if (argc > 2) {
		plain = addr_of(argv[2]);
		fds[n++] = listener(AF_INET, &plain, 0);
		fd = fds[n++] = sdp_connect(&plain);
		show("to an address without RDMA:", fd);
	}
	if (argc > 3) {
		struct sdp_info info = { 0 };
		socklen_t len;

		plain = addr_of(argv[3]);
		plain.sin_port = tcp_l.sin_port;
		fd = fds[n++] = socket(AF_INET_SDP,
				       SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (fd < 0 ||
		    setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK, &one,
			       sizeof(one)) ||
		    setsockopt(fd, SOL_SDP, SDP_TCP_FALLBACK_TIMEOUT, &ms,
			       sizeof(ms)))
			die("SDP_TCP_FALLBACK_TIMEOUT");
		if (!connect(fd, (struct sockaddr *)&plain, sizeof(plain)) ||
		    errno != EINPROGRESS)
			die("nonblocking connect");
		/* TCP takes over after 300 ms; its SYN gets no answer. */
		for (i = 0; i < 100 && info.sdpi_transport != SDP_TRANSPORT_TCP;
		     i++) {
			poll(NULL, 0, 50);
			len = sizeof(info);
			if (getsockopt(fd, SOL_SDP, SDP_INFO, &info, &len))
				die("SDP_INFO");
		}
		show("to an address nobody answers for:", fd);
	}
	/* The TCP listener's queue: the fallen-back clients. */
	if (fcntl(tl, F_SETFL, O_NONBLOCK))
		die("fcntl");
	while (n < (int)(sizeof(fds) / sizeof(fds[0])) &&
	       (fd = accept(tl, NULL, NULL)) >= 0)
		fds[n++] = fd;

	if (cmd) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (!pid) {
			execvp(cmd[0], cmd);
			die(cmd[0]);
		}
		if (waitpid(pid, &st, 0) != pid)
			die("waitpid");
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}
