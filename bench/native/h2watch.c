// bench/native/h2watch owns the bench's native watch client: many watch streams over a few
// TLS HTTP/2 connections (nghttp2 + OpenSSL, one thread, epoll), reading from each event only
// its type, its object's resourceVersion and the writer's send time, and recording delivery
// latency in the same 1 % logarithmic buckets as bench/support/latency.ts.
//
// Why it exists: the fan-out scenario receives about a gigabyte a second on the machine the
// server runs on. Node's HTTP/2 client costs about 1.7 cores per GB/s there, more than the
// server under test, so with it the scenario measured the clients' queueing rather than the
// server. This client costs a fraction of that (see the README), leaving the machine to the
// server, as watchers on other machines would.
//
// Driven by bench/load/native-watch.ts over stdin/stdout, one line per message:
//   out: {"type":"ready",...} once every stream has its response headers or failed
//   in:  warm <wall-clock ms>              events sent before it are counted, not measured
//   in:  acks <rv> <ms> <rv> <ms> ...      the writer's acknowledgement times
//   in:  finish <expected> <drain ms>      wait for that many deliveries (or the time), report
//   out: {"type":"result",...} then exit
// Flags: --host --port --ca --cert --key --path (with {w} for the watcher's index) --watchers
// --first-index --streams-per-session.

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  char *buf;
  size_t len, cap;
} bytes_t;

static void bytes_append(bytes_t *b, const uint8_t *p, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    b->buf = realloc(b->buf, cap);
    if (!b->buf) abort();
    b->cap = cap;
  }
  memcpy(b->buf + b->len, p, n);
  b->len += n;
}

// ---- latency histogram, bucket for bucket the same as bench/support/latency.ts ----

#define BUCKETS 8192
typedef struct {
  uint64_t counts[BUCKETS];
  uint64_t n;
  double sum, max;
} histogram_t;

static const double SMALLEST_MS = 0.001;

static void record(histogram_t *h, double ms) {
  double v = ms > SMALLEST_MS ? ms : SMALLEST_MS;
  long b = (long)floor(log(v / SMALLEST_MS) / log(1.01));
  if (b < 0) b = 0;
  if (b >= BUCKETS) b = BUCKETS - 1;
  h->counts[b]++;
  h->n++;
  h->sum += ms;
  if (ms > h->max) h->max = ms;
}

static void print_histogram(FILE *out, const histogram_t *h) {
  fprintf(out, "{\"buckets\":{");
  int first = 1;
  for (int b = 0; b < BUCKETS; b++) {
    if (!h->counts[b]) continue;
    fprintf(out, "%s\"%d\":%llu", first ? "" : ",", b, (unsigned long long)h->counts[b]);
    first = 0;
  }
  fprintf(out, "},\"sum\":%.6f,\"max\":%.6f}", h->sum, h->max);
}

// ---- acknowledgement times by resourceVersion, with receipts that came before their ack ----

typedef struct {
  int64_t rv; // 0: empty slot
  double acked_at; // NAN until the ack arrives
  double *waiting;
  size_t nwaiting, capwaiting;
} ack_slot_t;

static ack_slot_t *acks;
static size_t acks_cap = 0, acks_used = 0;

static ack_slot_t *ack_slot(int64_t rv);

static void acks_grow(void) {
  ack_slot_t *old = acks;
  size_t old_cap = acks_cap;
  acks_cap = acks_cap ? acks_cap * 2 : 1 << 16;
  acks = calloc(acks_cap, sizeof *acks);
  if (!acks) abort();
  acks_used = 0;
  for (size_t i = 0; i < old_cap; i++) {
    if (!old[i].rv) continue;
    ack_slot_t *s = ack_slot(old[i].rv);
    *s = old[i];
  }
  free(old);
}

static ack_slot_t *ack_slot(int64_t rv) {
  if ((acks_used + 1) * 2 > acks_cap) acks_grow();
  size_t mask = acks_cap - 1;
  for (size_t i = ((uint64_t)rv * 0x9E3779B97F4A7C15ull) >> 20 & mask;; i = (i + 1) & mask) {
    if (acks[i].rv == rv) return &acks[i];
    if (!acks[i].rv) {
      acks[i].rv = rv;
      acks[i].acked_at = NAN;
      acks_used++;
      return &acks[i];
    }
  }
}

