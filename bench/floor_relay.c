/*
 * The floor of the front-door bench's side-by-side row: a TCP byte relay
 * with (almost) no user-space work, to measure what a proxy that makes the
 * same system calls as serve and Kroxylicious costs per MB on this machine.
 *
 * One thread, one level-triggered epoll set, non-blocking sockets,
 * TCP_NODELAY on both sides of each pair (uvloop and Netty set it too).
 * Each accepted client gets its own upstream connection; per pair, one
 * buffer per direction of BUF_SIZE bytes (uvloop's read size, 256,000, is
 * about as large). When a side is readable: one read into its buffer and a
 * write of it to the other side at once. A write the kernel takes only in
 * part keeps the rest: the source stops being read (EPOLLIN off) and the
 * destination is watched for EPOLLOUT until the rest is written, then the
 * source is read again. So a pair never holds more than one buffer per
 * direction. End of stream or an error on either side closes both. No frame
 * is parsed and no byte changed: clients reach the broker through it only
 * because the broker advertises the relay's port (bench/_floor.py).
 *
 * Usage: floor_relay LISTEN_PORT UPSTREAM_HOST UPSTREAM_PORT
 *   LISTEN_PORT on 127.0.0.1 (0: any free port); UPSTREAM_HOST an IPv4
 *   address. Prints "ready PORT" on stdout once listening. On SIGTERM or
 *   SIGINT, prints its counters on stdout ("pairs=N to_upstream=BYTES
 *   to_client=BYTES partial_writes=N refused=N") and exits 0.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_SIZE (256 * 1024)
/* Pairs open at once: each holds two buffers and two descriptors, so the
 * relay's memory and descriptors are bounded whatever connects to it. */
#define MAX_PAIRS 256
#define MAX_EVENTS 64

enum { CLIENT = 0, UPSTREAM = 1 };

struct pair;

/* One side of a pair; the epoll data of its descriptor. */
struct end {
    struct pair *pair;
    int side;         /* CLIENT or UPSTREAM */
    int fd;
    uint32_t events;  /* what epoll watches now */
};

/* Bytes read from one side, not yet all written to the other. */
struct pending {
    char *buf;
    size_t off, len;  /* buf[off, len) is still to be written */
};

struct pair {
    struct end ends[2];
    struct pending from[2];  /* from[s]: read from side s, for side 1 - s */
    int connecting;          /* the upstream connect has not completed yet */
    int closed;              /* closed in this batch of events; freed after it */
    struct pair *next_closed;
};

static int epfd = -1;
static int open_pairs;
static struct pair *closed_pairs;
/* The epoll data of the listener and of the signalfd: no pair's address. */
static char listener_tag, signals_tag;
static unsigned long long stat_pairs, stat_partial, stat_refused;
static unsigned long long stat_bytes[2];  /* by source side: to_upstream, to_client */

static void die(const char *what) {
    fprintf(stderr, "floor_relay: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* What epoll should watch on side s: reads while nothing it read waits to be
 * written (and its upstream is connected), writes while the other side's
 * bytes wait for it. */
static uint32_t wanted(const struct pair *p, int s) {
    uint32_t ev = 0;
    if (p->connecting)
        return s == UPSTREAM ? EPOLLOUT : 0;
    if (p->from[s].len == 0)
        ev |= EPOLLIN;
    if (p->from[1 - s].len != 0)
        ev |= EPOLLOUT;
    return ev;
}

static int update(struct pair *p, int s) {
    struct end *e = &p->ends[s];
    uint32_t ev = wanted(p, s);
    if (ev == e->events)
        return 0;
    struct epoll_event change = {.events = ev, .data.ptr = e};
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, e->fd, &change) < 0)
        return -1;
    e->events = ev;
    return 0;
}

static void close_pair(struct pair *p) {
    if (p->closed)
        return;
    p->closed = 1;
    for (int s = 0; s < 2; s++) {
        if (p->ends[s].fd >= 0 && close(p->ends[s].fd) < 0 && errno != EINTR)
            perror("floor_relay: close");
        p->ends[s].fd = -1;
    }
    /* Freed once the batch is handled: a later event of the same batch may
     * still point at it. */
    p->next_closed = closed_pairs;
    closed_pairs = p;
    open_pairs--;
}

