// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_hello: an echo over an SDP connection, as a minimal example of the
 * family's use.  Usage: sdp_hello ADDRESS (an address of an RDMA device).
 * Used by `make demo`.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sdp.h>

static void die(const char *what)
{
	fprintf(stderr, "sdp_hello: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void show(const char *what, int fd, int peer)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	char buf[INET_ADDRSTRLEN];

	if ((peer ? getpeername : getsockname)(fd, (struct sockaddr *)&sin,
					       &len))
		die("getname");
	printf("  %-8s %s:%u\n", what,
	       inet_ntop(AF_INET, &sin.sin_addr, buf, sizeof(buf)),
	       ntohs(sin.sin_port));
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	const char msg[] = "hello over RDMA";
	char buf[64];
	int l, c, s;
	ssize_t n;

	if (argc != 2 || inet_pton(AF_INET, argv[1], &sin.sin_addr) != 1) {
		fprintf(stderr, "usage: sdp_hello IPV4-ADDRESS\n");
		return 2;
	}
	l = socket(AF_INET_SDP, SOCK_STREAM, 0);
	if (l < 0)
		die("socket(AF_INET_SDP)");
	if (bind(l, (struct sockaddr *)&sin, sizeof(sin)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&sin, &len))
		die("bind/listen");
	show("listener", l, 0);

	if (fork() == 0) {	/* the echo server */
		s = accept(l, NULL, NULL);
		if (s < 0)
			die("accept");
		while ((n = read(s, buf, sizeof(buf))) > 0)
			if (write(s, buf, n) != n)
				die("write");
		close(s);
		_exit(0);
	}
	close(l);

	c = socket(AF_INET_SDP, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&sin, sizeof(sin)))
		die("connect");
	show("client", c, 0);
	show("server", c, 1);
	if (write(c, msg, sizeof(msg)) != sizeof(msg))
		die("write");
	n = read(c, buf, sizeof(buf));
	if (n != sizeof(msg) || memcmp(buf, msg, n)) {
		fprintf(stderr, "sdp_hello: echo mismatch (%zd bytes)\n", n);
		return 1;
	}
	printf("  sent \"%s\", the server echoed it back\n", buf);
	close(c);
	wait(NULL);
	return 0;
}