// ---- state ----

typedef struct conn_s conn_t;

typedef struct {
  int32_t id;
  conn_t *conn;
  bytes_t pending; // the start of an event line split across chunks
  char *path;
  int status, settled, closed;
} stream_t;

struct conn_s {
  int fd;
  SSL *ssl;
  nghttp2_session *h2;
  int polling_out, dead;
  stream_t *streams;
  int nstreams;
};

enum { T_ADDED, T_MODIFIED, T_DELETED, T_BOOKMARK, T_ERROR, T_UNPARSED, T_COUNT };
static const char *TYPE_NAMES[T_COUNT] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "UNPARSED"};

static struct {
  const char *host, *ca, *cert, *key, *path;
  int port, watchers, first_index, per_session;
} opt = {.host = "127.0.0.1", .per_session = 100};

static histogram_t from_ack, from_send;
static uint64_t events[T_COUNT];
static uint64_t delivered = 0, expected = 0;
static double measure_from = 0;
static int established = 0, failed = 0, settled_count = 0, closed_early = 0;
static int finishing = 0;
static double finish_deadline = 0;
static char first_error[512];
static int epfd;

static void fail_note(const char *fmt, ...) {
  if (first_error[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(first_error, sizeof first_error, fmt, ap);
  va_end(ap);
}

static double wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double cpu_ms(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

// ---- event parsing: the same reads as the Node client's, in place ----

static const char TYPE_KEY[] = "{\"type\":\"";
static const char RV_KEY[] = "\"resourceVersion\":\"";
static const char SENT_AT_KEY[] = "\"bench/sent-at\":\"";

/** The number in the quoted value after `key` (digits, at most one point), or -1. */
static double read_number(const char *p, size_t n, const char *key, size_t keylen) {
  const char *at = memmem(p, n, key, keylen);
  if (!at) return -1;
  const char *i = at + keylen, *end = p + n;
  double whole = 0;
  int digits = 0;
  for (; i < end && *i >= '0' && *i <= '9'; i++, digits++) whole = whole * 10 + (*i - '0');
  if (!digits) return -1;
  if (i < end && *i == '.') {
    double scale = 1;
    for (i++; i < end && *i >= '0' && *i <= '9'; i++) {
      scale /= 10;
      whole += (*i - '0') * scale;
    }
  }
  return i < end && *i == '"' ? whole : -1;
}

static int event_type(const char *p, size_t n) {
  const char *from = NULL;
  if (n >= sizeof TYPE_KEY - 1 && memcmp(p, TYPE_KEY, sizeof TYPE_KEY - 1) == 0) from = p + sizeof TYPE_KEY - 1;
  else {
    const char *at = memmem(p, n, TYPE_KEY + 1, sizeof TYPE_KEY - 2);
    if (at) from = at + sizeof TYPE_KEY - 2;
  }
  if (!from) return T_UNPARSED;
  size_t left = (size_t)(p + n - from);
  for (int t = 0; t < T_UNPARSED; t++) {
    size_t len = strlen(TYPE_NAMES[t]);
    if (left > len && memcmp(from, TYPE_NAMES[t], len) == 0 && from[len] == '"') return t;
  }
  return T_UNPARSED;
}

static void on_event(const char *p, size_t n, double now) {
  int type = event_type(p, n);
  events[type]++;
  if (type != T_ADDED && type != T_MODIFIED) return;
  double sent_at = read_number(p, n, SENT_AT_KEY, sizeof SENT_AT_KEY - 1);
  if (sent_at < 0) return;
  delivered++;
  if (sent_at < measure_from) return;
  record(&from_send, now - sent_at > 0 ? now - sent_at : 0);
  double rv = read_number(p, n, RV_KEY, sizeof RV_KEY - 1);
  if (rv <= 0) return;
  ack_slot_t *s = ack_slot((int64_t)rv);
  if (!isnan(s->acked_at)) {
    record(&from_ack, now - s->acked_at > 0 ? now - s->acked_at : 0);
    return;
  }
  if (s->nwaiting == s->capwaiting) {
    s->capwaiting = s->capwaiting ? s->capwaiting * 2 : 64;
    s->waiting = realloc(s->waiting, s->capwaiting * sizeof *s->waiting);
    if (!s->waiting) abort();
  }
  s->waiting[s->nwaiting++] = now;
}

static void on_ack(int64_t rv, double at) {
  ack_slot_t *s = ack_slot(rv);
  s->acked_at = at;
  for (size_t i = 0; i < s->nwaiting; i++) record(&from_ack, s->waiting[i] - at > 0 ? s->waiting[i] - at : 0);
  free(s->waiting);
  s->waiting = NULL;
  s->nwaiting = s->capwaiting = 0;
}

static void on_stream_bytes(stream_t *s, const uint8_t *data, size_t len) {
  double now = wall_ms();
  const char *p = (const char *)data;
  size_t start = 0;
  if (s->pending.len) {
    const char *nl = memchr(p, '\n', len);
    if (!nl) {
      bytes_append(&s->pending, data, len);
      return;
    }
    bytes_append(&s->pending, data, (size_t)(nl - p));
    on_event(s->pending.buf, s->pending.len, now);
    s->pending.len = 0;
    start = (size_t)(nl - p) + 1;
  }
  for (;;) {
    const char *nl = memchr(p + start, '\n', len - start);
    if (!nl) break;
    on_event(p + start, (size_t)(nl - p) - start, now);
    start = (size_t)(nl - p) + 1;
  }
  if (start < len) bytes_append(&s->pending, data + start, len - start);
}

// ---- HTTP/2 ----

static void settle(stream_t *s, int ok, const char *why) {
  if (s->settled) return;
  s->settled = 1;
  settled_count++;
  if (ok) established++;
  else {
    failed++;
    fail_note("%s", why);
  }
}

static ssize_t send_cb(nghttp2_session *h2, const uint8_t *data, size_t len, int flags, void *user) {
  (void)h2;
  (void)flags;
  conn_t *c = user;
  ERR_clear_error();
  int n = SSL_write(c->ssl, data, (int)len);
  if (n > 0) return n;
  int err = SSL_get_error(c->ssl, n);
  if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
    if (!c->polling_out) {
      struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
      epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
      c->polling_out = 1;
    }
    return NGHTTP2_ERR_WOULDBLOCK;
  }
  return NGHTTP2_ERR_CALLBACK_FAILURE;
}

static int on_header(nghttp2_session *h2, const nghttp2_frame *frame, const uint8_t *name, size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *user) {
  (void)flags;
  (void)user;
  (void)valuelen;
  stream_t *s = nghttp2_session_get_stream_user_data(h2, frame->hd.stream_id);
  if (s && namelen == 7 && memcmp(name, ":status", 7) == 0) s->status = atoi((const char *)value);
  return 0;
}

static int on_frame_recv(nghttp2_session *h2, const nghttp2_frame *frame, void *user) {
  (void)user;
  if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_RESPONSE) return 0;
  stream_t *s = nghttp2_session_get_stream_user_data(h2, frame->hd.stream_id);
  if (!s) return 0;
  char why[512];
  snprintf(why, sizeof why, "watch %s answered %d", s->path, s->status);
  settle(s, s->status == 200, why);
  return 0;
}

static int on_data(nghttp2_session *h2, uint8_t flags, int32_t stream_id, const uint8_t *data, size_t len, void *user) {
  (void)flags;
  (void)user;
  stream_t *s = nghttp2_session_get_stream_user_data(h2, stream_id);
  if (s) on_stream_bytes(s, data, len);
  return 0;
}

static void stream_ended(stream_t *s, const char *why) {
  if (s->closed) return;
  s->closed = 1;
  settle(s, 0, why);
  if (!finishing) closed_early++;
}

static int on_stream_close(nghttp2_session *h2, int32_t stream_id, uint32_t code, void *user) {
  (void)user;
  stream_t *s = nghttp2_session_get_stream_user_data(h2, stream_id);
  if (!s) return 0;
  char why[512];
  snprintf(why, sizeof why, "watch %s ended before its headers (HTTP/2 error %u)", s->path, code);
  stream_ended(s, why);
  return 0;
}

static void conn_dead(conn_t *c, const char *why) {
  if (c->dead) return;
  c->dead = 1;
  if (!finishing) fail_note("connection: %s", why);
  epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
  for (int i = 0; i < c->nstreams; i++) stream_ended(&c->streams[i], why);
}

static void conn_flush(conn_t *c) {
  if (c->dead) return;
  if (nghttp2_session_send(c->h2) != 0) conn_dead(c, "HTTP/2 send failed");
  else if (c->polling_out && !nghttp2_session_want_write(c->h2)) {
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->polling_out = 0;
  }
}

static uint8_t readbuf[256 * 1024];

static void conn_read(conn_t *c) {
  while (!c->dead) {
    ERR_clear_error();
    int n = SSL_read(c->ssl, readbuf, sizeof readbuf);
    if (n <= 0) {
      int err = SSL_get_error(c->ssl, n);
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) break;
      conn_dead(c, err == SSL_ERROR_ZERO_RETURN ? "closed by the server" : "TLS read failed");
      return;
    }
    if (nghttp2_session_mem_recv(c->h2, readbuf, (size_t)n) < 0) {
      conn_dead(c, "HTTP/2 protocol error");
      return;
    }
  }
  conn_flush(c);
}