static void free_closed(void) {
    while (closed_pairs) {
        struct pair *p = closed_pairs;
        closed_pairs = p->next_closed;
        free(p->from[0].buf);
        free(p->from[1].buf);
        free(p);
    }
}

static int nodelay(int fd) {
    int one = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int watch(struct end *e) {
    struct epoll_event add = {.events = e->events, .data.ptr = e};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, e->fd, &add);
}

/* Write what from[s] holds to the other side; -1 on a write error. */
static int flush(struct pair *p, int s) {
    struct pending *q = &p->from[s];
    while (q->off < q->len) {
        ssize_t n = write(p->ends[1 - s].fd, q->buf + q->off, q->len - q->off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return -1;
        }
        q->off += (size_t)n;
        stat_bytes[s] += (unsigned long long)n;
    }
    if (q->off < q->len) {
        stat_partial++;
        return 0;
    }
    q->off = q->len = 0;
    return 0;
}

/* One read from side s and its write to the other side; -1 to close. */
static int relay(struct pair *p, int s) {
    struct pending *q = &p->from[s];
    ssize_t n;
    do
        n = read(p->ends[s].fd, q->buf, BUF_SIZE);
    while (n < 0 && errno == EINTR);
    if (n == 0)
        return -1;  /* end of stream */
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    q->off = 0;
    q->len = (size_t)n;
    return flush(p, s);
}

static int connect_upstream(const struct sockaddr_in *upstream) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (nodelay(fd) < 0 ||
        (connect(fd, (const struct sockaddr *)upstream, sizeof *upstream) < 0 &&
         errno != EINPROGRESS)) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

static struct pair *new_pair(int client, int up) {
    struct pair *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->from[0].buf = malloc(BUF_SIZE);
    p->from[1].buf = malloc(BUF_SIZE);
    if (!p->from[0].buf || !p->from[1].buf) {
        free(p->from[0].buf);
        free(p->from[1].buf);
        free(p);
        return NULL;
    }
    p->connecting = 1;
    int fds[2] = {client, up};
    for (int s = 0; s < 2; s++) {
        p->ends[s].pair = p;
        p->ends[s].side = s;
        p->ends[s].fd = fds[s];
        p->ends[s].events = wanted(p, s);
    }
    return p;
}

static void accept_one(int listener, const struct sockaddr_in *upstream) {
    int client = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
            errno == ECONNABORTED || errno == EPROTO)
            return;
        die("accept4");
    }
    int up = -1;
    struct pair *p = NULL;
    if (open_pairs >= MAX_PAIRS) {
        stat_refused++;
        fprintf(stderr, "floor_relay: %d pairs open, connection refused\n", open_pairs);
    } else if (nodelay(client) < 0 || (up = connect_upstream(upstream)) < 0) {
        perror("floor_relay: upstream");
    } else if (!(p = new_pair(client, up))) {
        fprintf(stderr, "floor_relay: out of memory\n");
    } else if (watch(&p->ends[CLIENT]) < 0 || watch(&p->ends[UPSTREAM]) < 0) {
        die("epoll_ctl");
    } else {
        open_pairs++;
        stat_pairs++;
        return;
    }
    if (up >= 0)
        close(up);
    close(client);
}

