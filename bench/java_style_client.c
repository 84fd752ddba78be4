/*
 * A load generator that logs in to a Kafka-protocol endpoint exactly as
 * Kafka's Java client does (NetworkClient + SaslClientAuthenticator):
 *
 *   connect, ApiVersions v3, SaslHandshake v1, SaslAuthenticate v2
 *   (client-first), SaslAuthenticate v2 (client-final), server signature
 *   checked, close.
 *
 * One request in flight per connection (no pipelining), TCP_NODELAY as the
 * Java client sets it. Re-authentication (KIP-368) on an open connection is
 * SaslHandshake v1 then the two SaslAuthenticate v2, as the Java client does
 * after its first ApiVersions.
 *
 * It shares no code with the server: C, libcrypto for PBKDF2/HMAC/SHA-256.
 * One thread drives all connections with epoll, so that it stays far from
 * being the bottleneck; its own CPU time is reported. The salted password
 * is derived once per (salt, iterations) and kept, so PBKDF2 is not charged
 * to every login on the client side (the server's work is the same).
 *
 * Usage:
 *   java_style_client HOST PORT USER PASSWORD CONCURRENCY SECONDS MODE
 *                     [INTERVAL_MS [SERVER_PID [MAX_ERRORS]]]
 *   MODE: login      new connection per login (Java-style, the main figure)
 *         reauth     re-authenticate repeatedly on open connections
 *         pipelined  new connection per login, no ApiVersions, SaslHandshake
 *                    and client-first in one write (our KafkaConnection)
 *   INTERVAL_MS: reauth only; 0 (the default) re-authenticates as soon as the
 *         last one ends. Above 0, each connection starts its next one that
 *         long after the last one ended: Kafka's broker accepts at most one
 *         re-authentication start per second per connection (KafkaChannel's
 *         MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS). The first waits a random
 *         part of the interval, so that the connections' turns spread out.
 *   SERVER_PID: the server's process; its user + system CPU time
 *         (/proc/PID/stat, all its threads) over the measured window is
 *         reported as server_cpu_us.
 *   MAX_ERRORS: after this many failed logins no connection reopens (100;
 *         the soak's wrong-password load sets it past any run's count).
 * In reauth mode the measured window opens once every connection has made
 * its first (full) login, so those logins count in neither the logins nor
 * either CPU figure; the connections open RAMP at a time.
 * Prints one line: key=value pairs (logins, seconds, rate, p50_us, p99_us,
 * client_cpu_us, server_cpu_us, errors, client_wait_us: its time runnable but
 * waiting for a CPU); exits 1 if any login failed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum mode { LOGIN, REAUTH, PIPELINED };
enum step { ST_CONNECTING, ST_VERSIONS, ST_HANDSHAKE, ST_FIRST, ST_FINAL, ST_IDLE };

#define BUF 4096
#define MAX_SAMPLES 4000000
/* Re-auth mode opens its connections this many at a time, the next as one
 * finishes its first login: Kafka's socket.listen.backlog.size defaults to 50,
 * and a thousand SYNs at once overflow it into seconds of SYN retransmits. */
#define RAMP 50

struct conn {
    int fd;
    enum step step;
    int32_t corr;
    double started;
    char nonce[33];
    char first_bare[256];
    char server_sig[SHA256_DIGEST_LENGTH];
    unsigned char in[BUF];
    size_t have;
    int pipelined_handshake_pending;
    int warm;      /* re-auth mode: the connection's first login is not counted */
    unsigned gen;  /* bumped when the socket closes or reopens */
    double due;    /* paced re-auth: when the next one starts (0: none waiting) */
};