static SSL_CTX *tls_context(void) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx || SSL_CTX_load_verify_locations(ctx, opt.ca, NULL) != 1) goto fail;
  if (opt.cert && (SSL_CTX_use_certificate_chain_file(ctx, opt.cert) != 1 || SSL_CTX_use_PrivateKey_file(ctx, opt.key, SSL_FILETYPE_PEM) != 1)) goto fail;
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  // TLS 1.3 suites in the order Go's client offers them on AES hardware (client-go, kubectl):
  // the server honours the client's order, so the bench pays for the cipher real clients get.
  if (SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256") != 1) goto fail;
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  static const unsigned char alpn[] = "\x02h2";
  SSL_CTX_set_alpn_protos(ctx, alpn, sizeof alpn - 1);
  return ctx;
fail:
  ERR_print_errors_fp(stderr);
  exit(1);
}

static int conn_open(conn_t *c, SSL_CTX *ctx) {
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opt.port)};
  if (inet_pton(AF_INET, opt.host, &addr.sin_addr) != 1) {
    fail_note("--host must be an IPv4 address: %s", opt.host);
    return -1;
  }
  c->fd = socket(AF_INET, SOCK_STREAM, 0);
  if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    fail_note("connect %s:%d: %s", opt.host, opt.port, strerror(errno));
    return -1;
  }
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  c->ssl = SSL_new(ctx);
  SSL_set_fd(c->ssl, c->fd);
  X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), opt.host);
  if (SSL_connect(c->ssl) != 1) {
    fail_note("TLS handshake with %s:%d failed: %s", opt.host, opt.port, ERR_reason_error_string(ERR_peek_last_error()));
    return -1;
  }
  const unsigned char *proto;
  unsigned int protolen;
  SSL_get0_alpn_selected(c->ssl, &proto, &protolen);
  if (protolen != 2 || memcmp(proto, "h2", 2) != 0) {
    fail_note("the server did not negotiate h2");
    return -1;
  }
  fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);

  nghttp2_session_callbacks *cb;
  nghttp2_session_callbacks_new(&cb);
  nghttp2_session_callbacks_set_send_callback(cb, send_cb);
  nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
  nghttp2_session_client_new(&c->h2, cb, c);
  nghttp2_session_callbacks_del(cb);
  // Windows as Go's HTTP/2 client (client-go) sets them: 4 MiB per stream, 1 GiB per connection.
  nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0}, {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 4 << 20}};
  nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, settings, 2);
  nghttp2_session_set_local_window_size(c->h2, NGHTTP2_FLAG_NONE, 0, 1 << 30);

  char authority[64];
  snprintf(authority, sizeof authority, "%s:%d", opt.host, opt.port);
  for (int i = 0; i < c->nstreams; i++) {
    stream_t *s = &c->streams[i];
    s->conn = c;
    char path[2048];
    // s->id holds the watcher's index until the request has a stream id.
    const char *mark = strstr(opt.path, "{w}");
    if (mark) snprintf(path, sizeof path, "%.*s%d%s", (int)(mark - opt.path), opt.path, s->id, mark + 3);
    else snprintf(path, sizeof path, "%s", opt.path);
    s->path = strdup(path);
    nghttp2_nv hdrs[] = {
        {(uint8_t *)":method", (uint8_t *)"GET", 7, 3, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":scheme", (uint8_t *)"https", 7, 5, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":authority", (uint8_t *)authority, 10, strlen(authority), NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)":path", (uint8_t *)path, 5, strlen(path), NGHTTP2_NV_FLAG_NONE},
    };
    int32_t id = nghttp2_submit_request(c->h2, NULL, hdrs, 4, NULL, s);
    if (id < 0) {
      settle(s, 0, nghttp2_strerror(id));
      s->closed = 1;
    }
    s->id = id;
  }
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
  epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
  conn_flush(c);
  return 0;
}

