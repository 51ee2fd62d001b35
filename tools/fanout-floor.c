// The most event bytes this machine can move to many loopback subscribers (README "Live
// data"): one thread writes ready-made bytes to N TCP connections in turn, one drains them
// all with epoll and discards them. No HTTP, no parsing, no serialization, no trading: a
// ceiling for any stream server here, against which `hanson-bench --scenario stream_fanout`
// is read.
//
//   gcc -O2 -pthread -o /tmp/fanout-floor tools/fanout-floor.c
//   /tmp/fanout-floor CONNECTIONS SECONDS BYTES_PER_WRITE    e.g. 1000 5 23520
//
// Prints one JSON line: bytes/s received, and that many 980-byte events (a trade.created).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int n, secs, batch_bytes;
static int *wfd, *rfd;
static volatile int stop;
static long long received;

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static void *writer(void *arg) {
  char *buf = malloc(batch_bytes);
  memset(buf, 'x', batch_bytes);
  while (!stop)
    for (int i = 0; i < n && !stop; i++) {
      int off = 0;
      while (off < batch_bytes && !stop) { ssize_t w = write(wfd[i], buf + off, batch_bytes - off); if (w <= 0) return 0; off += w; }
    }
  return 0;
}

static void *reader(void *arg) {
  int ep = epoll_create1(0);
  for (int i = 0; i < n; i++) { struct epoll_event e = {.events = EPOLLIN, .data.fd = rfd[i]}; epoll_ctl(ep, EPOLL_CTL_ADD, rfd[i], &e); }
  char buf[65536];
  struct epoll_event ev[256];
  while (!stop) {
    int k = epoll_wait(ep, ev, 256, 100);
    for (int j = 0; j < k; j++) { ssize_t r = read(ev[j].data.fd, buf, sizeof buf); if (r > 0) __atomic_add_fetch(&received, r, __ATOMIC_RELAXED); }
  }
  return 0;
}

int main(int argc, char **argv) {
  n = atoi(argv[1]); secs = atoi(argv[2]); batch_bytes = atoi(argv[3]);
  wfd = calloc(n, sizeof *wfd); rfd = calloc(n, sizeof *rfd);
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  bind(l, (void *)&a, sizeof a); listen(l, 4096);
  socklen_t al = sizeof a; getsockname(l, (void *)&a, &al);
  for (int i = 0; i < n; i++) {
    rfd[i] = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(rfd[i], (void *)&a, sizeof a)) { perror("connect"); return 1; }
    wfd[i] = accept(l, 0, 0);
    int one = 1; setsockopt(wfd[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  pthread_t w, r;
  pthread_create(&r, 0, reader, 0); pthread_create(&w, 0, writer, 0);
  double t0 = now(); long long r0 = received;
  sleep(1); t0 = now(); r0 = received;
  sleep(secs);
  double t1 = now(); long long r1 = received;
  stop = 1;
  double rate = (r1 - r0) / (t1 - t0);
  printf("{\"connections\":%d,\"write_bytes\":%d,\"bytes_per_s\":%.0f,\"events_980b_per_s\":%.0f}\n", n, batch_bytes, rate, rate / 980);
  fflush(stdout); _exit(0);
}
