// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the operability suites: see ops.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sdp.h>
#include <linux/sockios.h>

#include "net.h"
#include "ops.h"
#include "tap.h"
#include "util.h"

int listener_pair(struct sockaddr_storage *addr, int backlog, int *c, int *s)
{
	int l = net_listener(addr, backlog, 0);

	*c = net_connect(addr, 0);
	*s = net_accept(l, WAIT_MS);
	return l;
}

unsigned long inode_of(int fd)
{
	struct stat st;

	CHECK_OK(fstat(fd, &st));
	return st.st_ino;
}

/*
 * The counter tests count messages of the buffered path: large sends
 * would go zero-copy (tests/zcopy.c counts that path).
 */
static void buffered_only(int fd)
{
	int off = 0;

	CHECK_OK(setsockopt(fd, SOL_SDP, SDP_ZCOPY_THRESH, &off, sizeof(off)));
}

void send_bytes(int fd, size_t len)
{
	char *buf = xmalloc(len);

	buffered_only(fd);
	pattern_fill(buf, len, 7, 0);
	CHECK(write_all(fd, buf, len) == (ssize_t)len, "write %zu: %s", len,
	      strerror(errno));
	free(buf);
}

void recv_bytes(int fd, size_t len)
{
	char *buf = xmalloc(len);

	CHECK(read_all(fd, buf, len) == (ssize_t)len, "read %zu: %s", len,
	      strerror(errno));
	CHECK(pattern_check(buf, len, 7, 0) < 0, "wrong data");
	free(buf);
}

/* Send @len bytes from a child process while the caller reads them. */
pid_t send_bytes_async(int fd, size_t len)
{
	pid_t pid;

	buffered_only(fd);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		char *buf = malloc(len);

		if (!buf)
			_exit(2);
		pattern_fill(buf, len, 7, 0);
		_exit(write_all(fd, buf, len) == (ssize_t)len ? 0 : 1);
	}
	return pid;
}

void wait_child_ok(pid_t pid)
{
	int status;

	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "sender failed");
}

static bool inq_is(void *arg)
{
	int *a = arg, v = -1;

	return !ioctl(a[0], SIOCINQ, &v) && v == a[1];
}

/* Wait until @fd has exactly @bytes unread. */
void wait_inq(int fd, int bytes)
{
	int a[2] = { fd, bytes };

	CHECK(wait_until(inq_is, a, WAIT_MS), "SIOCINQ never reached %d",
	      bytes);
}

static bool no_sdp_sockets(void *arg)
{
	(void)arg;
	return proc_net_sdp_count() == 0;
}

/* Sockets closed by earlier tests finish their teardown first. */
void wait_no_sockets(void)
{
	if (wait_until(no_sdp_sockets, NULL, 30000))
		return;
	diag_sdp_sockets();
	CHECK(0, "%d SDP sockets still exist", proc_net_sdp_count());
}

size_t msgs_for(size_t bytes)
{
	return (bytes + MSG_PAYLOAD - 1) / MSG_PAYLOAD;
}

void stats_read(struct stats *s)
{
	char line[256];
	FILE *f = fopen("/proc/net/sdp_stats", "re");

	CHECK(f, "/proc/net/sdp_stats: %s", strerror(errno));
	s->n = 0;
	while (fgets(line, sizeof(line), f)) {
		int got;

		CHECK(s->n < MAX_STATS, "too many counters");
		got = sscanf(line, "%39s %lld", s->name[s->n], &s->val[s->n]);
		CHECK(got == 2, "bad line '%s'", line);
		s->n++;
	}
	fclose(f);
	CHECK(s->n > 0, "no counters");
}

long long stat_of(const struct stats *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return s->val[i];
	CHECK(0, "no counter %s", name);
	return 0;
}

/* Every counter but those named in @moved (NULL-terminated) is unchanged. */
void check_unchanged(const struct stats *a, const struct stats *b,
		     const char *const *moved)
{
	int i, j;

	for (i = 0; i < a->n; i++) {
		bool skip = false;

		for (j = 0; moved[j]; j++)
			skip |= !strcmp(a->name[i], moved[j]);
		if (!skip)
			CHECK(a->val[i] == stat_of(b, a->name[i]),
			      "%s moved from %lld to %lld", a->name[i],
			      a->val[i], stat_of(b, a->name[i]));
	}
}

struct collect {
	struct sdp_diag_sock *out;
	int max, count;
};

static void collect(void *arg, const struct sdp_diag_sock *s)
{
	struct collect *c = arg;

	if (c->count < c->max)
		c->out[c->count] = *s;
	c->count++;
}

int diag_dump(uint32_t states, uint32_t ino, struct sdp_diag_sock *out,
	      int max)
{
	const struct sdp_diag_req req = {
		.sdiag_family = AF_INET_SDP,
		.sdiag_states = states,
		.sdiag_ext = SDP_DIAG_EXT(SDP_DIAG_STATS) |
			     SDP_DIAG_EXT(SDP_DIAG_CONN),
		.sdiag_ino = ino,
	};
	struct collect c = { out, max, 0 };
	unsigned int bad;
	const char *what;

	CHECK(sdp_diag_dump(&req, collect, &c, &bad, &what) == 0, "%s: %s",
	      what, strerror(errno));
	CHECK(!bad, "%u malformed netlink messages in the dump", bad);
	return c.count;
}

const struct sdp_diag_sock *diag_find(const struct sdp_diag_sock *d, int n,
				      unsigned long ino)
{
	int i;

	for (i = 0; i < n; i++)
		if (d[i].msg.sdiag_inode == ino)
			return &d[i];
	return NULL;
}

char *run_capture(const char *cmd, int *status)
{
	size_t cap = 1 << 20, len = 0, n;
	char *buf = xmalloc(cap + 1);
	FILE *p = popen(cmd, "r");

	CHECK(p, "popen %s", cmd);
	while ((n = fread(buf + len, 1, cap - len, p)) > 0)
		len += n;
	buf[len] = '\0';
	*status = pclose(p);
	return buf;
}

/* The line of @out whose fields include @a and @b (NULL: any), or NULL. */
char *find_line(char *out, const char *a, const char *b)
{
	char *line = out;

	while (line && *line) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char tmp[1024];
		size_t i, j = 0;

		/* One space between fields, and around the line. */
		tmp[j++] = ' ';
		for (i = 0; i < len && j < sizeof(tmp) - 2; i++) {
			if (isspace((unsigned char)line[i])) {
				if (tmp[j - 1] != ' ')
					tmp[j++] = ' ';
			} else {
				tmp[j++] = line[i];
			}
		}
		if (tmp[j - 1] != ' ')
			tmp[j++] = ' ';
		tmp[j] = '\0';
		if ((!a || strstr(tmp, a)) && (!b || strstr(tmp, b)))
			return line;
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}