// ---- control over stdin/stdout ----

static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(out, "\\%c", ch);
    else if (ch < 0x20) fprintf(out, "\\u%04x", ch);
    else fputc(ch, out);
  }
  fputc('"', out);
}

static void print_ready(void) {
  printf("{\"type\":\"ready\",\"established\":%d,\"failed\":%d", established, failed);
  if (first_error[0]) {
    printf(",\"firstError\":");
    json_string(stdout, first_error);
  }
  printf("}\n");
  fflush(stdout);
}

static double cpu_at_ready, mono_at_ready;

static void print_result_and_exit(void) {
  double cpu = cpu_ms() - cpu_at_ready, elapsed = mono_ms() - mono_at_ready;
  printf("{\"type\":\"result\",\"established\":%d,\"failedToEstablish\":%d", established, failed);
  if (first_error[0]) {
    printf(",\"firstError\":");
    json_string(stdout, first_error);
  }
  printf(",\"events\":{");
  int first = 1;
  for (int t = 0; t < T_COUNT; t++) {
    if (!events[t]) continue;
    printf("%s\"%s\":%llu", first ? "" : ",", TYPE_NAMES[t], (unsigned long long)events[t]);
    first = 0;
  }
  printf("},\"closedEarly\":%d,\"fromAckHistogram\":", closed_early);
  print_histogram(stdout, &from_ack);
  printf(",\"fromSendHistogram\":");
  print_histogram(stdout, &from_send);
  printf(",\"expected\":%llu,\"delivered\":%llu,\"generatorCpu\":%.4f}\n", (unsigned long long)expected, (unsigned long long)delivered, elapsed > 0 ? cpu / elapsed : 0);
  fflush(stdout);
  exit(0);
}