/* The upstream connect completed (or failed): start relaying. */
static int connected(struct pair *p) {
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(p->ends[UPSTREAM].fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        return -1;
    if (err) {
        errno = err;
        perror("floor_relay: upstream connect");
        return -1;
    }
    p->connecting = 0;
    return 0;
}

static void handle(struct end *e, uint32_t ev) {
    struct pair *p = e->pair;
    int s = e->side, done = 0;
    if (p->closed)
        return;
    if (p->connecting) {
        /* Only the upstream's EPOLLOUT (the connect's end) is watched; either
         * side's hang-up or error is reported anyway. */
        if (ev & (EPOLLERR | EPOLLHUP))
            goto close;
        if (s == UPSTREAM && ev & EPOLLOUT &&
            (connected(p) < 0 || update(p, CLIENT) < 0 || update(p, UPSTREAM) < 0))
            goto close;
        return;
    }
    /* Writable: the rest of what the other side sent. Readable: one read,
     * written on at once. The two directions share nothing but the close. */
    if (ev & EPOLLOUT && p->from[1 - s].len != 0) {
        if (flush(p, 1 - s) < 0)
            goto close;
        done = 1;
    }
    if (ev & EPOLLIN && p->from[s].len == 0) {
        if (relay(p, s) < 0)
            goto close;
        done = 1;
    }
    /* A hang-up or error that no read or write above reported: a read would
     * return it, but reading is off while this side's bytes wait. */
    if (!done && ev & (EPOLLERR | EPOLLHUP))
        goto close;
    if (update(p, s) < 0 || update(p, 1 - s) < 0)
        goto close;
    return;
close:
    close_pair(p);
}

static int parse_port(const char *text, int allow_zero) {
    char *end;
    errno = 0;
    long port = strtol(text, &end, 10);
    if (errno || end == text || *end || port < (allow_zero ? 0 : 1) || port > 65535)
        return -1;
    return (int)port;
}

static int listen_on(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        die("socket");
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
        die("SO_REUSEADDR");
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0)
        die("bind");
    if (listen(fd, SOMAXCONN) < 0)
        die("listen");
    socklen_t len = sizeof addr;
    if (getsockname(fd, (struct sockaddr *)&addr, &len) < 0)
        die("getsockname");
    if (printf("ready %d\n", ntohs(addr.sin_port)) < 0 || fflush(stdout) != 0)
        die("stdout");
    return fd;
}

/* SIGTERM and SIGINT as a descriptor in the epoll set: a stop is seen
 * whenever it comes, with no race between a flag's check and the wait. */
static int stop_signals(void) {
    sigset_t stop;
    struct sigaction ignore = {.sa_handler = SIG_IGN};  /* a closed peer is EPIPE, not death */
    if (sigemptyset(&ignore.sa_mask) < 0 || sigaction(SIGPIPE, &ignore, NULL) < 0)
        die("sigaction");
    if (sigemptyset(&stop) < 0 || sigaddset(&stop, SIGTERM) < 0 || sigaddset(&stop, SIGINT) < 0 ||
        sigprocmask(SIG_BLOCK, &stop, NULL) < 0)
        die("sigprocmask");
    int fd = signalfd(-1, &stop, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0)
        die("signalfd");
    return fd;
}

static void watch_tagged(int fd, void *tag) {
    struct epoll_event add = {.events = EPOLLIN, .data.ptr = tag};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &add) < 0)
        die("epoll_ctl");
}

int main(int argc, char **argv) {
    int port, up_port;
    struct sockaddr_in upstream = {.sin_family = AF_INET};
    if (argc != 4 || (port = parse_port(argv[1], 1)) < 0 ||
        inet_pton(AF_INET, argv[2], &upstream.sin_addr) != 1 ||
        (up_port = parse_port(argv[3], 0)) < 0) {
        fprintf(stderr, "usage: floor_relay LISTEN_PORT UPSTREAM_IPV4 UPSTREAM_PORT\n");
        return 2;
    }
    upstream.sin_port = htons((uint16_t)up_port);
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0)
        die("epoll_create1");
    watch_tagged(stop_signals(), &signals_tag);
    int listener = listen_on(port);
    watch_tagged(listener, &listener_tag);
    struct epoll_event events[MAX_EVENTS];
    for (int stopping = 0; !stopping;) {
        int n = epoll_wait(epfd, events, MAX_EVENTS, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            void *tag = events[i].data.ptr;
            if (tag == &signals_tag)
                stopping = 1;  /* the signal stays pending: the process exits below */
            else if (tag == &listener_tag)
                accept_one(listener, &upstream);
            else
                handle(tag, events[i].events);
        }
        free_closed();
    }
    if (printf("pairs=%llu to_upstream=%llu to_client=%llu partial_writes=%llu refused=%llu\n",
               stat_pairs, stat_bytes[CLIENT], stat_bytes[UPSTREAM], stat_partial,
               stat_refused) < 0 ||
        fflush(stdout) != 0)
        die("stdout");
    return 0;
}