static const char *g_user, *g_password;
static struct sockaddr_in g_addr;
static enum mode g_mode;
static int g_epoll;
static double *g_samples;
static long g_done, g_errors;
static int g_running = 1, g_open;
static struct conn *g_conns;
static int g_concurrency, g_opened, g_warmed, g_window;
static double g_interval_s, g_seconds, g_start, g_deadline;
static long g_server_pid;
static long g_max_errors = 100;
static double g_server_cpu0, g_wait0;
static struct rusage g_ru0;
/* The one cached derivation (a single user and salt in this bench). */
static char g_cached_salt[128];
static int g_cached_iter = -1;
static unsigned char g_client_key[32], g_stored_key[32], g_server_key[32];

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

/* User + system CPU seconds of a process, all its threads (0 without one). */
static double process_cpu_s(long pid) {
    char path[64], buf[1024];
    unsigned long utime = 0, stime = 0;
    if (pid <= 0)
        return 0;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        die(path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* The command name may hold spaces: the fields after it start at the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
                     &stime) != 2)
        die("/proc/PID/stat");
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

/* Nanoseconds this process has spent runnable but waiting for a CPU
 * (/proc/self/schedstat's second field; 0 where there is none): when the load
 * generator shares the cores with the server, this says whether it was
 * starved. */
static double runqueue_wait_s(void) {
    unsigned long long run_ns = 0, wait_ns = 0;
    FILE *f = fopen("/proc/self/schedstat", "r");
    if (!f)
        return 0;
    if (fscanf(f, "%llu %llu", &run_ns, &wait_ns) != 2)
        wait_ns = 0;
    fclose(f);
    return (double)wait_ns / 1e9;
}

/* The measured window: its logins, its time, both CPU figures and the wait. */
static void open_window(void) {
    g_window = 1;
    g_wait0 = runqueue_wait_s();
    getrusage(RUSAGE_SELF, &g_ru0);
    g_server_cpu0 = process_cpu_s(g_server_pid);
    g_start = now_s();
    g_deadline = g_start + g_seconds;
}

static size_t put16(unsigned char *p, int v) {
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
    return 2;
}

static size_t put32(unsigned char *p, int32_t v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
    return 4;
}

static size_t put_uvarint(unsigned char *p, unsigned v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static size_t get_uvarint(const unsigned char *p, size_t len, unsigned *v) {
    unsigned r = 0;
    size_t n = 0;
    int shift = 0;
    while (n < len) {
        unsigned char b = p[n++];
        r |= (unsigned)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return n;
        }
        shift += 7;
    }
    return 0;
}

/* Request header: v1 (non-flexible) or v2 (flexible, adds empty tagged fields).
 * The client id is a nullable int16 string in both (KIP-482). */
static size_t header(unsigned char *p, int key, int version, int32_t corr, int flexible) {
    static const char client_id[] = "producer-1";
    size_t n = 4; /* the size, filled in by finish() */
    n += put16(p + n, key);
    n += put16(p + n, version);
    n += put32(p + n, corr);
    n += put16(p + n, (int)strlen(client_id));
    memcpy(p + n, client_id, strlen(client_id));
    n += strlen(client_id);
    if (flexible)
        p[n++] = 0;
    return n;
}

static size_t finish(unsigned char *p, size_t n) {
    put32(p, (int32_t)(n - 4));
    return n;
}

static size_t api_versions_v3(unsigned char *p, int32_t corr) {
    static const char name[] = "apache-kafka-java", ver[] = "3.9.0";
    size_t n = header(p, 18, 3, corr, 1);
    n += put_uvarint(p + n, (unsigned)strlen(name) + 1);
    memcpy(p + n, name, strlen(name));
    n += strlen(name);
    n += put_uvarint(p + n, (unsigned)strlen(ver) + 1);
    memcpy(p + n, ver, strlen(ver));
    n += strlen(ver);
    p[n++] = 0;
    return finish(p, n);
}

static size_t handshake_v1(unsigned char *p, int32_t corr) {
    static const char mech[] = "SCRAM-SHA-256";
    size_t n = header(p, 17, 1, corr, 0);
    n += put16(p + n, (int)strlen(mech));
    memcpy(p + n, mech, strlen(mech));
    n += strlen(mech);
    return finish(p, n);
}