static bytes_t control;

static void on_control_line(char *line) {
  if (strncmp(line, "warm ", 5) == 0) measure_from = strtod(line + 5, NULL);
  else if (strncmp(line, "acks ", 5) == 0) {
    char *p = line + 5, *end;
    for (;;) {
      long long rv = strtoll(p, &end, 10);
      if (end == p) break;
      p = end;
      double at = strtod(p, &end);
      if (end == p) break;
      p = end;
      on_ack(rv, at);
    }
  } else if (strncmp(line, "finish ", 7) == 0) {
    char *end;
    expected = strtoull(line + 7, &end, 10);
    finish_deadline = mono_ms() + strtod(end, NULL);
    finishing = 1;
  } else {
    fprintf(stderr, "h2watch: unknown control line: %s\n", line);
  }
}

static void read_control(void) {
  uint8_t buf[65536];
  for (;;) {
    ssize_t n = read(0, buf, sizeof buf);
    if (n == 0) {
      // The generator went away: a finish already asked for still reports; otherwise stop.
      if (!finishing) exit(0);
      epoll_ctl(epfd, EPOLL_CTL_DEL, 0, NULL);
      return;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return;
      exit(1);
    }
    bytes_append(&control, buf, (size_t)n);
    size_t start = 0;
    for (;;) {
      char *nl = memchr(control.buf + start, '\n', control.len - start);
      if (!nl) break;
      *nl = 0;
      on_control_line(control.buf + start);
      start = (size_t)(nl - control.buf) + 1;
    }
    memmove(control.buf, control.buf + start, control.len - start);
    control.len -= start;
  }
}

