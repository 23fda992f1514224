// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_hello: open an SDP socket and show what the kernel says about it.
 * Used by `make demo`; also a minimal example of the family's use.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/sdp.h>

static int opt(int fd, int name)
{
	socklen_t len = sizeof(int);
	int v = -1;

	getsockopt(fd, SOL_SOCKET, name, &v, &len);
	return v;
}

int main(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct stat st;
	char line[256];
	FILE *f;
	int fd;

	fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
	if (fd < 0) {
		fprintf(stderr, "socket(AF_INET_SDP): %s\n", strerror(errno));
		return 1;
	}
	fstat(fd, &st);
	printf("socket(AF_INET_SDP, SOCK_STREAM, 0) = %d (inode %lu)\n", fd,
	       (unsigned long)st.st_ino);
	printf("  SO_DOMAIN=%d SO_TYPE=%d SO_PROTOCOL=%d\n", opt(fd, SO_DOMAIN),
	       opt(fd, SO_TYPE), opt(fd, SO_PROTOCOL));

	printf("/proc/net/sdp while it is open:\n");
	f = fopen("/proc/net/sdp", "r");
	while (f && fgets(line, sizeof(line), f))
		printf("  %s", line);
	if (f)
		fclose(f);

	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		printf("bind(): %s (connections are not implemented yet)\n",
		       strerror(errno));
	close(fd);
	return 0;
}