static size_t authenticate_v2(unsigned char *p, int32_t corr, const char *token, size_t len) {
    size_t n = header(p, 36, 2, corr, 1);
    n += put_uvarint(p + n, (unsigned)len + 1);
    memcpy(p + n, token, len);
    n += len;
    p[n++] = 0;
    return finish(p, n);
}

static void b64(const unsigned char *in, int len, char *out) {
    EVP_EncodeBlock((unsigned char *)out, in, len);
}

static void hmac(const unsigned char *key, const void *msg, size_t len, unsigned char *out) {
    unsigned int olen = 32;
    HMAC(EVP_sha256(), key, 32, msg, len, out, &olen);
}

static void send_all(struct conn *c, const unsigned char *p, size_t n) {
    while (n) {
        ssize_t w = write(c->fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            die("write"); /* small frames on an idle socket: never EAGAIN here */
        }
        p += w;
        n -= (size_t)w;
    }
}

static size_t client_first(struct conn *c, char *out) {
    static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char raw[26];
    RAND_bytes(raw, sizeof raw);
    for (size_t i = 0; i < sizeof raw; i++)
        c->nonce[i] = alnum[raw[i] % 36];
    c->nonce[sizeof raw] = 0;
    snprintf(c->first_bare, sizeof c->first_bare, "n=%s,r=%s", g_user, c->nonce);
    return (size_t)sprintf(out, "n,,%s", c->first_bare);
}

static void start_auth(struct conn *c) {
    unsigned char p[BUF];
    char first[300];
    size_t n = 0;
    if (g_mode == PIPELINED) {
        n = handshake_v1(p, ++c->corr);
        size_t len = client_first(c, first);
        n += authenticate_v2(p + n, ++c->corr, first, len);
        c->pipelined_handshake_pending = 1;
        c->step = ST_HANDSHAKE;
    } else {
        n = handshake_v1(p, ++c->corr);
        c->step = ST_HANDSHAKE;
    }
    send_all(c, p, n);
}

static void open_conn(struct conn *c) {
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (c->fd < 0)
        die("socket");
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->started = now_s();
    c->have = 0;
    c->corr = 0;
    c->step = ST_CONNECTING;
    c->warm = 0;
    c->due = 0;
    c->gen++;
    if (connect(c->fd, (struct sockaddr *)&g_addr, sizeof g_addr) < 0 && errno != EINPROGRESS)
        die("connect");
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
    if (epoll_ctl(g_epoll, EPOLL_CTL_ADD, c->fd, &ev) < 0)
        die("epoll_ctl");
    g_open++;
}

static void close_conn(struct conn *c) {
    close(c->fd); /* also leaves the epoll set */
    c->fd = -1;
    c->due = 0;
    c->gen++;
    g_open--;
}

static void connected(struct conn *c) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err) {
        errno = err;
        die("connect");
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(g_epoll, EPOLL_CTL_MOD, c->fd, &ev);
    if (g_mode == PIPELINED) {
        start_auth(c);
        return;
    }
    unsigned char p[128];
    size_t n = api_versions_v3(p, ++c->corr);
    c->step = ST_VERSIONS;
    send_all(c, p, n);
}

/* Re-authentication on an open connection: now, or after the interval. */
static void next_reauth(struct conn *c, int first) {
    if (!g_running)
        return close_conn(c);
    double now = now_s();
    if (g_interval_s > 0) {
        c->due = now + g_interval_s * (first ? drand48() : 1.0);
        return;
    }
    c->started = now;
    start_auth(c);
}

static void login_done(struct conn *c) {
    if (g_mode == REAUTH && !c->warm) {
        c->warm = 1;
        if (++g_warmed == g_concurrency)
            open_window();
        if (g_opened < g_concurrency)
            open_conn(&g_conns[g_opened++]);
        return next_reauth(c, 1);
    }
    if (g_window) {
        if (g_done < MAX_SAMPLES)
            g_samples[g_done] = now_s() - c->started;
        g_done++;
    }
    if (g_mode == REAUTH)
        return next_reauth(c, 0);
    close_conn(c);
    if (g_running)
        open_conn(c);
}