static void usage(int code) {
  fprintf(code ? stderr : stdout,
          "usage: h2watch --port N --ca FILE [--cert FILE --key FILE] --path P --watchers N [flags]\n"
          "  --host IP                  server address (IPv4; default 127.0.0.1)\n"
          "  --port N                   server port\n"
          "  --ca FILE                  CA bundle that signs the server's certificate (PEM)\n"
          "  --cert FILE, --key FILE    client certificate and key (PEM)\n"
          "  --path P                   watch path; {w} becomes the watcher's index\n"
          "  --watchers N               number of watch streams\n"
          "  --first-index N            index of the first watcher (default 0)\n"
          "  --streams-per-session N    HTTP/2 streams per connection (default 100)\n"
          "Control lines on stdin and results on stdout are described in the source header.\n");
  exit(code);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help")) usage(0);
    if (i + 1 >= argc) usage(2);
    const char *v = argv[++i];
    if (!strcmp(a, "--host")) opt.host = v;
    else if (!strcmp(a, "--port")) opt.port = atoi(v);
    else if (!strcmp(a, "--ca")) opt.ca = v;
    else if (!strcmp(a, "--cert")) opt.cert = v;
    else if (!strcmp(a, "--key")) opt.key = v;
    else if (!strcmp(a, "--path")) opt.path = v;
    else if (!strcmp(a, "--watchers")) opt.watchers = atoi(v);
    else if (!strcmp(a, "--first-index")) opt.first_index = atoi(v);
    else if (!strcmp(a, "--streams-per-session")) opt.per_session = atoi(v);
    else usage(2);
  }
  if (opt.port <= 0 || !opt.ca || !opt.path || opt.watchers <= 0 || opt.per_session <= 0 || (!opt.cert != !opt.key)) usage(2);

  epfd = epoll_create1(0);
  SSL_CTX *ctx = tls_context();
  int nconns = (opt.watchers + opt.per_session - 1) / opt.per_session;
  conn_t *conns = calloc((size_t)nconns, sizeof *conns);
  stream_t *streams = calloc((size_t)opt.watchers, sizeof *streams);
  for (int i = 0; i < opt.watchers; i++) streams[i].id = opt.first_index + i;
  for (int c = 0; c < nconns; c++) {
    conns[c].streams = streams + c * opt.per_session;
    conns[c].nstreams = c == nconns - 1 ? opt.watchers - c * opt.per_session : opt.per_session;
    if (conn_open(&conns[c], ctx) != 0) {
      for (int i = 0; i < conns[c].nstreams; i++) {
        settle(&conns[c].streams[i], 0, first_error);
        conns[c].streams[i].closed = 1;
      }
      conns[c].dead = 1;
    }
  }

  fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
  static int control_tag;
  struct epoll_event cev = {.events = EPOLLIN, .data.ptr = &control_tag};
  epoll_ctl(epfd, EPOLL_CTL_ADD, 0, &cev);

  const double open_deadline = mono_ms() + 30000;
  int ready = 0;
  struct epoll_event evs[64];
  for (;;) {
    if (!ready && settled_count >= opt.watchers) {
      ready = 1;
      cpu_at_ready = cpu_ms();
      mono_at_ready = mono_ms();
      print_ready();
    }
    if (!ready && mono_ms() > open_deadline) {
      for (int i = 0; i < opt.watchers; i++) settle(&streams[i], 0, "no response headers within 30 s");
      continue;
    }
    if (finishing && (delivered >= expected || mono_ms() >= finish_deadline)) print_result_and_exit();
    int timeout = 100;
    if (finishing) {
      double left = finish_deadline - mono_ms();
      timeout = left < 0 ? 0 : left < 100 ? (int)left + 1 : 100;
    }
    int n = epoll_wait(epfd, evs, 64, timeout);
    for (int i = 0; i < n; i++) {
      if (evs[i].data.ptr == &control_tag) {
        read_control();
        continue;
      }
      conn_t *c = evs[i].data.ptr;
      if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) conn_read(c);
      if (evs[i].events & EPOLLOUT) conn_flush(c);
    }
  }
}
