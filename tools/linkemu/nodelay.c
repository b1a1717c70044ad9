/*
 * nodelay.so: an LD_PRELOAD shim that turns Nagle's algorithm off
 * (TCP_NODELAY) on every TCP socket a program accepts or connects, without
 * changing the program. The link lab runs Debian's unbound with and without
 * it: as shipped, unbound keeps Nagle on for its DoT connections, so after
 * one answer it holds the next small one until the client's ACK arrives,
 * which costs round trips on a slow link. Real resolvers differ; the
 * benchmarks measure against both.
 *
 * How: accept, accept4 and connect are wrapped. The real functions are
 * looked up once (RTLD_NEXT) when the library loads, or on first use if
 * something calls them earlier. A descriptor gets TCP_NODELAY only when the
 * kernel says it is a TCP socket (SO_PROTOCOL), so Unix and UDP sockets are
 * left alone. errno is what the real call left, whatever the shim did.
 *
 * Build: cc -shared -fPIC -O2 -Wall -o nodelay.so nodelay.c -ldl
 * Use:   LD_PRELOAD=/path/to/nodelay.so unbound -d -c unbound.conf
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

typedef int (*accept_fn)(int, struct sockaddr *, socklen_t *);
typedef int (*accept4_fn)(int, struct sockaddr *, socklen_t *, int);
typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);

static accept_fn real_accept;
static accept4_fn real_accept4;
static connect_fn real_connect;

static void resolve(void) {
  if (!real_accept) real_accept = (accept_fn)dlsym(RTLD_NEXT, "accept");
  if (!real_accept4) real_accept4 = (accept4_fn)dlsym(RTLD_NEXT, "accept4");
  if (!real_connect) real_connect = (connect_fn)dlsym(RTLD_NEXT, "connect");
}

__attribute__((constructor)) static void on_load(void) { resolve(); }

static void no_delay(int fd) {
  int saved = errno, proto = 0, one = 1;
  socklen_t len = sizeof proto;
  if (fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) == 0 && proto == IPPROTO_TCP)
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  errno = saved;
}

int accept(int fd, struct sockaddr *addr, socklen_t *len) {
  if (!real_accept) resolve();
  int c = real_accept(fd, addr, len);
  no_delay(c);
  return c;
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
  if (!real_accept4) resolve();
  int c = real_accept4(fd, addr, len, flags);
  no_delay(c);
  return c;
}

/* Set before connecting: the option holds from the first segment, and a non-blocking connect needs no second look. */
int connect(int fd, const struct sockaddr *addr, socklen_t len) {
  if (!real_connect) resolve();
  no_delay(fd);
  return real_connect(fd, addr, len);
}