/* Paced re-auth: start the connections whose turn has come; returns the
 * epoll timeout in ms until the next one (1000 when none waits). */
static int start_due(void) {
    double now = now_s(), next = now + 1.0;
    for (int i = 0; i < g_concurrency; i++) {
        struct conn *c = &g_conns[i];
        if (c->due == 0)
            continue;
        if (!g_running) {
            close_conn(c);
        } else if (c->due <= now) {
            c->due = 0;
            c->started = now;
            start_auth(c);
        } else if (c->due < next) {
            next = c->due;
        }
    }
    return (int)((next - now) * 1000) + 1;
}

static void fail(struct conn *c, const char *why) {
    if (g_errors < 5)
        fprintf(stderr, "login failed: %s\n", why);
    g_errors++;
    close_conn(c);
    if (g_running && g_errors < g_max_errors)
        open_conn(c);
}

static void derive(const char *salt_b64, int iterations) {
    if (iterations == g_cached_iter && strcmp(salt_b64, g_cached_salt) == 0)
        return;
    unsigned char salt[128], salted[32];
    int len = EVP_DecodeBlock(salt, (const unsigned char *)salt_b64, (int)strlen(salt_b64));
    size_t l = strlen(salt_b64);
    if (l && salt_b64[l - 1] == '=')
        len--;
    if (l > 1 && salt_b64[l - 2] == '=')
        len--;
    PKCS5_PBKDF2_HMAC(g_password, (int)strlen(g_password), salt, len, iterations, EVP_sha256(),
                      32, salted);
    hmac(salted, "Client Key", 10, g_client_key);
    SHA256(g_client_key, 32, g_stored_key);
    hmac(salted, "Server Key", 10, g_server_key);
    snprintf(g_cached_salt, sizeof g_cached_salt, "%s", salt_b64);
    g_cached_iter = iterations;
}

/* server-first "r=...,s=...,i=..." -> the client-final message in out. */
static int client_final(struct conn *c, const char *sf, size_t sflen, char *out, size_t *olen) {
    char msg[512], salt[160] = {0}, nonce[160] = {0};
    int iterations = 0;
    if (sflen >= sizeof msg)
        return -1;
    memcpy(msg, sf, sflen);
    msg[sflen] = 0;
    if (sscanf(msg, "r=%159[^,],s=%159[^,],i=%d", nonce, salt, &iterations) != 3)
        return -1;
    if (strncmp(nonce, c->nonce, strlen(c->nonce)) != 0)
        return -1;
    derive(salt, iterations);
    char without_proof[256], auth[1024];
    int wl = snprintf(without_proof, sizeof without_proof, "c=biws,r=%s", nonce);
    int al = snprintf(auth, sizeof auth, "%s,%s,%s", c->first_bare, msg, without_proof);
    unsigned char sig[32], proof[32];
    hmac(g_stored_key, auth, (size_t)al, sig);
    for (int i = 0; i < 32; i++)
        proof[i] = g_client_key[i] ^ sig[i];
    unsigned char server_sig[32];
    hmac(g_server_key, auth, (size_t)al, server_sig);
    memcpy(c->server_sig, server_sig, 32);
    char proof64[64];
    b64(proof, 32, proof64);
    *olen = (size_t)sprintf(out, "%.*s,p=%s", wl, without_proof, proof64);
    return 0;
}

/* A SaslAuthenticate v2 response body (after correlation id + tagged fields):
 * error_code, error_message, auth_bytes; returns the auth bytes' span. */
static int sasl_auth_body(const unsigned char *p, size_t n, const unsigned char **tok,
                          size_t *toklen) {
    size_t off = 0;
    unsigned v;
    size_t k = get_uvarint(p, n, &v); /* response header v1 tagged fields */
    if (!k || v)
        return -1;
    off += k;
    if (off + 2 > n)
        return -1;
    int error = (p[off] << 8) | p[off + 1];
    off += 2;
    k = get_uvarint(p + off, n - off, &v);
    if (!k || off + k + (v ? v - 1 : 0) > n)
        return -1;
    if (error) {
        /* The server's refusal, e.g. 58 SASL_AUTHENTICATION_FAILED: worth a line. */
        if (g_errors < 5)
            fprintf(stderr, "SaslAuthenticate error %d: %.*s\n", error, v ? (int)v - 1 : 0,
                    (const char *)p + off + k);
        return -1;
    }
    off += k + (v ? v - 1 : 0);
    k = get_uvarint(p + off, n - off, &v);
    if (!k || v == 0 || off + k + v - 1 > n)
        return -1;
    *tok = p + off + k;
    *toklen = v - 1;
    return 0;
}

static void on_frame(struct conn *c, const unsigned char *p, size_t n) {
    unsigned char out[BUF];
    if (n < 4)
        return fail(c, "short frame");
    const unsigned char *body = p + 4; /* past the correlation id */
    size_t blen = n - 4;
    const unsigned char *tok;
    size_t toklen;
    switch (c->step) {
    case ST_VERSIONS:
        if (blen < 2 || body[0] || body[1])
            return fail(c, "ApiVersions error");
        return start_auth(c);
    case ST_HANDSHAKE: {
        if (blen < 2 || body[0] || body[1])
            return fail(c, "SaslHandshake error");
        c->step = ST_FIRST;
        if (c->pipelined_handshake_pending) {
            c->pipelined_handshake_pending = 0;
            return;
        }
        char first[300];
        size_t len = client_first(c, first);
        send_all(c, out, authenticate_v2(out, ++c->corr, first, len));
        return;
    }
    case ST_FIRST: {
        char final[512];
        size_t flen;
        if (sasl_auth_body(body, blen, &tok, &toklen) < 0 ||
            client_final(c, (const char *)tok, toklen, final, &flen) < 0)
            return fail(c, "server-first");
        c->step = ST_FINAL;
        send_all(c, out, authenticate_v2(out, ++c->corr, final, flen));
        return;
    }
    case ST_FINAL: {
        char expect[64];
        if (sasl_auth_body(body, blen, &tok, &toklen) < 0)
            return fail(c, "server-final");
        b64((const unsigned char *)c->server_sig, 32, expect + 2);
        expect[0] = 'v';
        expect[1] = '=';
        if (toklen != strlen(expect) || memcmp(tok, expect, toklen) != 0)
            return fail(c, "server signature mismatch");
        c->step = ST_IDLE;
        return login_done(c);
    }
    default:
        return fail(c, "unexpected frame");
    }
}

static void readable(struct conn *c) {
    for (;;) {
        ssize_t r = read(c->fd, c->in + c->have, BUF - c->have);
        if (r < 0) {
            if (errno == EAGAIN)
                return;
            if (errno == EINTR)
                continue;
            return fail(c, strerror(errno));
        }
        if (r == 0)
            return fail(c, "closed by the server");
        c->have += (size_t)r;
        size_t off = 0;
        while (c->have - off >= 4) {
            uint32_t len = ((uint32_t)c->in[off] << 24) | ((uint32_t)c->in[off + 1] << 16) |
                           ((uint32_t)c->in[off + 2] << 8) | c->in[off + 3];
            if (len > BUF - 4)
                return fail(c, "frame too large");
            if (c->have - off < 4 + len)
                break;
            unsigned gen = c->gen;
            on_frame(c, c->in + off + 4, len);
            if (c->gen != gen) /* closed (and maybe reopened): the buffer was reset */
                return;
            off += 4 + len;
        }
        memmove(c->in, c->in + off, c->have - off);
        c->have -= off;
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 8 || argc > 11) {
        fprintf(stderr, "usage: %s HOST PORT USER PASSWORD CONCURRENCY SECONDS "
                        "login|reauth|pipelined [INTERVAL_MS [SERVER_PID [MAX_ERRORS]]]\n", argv[0]);
        return 2;
    }
    g_addr.sin_family = AF_INET;
    g_addr.sin_port = htons((uint16_t)atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &g_addr.sin_addr) != 1)
        return 2;
    g_user = argv[3];
    g_password = argv[4];
    g_concurrency = atoi(argv[5]);
    g_seconds = atof(argv[6]);
    g_mode = strcmp(argv[7], "reauth") == 0      ? REAUTH
             : strcmp(argv[7], "pipelined") == 0 ? PIPELINED
                                                 : LOGIN;
    g_interval_s = argc > 8 && g_mode == REAUTH ? atof(argv[8]) / 1000 : 0;
    g_server_pid = argc > 9 ? atol(argv[9]) : 0;
    if (argc > 10)
        g_max_errors = atol(argv[10]);
    /* A thousand paced connections need more descriptors than a shell's 1024. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    srand48((long)getpid());
    g_samples = malloc(sizeof(double) * MAX_SAMPLES);
    g_conns = calloc((size_t)g_concurrency, sizeof *g_conns);
    g_epoll = epoll_create1(0);
    if (!g_samples || !g_conns || g_epoll < 0)
        die("setup");
    int first = g_mode == REAUTH && g_concurrency > RAMP ? RAMP : g_concurrency;
    while (g_opened < first)
        open_conn(&g_conns[g_opened++]);
    if (g_mode != REAUTH)
        open_window();
    struct rusage ru1;
    struct epoll_event events[256];
    /* Logins in flight at the deadline finish; none start after it. */
    while (g_open > 0) {
        int timeout = g_interval_s > 0 ? start_due() : 1000;
        if (g_open == 0)
            break;
        int n = epoll_wait(g_epoll, events, 256, timeout);
        if (n < 0 && errno != EINTR)
            die("epoll_wait");
        for (int i = 0; i < n; i++) {
            struct conn *c = events[i].data.ptr;
            if (c->fd < 0)
                continue;
            if (c->step == ST_CONNECTING) {
                if (events[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
                    connected(c);
            } else {
                readable(c);
            }
        }
        if (g_running && g_window && now_s() >= g_deadline)
            g_running = 0;
    }
    if (!g_window) /* every connection failed before its first login */
        open_window();
    double elapsed = now_s() - g_start;
    double server_cpu = process_cpu_s(g_server_pid) - g_server_cpu0;
    getrusage(RUSAGE_SELF, &ru1);
    double cpu = (ru1.ru_utime.tv_sec - g_ru0.ru_utime.tv_sec) +
                 (ru1.ru_utime.tv_usec - g_ru0.ru_utime.tv_usec) / 1e6 +
                 (ru1.ru_stime.tv_sec - g_ru0.ru_stime.tv_sec) +
                 (ru1.ru_stime.tv_usec - g_ru0.ru_stime.tv_usec) / 1e6;
    long k = g_done < MAX_SAMPLES ? g_done : MAX_SAMPLES;
    qsort(g_samples, (size_t)k, sizeof(double), cmp);
    double p50 = k ? g_samples[k / 2] : 0, p99 = k ? g_samples[(long)(k * 0.99)] : 0;
    double wait = runqueue_wait_s() - g_wait0;
    printf("logins=%ld seconds=%.4f rate=%.1f p50_us=%.0f p99_us=%.0f client_cpu_us=%.0f "
           "server_cpu_us=%.0f errors=%ld client_wait_us=%.0f\n",
           g_done, elapsed, g_done / elapsed, p50 * 1e6, p99 * 1e6, cpu * 1e6, server_cpu * 1e6,
           g_errors, wait * 1e6);
    return g_errors ? 1 : 0;
}
