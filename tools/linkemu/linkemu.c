/*
 * linkemu: a slow, lossy, rate-limited link between two interfaces, in user
 * space (this kernel has no netem). It runs in a namespace that holds one end
 * of two veth pairs and carries every Ethernet frame from one to the other.
 *
 *   linkemu offload IF...
 *       TSO, GSO, GRO, checksum offload and scatter-gather off, so each frame
 *       on the wire is one MTU-sized segment with its checksum filled in (a
 *       loss then hits one segment, and a frame copied by a packet socket is
 *       complete). Run it on every interface of the path.
 *
 *   linkemu run IF_A IF_B DELAY_MS JITTER_MS LOSS_PCT RATE_KBIT [MAX_S] [SEED] [LOGFILE]
 *       Every setting applies to each direction on its own: a round trip is
 *       2 x DELAY, a request and its answer are lost with about 2 x LOSS.
 *       RATE_KBIT 0 means no limit. MAX_S (default 1800) bounds the run;
 *       SIGTERM or SIGINT end it sooner. SEED (default 1) makes loss and
 *       jitter repeatable. "linkemu: ..." on stderr says the sockets are
 *       open: frames cross from then on.
 *
 * How it works
 *
 * - One AF_PACKET raw socket per interface, bound to it, promiscuous, with
 *   outgoing frames ignored (so what we send on B is not read back as
 *   arriving on B). A frame is received straight into its slot in the
 *   direction's ring and sent from there: one copy in, one copy out.
 *
 * - Each direction is a lane with a FIFO ring of frames and their departure
 *   times. Frames never overtake each other (real links keep order, and
 *   reordering would make TCP's figures mean something else), so each
 *   frame's departure is clamped to be no earlier than the previous one's.
 *   Departure times in a lane are therefore monotonic and the ring's head is
 *   always the next frame due: no heap or timer wheel is needed, and
 *   scheduling is O(1) per frame.
 *
 * - Rate is a serializer clock per lane (the time the wire is free again):
 *   a frame starts when it arrives or when the wire frees, whichever is
 *   later, and occupies it for len x 8 / rate (len is the Ethernet frame
 *   without preamble or FCS). Propagation delay and jitter (uniform in
 *   [-J, +J], never below zero) are added after serialization.
 *
 * - Loss is decided on arrival, for IP frames only (losing ARP would make
 *   a whole lookup stall for reasons no real link has), from a seeded
 *   splitmix64 generator. A lane holds at most LIMIT frames (netem's
 *   default queue length); a frame arriving at a full lane is dropped.
 *
 * - One thread waits in ppoll() until a frame arrives or the ring's head is
 *   due, with nanosecond timeouts and 1 ns timer slack. SIGTERM/SIGINT are
 *   blocked except inside ppoll, so a stop is never missed between a check
 *   and the wait.
 *
 * - LOGFILE gets one line per frame, stamped when it arrived:
 *     t_ms dir verdict len proto src:port>dst:port flags seq ack paylen
 *   after a "# t0_realtime SEC.NSEC" header (the wall clock at t_ms 0).
 *   dir 0 is IF_A to IF_B. verdict: fwd, LOSS, FULL (lane full) or BIG
 *   (larger than a slot: offload was left on). flags as tcpdump writes
 *   them (S F P R U, '.' for ACK); '-' fields for UDP. The log is buffered
 *   and written when the link has been quiet for IDLE_FLUSH_MS, so writing
 *   it stays off the packet path while traffic flows.
 *
 * Build: cc -O2 -Wall -o linkemu linkemu.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
  SLOTS = 1024,        /* ring size per lane (a power of two) */
  LIMIT = 1000,        /* frames a lane holds at most */
  SLOT_BYTES = 2048,   /* an MTU-1500 frame with room to spare */
  BATCH = 64,          /* frames read from one socket before looking at the other */
  IDLE_FLUSH_MS = 100, /* quiet time after which the log is written out */
};

struct frame {
  uint64_t due; /* monotonic ns */
  uint32_t len;
  unsigned char data[SLOT_BYTES];
};

struct lane {
  int in, out; /* read from in, send on out */
  struct frame *ring;
  uint32_t head, count;
  uint64_t wire_free; /* serializer: when the last accepted frame is fully sent */
  uint64_t last_due;  /* the newest frame's departure: no frame leaves before it */
  uint64_t n_in, n_fwd, n_lost, n_full, n_big, n_txerr;
};

static uint64_t delay_ns, jitter_ns;
static double loss_p, rate_bps;
static uint64_t rng_state;
static FILE *logf;
static uint64_t t0;
static volatile sig_atomic_t stopping;

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* splitmix64: small, fast, and good enough for loss and jitter draws. */
static double uniform01(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

static void on_stop(int sig) {
  (void)sig;
  stopping = 1;
}

/* ---- offload ------------------------------------------------------------ */

static int ethtool_value(int fd, const char *ifn, uint32_t cmd, uint32_t *value) {
  struct ethtool_value ev = {.cmd = cmd, .data = value ? *value : 0};
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifn);
  ifr.ifr_data = (void *)&ev;
  if (ioctl(fd, SIOCETHTOOL, &ifr) < 0) return -1;
  if (value) *value = ev.data;
  return 0;
}

static int offload(int n, char **ifs) {
  /* GRO/GSO/TSO first: they depend on checksum offload and SG, not the other way round. */
  static const struct { uint32_t set, get; const char *name; } features[] = {
    {ETHTOOL_SGRO, ETHTOOL_GGRO, "gro"},       {ETHTOOL_SGSO, ETHTOOL_GGSO, "gso"},
    {ETHTOOL_STSO, ETHTOOL_GTSO, "tso"},       {ETHTOOL_STXCSUM, ETHTOOL_GTXCSUM, "tx-csum"},
    {ETHTOOL_SSG, ETHTOOL_GSG, "sg"},
  };
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) { perror("linkemu: socket"); return 1; }
  int failed = 0;
  for (int i = 0; i < n; i++) {
    if (!if_nametoindex(ifs[i])) { fprintf(stderr, "linkemu: no interface %s\n", ifs[i]); failed = 1; continue; }
    printf("%s:", ifs[i]);
    for (size_t f = 0; f < sizeof features / sizeof features[0]; f++) {
      uint32_t off = 0, now = 1;
      ethtool_value(fd, ifs[i], features[f].set, &off); /* refused when already off on some drivers: read back below */
      if (ethtool_value(fd, ifs[i], features[f].get, &now) < 0) now = 1;
      printf(" %s=%s", features[f].name, now ? "on" : "off");
      /* Segmentation left on means frames bigger than a slot: the link would drop them. */
      if (now && f < 3) failed = 1;
    }
    printf("\n");
  }
  close(fd);
  if (failed) fprintf(stderr, "linkemu: offload could not be turned off everywhere (see above)\n");
  return failed;
}

/* ---- sockets ------------------------------------------------------------ */

static int open_port(const char *ifn) {
  int idx = (int)if_nametoindex(ifn);
  if (!idx) { fprintf(stderr, "linkemu: no interface %s\n", ifn); exit(1); }
  /* Protocol 0 until bound: no frame from another interface slips in before bind. */
  int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) { perror("linkemu: packet socket (root needed)"); exit(1); }
  int one = 1, big = 4 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
  setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big);
  setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one); /* also checked per frame below */
  setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
  struct packet_mreq mr = {.mr_ifindex = idx, .mr_type = PACKET_MR_PROMISC};
  if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) < 0) { perror("linkemu: promiscuous"); exit(1); }
  struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = idx};
  if (bind(fd, (struct sockaddr *)&sll, sizeof sll) < 0) { perror("linkemu: bind"); exit(1); }
  return fd;
}

/* ---- the frame log ------------------------------------------------------ */

static int describe_l4(char *out, size_t cap, int proto, const unsigned char *l4, size_t l4len, const char *s, const char *d) {
  if (proto == IPPROTO_TCP && l4len >= sizeof(struct tcphdr)) {
    const struct tcphdr *t = (const void *)l4;
    char fl[10];
    int k = 0;
    if (t->syn) fl[k++] = 'S';
    if (t->fin) fl[k++] = 'F';
    if (t->psh) fl[k++] = 'P';
    if (t->rst) fl[k++] = 'R';
    if (t->urg) fl[k++] = 'U';
    if (t->ack) fl[k++] = '.';
    if (!k) fl[k++] = '-';
    fl[k] = 0;
    long pay = (long)l4len - (long)t->doff * 4;
    return snprintf(out, cap, "tcp %s:%u>%s:%u %s %u %u %ld", s, ntohs(t->source), d, ntohs(t->dest), fl, ntohl(t->seq), ntohl(t->ack_seq), pay < 0 ? 0 : pay);
  }
  if (proto == IPPROTO_UDP && l4len >= sizeof(struct udphdr)) {
    const struct udphdr *u = (const void *)l4;
    return snprintf(out, cap, "udp %s:%u>%s:%u - - - %zu", s, ntohs(u->source), d, ntohs(u->dest), l4len - sizeof(struct udphdr));
  }
  return snprintf(out, cap, "ip%d %s>%s - - - %zu", proto, s, d, l4len);
}

static void log_frame(uint64_t now, int dir, const char *verdict, const unsigned char *p, size_t len) {
  if (!logf) return;
  char desc[200], s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
  uint16_t type = len >= 14 ? (uint16_t)(p[12] << 8 | p[13]) : 0;
  const unsigned char *l3 = p + 14;
  size_t l3len = len >= 14 ? len - 14 : 0;
  if (type == ETHERTYPE_IP && l3len >= sizeof(struct ip)) {
    const struct ip *ip = (const void *)l3;
    size_t hl = (size_t)ip->ip_hl * 4, total = ntohs(ip->ip_len);
    if (total > l3len) total = l3len;
    inet_ntop(AF_INET, &ip->ip_src, s, sizeof s);
    inet_ntop(AF_INET, &ip->ip_dst, d, sizeof d);
    if (hl > total) hl = total;
    describe_l4(desc, sizeof desc, ip->ip_p, l3 + hl, total - hl, s, d);
  } else if (type == ETHERTYPE_IPV6 && l3len >= sizeof(struct ip6_hdr)) {
    const struct ip6_hdr *ip6 = (const void *)l3;
    size_t pl = ntohs(ip6->ip6_plen);
    if (pl > l3len - sizeof *ip6) pl = l3len - sizeof *ip6;
    inet_ntop(AF_INET6, &ip6->ip6_src, s, sizeof s);
    inet_ntop(AF_INET6, &ip6->ip6_dst, d, sizeof d);
    describe_l4(desc, sizeof desc, ip6->ip6_nxt, l3 + sizeof *ip6, pl, s, d);
  } else if (type == ETHERTYPE_ARP) {
    snprintf(desc, sizeof desc, "arp");
  } else {
    snprintf(desc, sizeof desc, "eth0x%04x", type);
  }
  fprintf(logf, "%.3f %d %s %zu %s\n", (double)(now - t0) / 1e6, dir, verdict, len, desc);
}

/* ---- the lanes ---------------------------------------------------------- */

static int is_ip(const unsigned char *p, size_t len) {
  if (len < 14) return 0;
  uint16_t type = (uint16_t)(p[12] << 8 | p[13]);
  return type == ETHERTYPE_IP || type == ETHERTYPE_IPV6;
}

/* Reads what has arrived on the lane's input (at most BATCH frames) and schedules it. Returns frames read. */
static int take(struct lane *l, int dir) {
  static unsigned char scratch[65536];
  int got = 0;
  while (got < BATCH) {
    struct frame *slot = l->count < LIMIT ? &l->ring[(l->head + l->count) & (SLOTS - 1)] : NULL;
    unsigned char *buf = slot ? slot->data : scratch;
    size_t cap = slot ? SLOT_BYTES : sizeof scratch;
    struct sockaddr_ll from;
    socklen_t fl = sizeof from;
    ssize_t n = recvfrom(l->in, buf, cap, MSG_TRUNC, (struct sockaddr *)&from, &fl);
    if (n < 0) break; /* EAGAIN: nothing more for now (EINTR: the loop looks again) */
    if (from.sll_pkttype == PACKET_OUTGOING) continue;
    got++;
    l->n_in++;
    uint64_t now = mono_ns();
    size_t len = (size_t)n;
    if (!slot) {
      l->n_full++;
      log_frame(now, dir, "FULL", buf, len > cap ? cap : len);
      continue;
    }
    if (len > SLOT_BYTES) {
      l->n_big++;
      log_frame(now, dir, "BIG", buf, SLOT_BYTES);
      continue;
    }
    if (loss_p > 0 && is_ip(buf, len) && uniform01() < loss_p) {
      l->n_lost++;
      log_frame(now, dir, "LOSS", buf, len);
      continue;
    }
    uint64_t ready = now;
    if (rate_bps > 0) {
      uint64_t start = l->wire_free > now ? l->wire_free : now;
      l->wire_free = start + (uint64_t)((double)len * 8e9 / rate_bps);
      ready = l->wire_free;
    }
    double jit = jitter_ns ? (uniform01() * 2 - 1) * (double)jitter_ns : 0;
    double wait = (double)delay_ns + jit;
    uint64_t due = ready + (wait > 0 ? (uint64_t)wait : 0);
    if (due < l->last_due) due = l->last_due; /* never overtake the frame ahead */
    l->last_due = due;
    slot->due = due;
    slot->len = (uint32_t)len;
    l->count++;
    log_frame(now, dir, "fwd", buf, len);
  }
  return got;
}

/* Sends every frame that is due. */
static void give(struct lane *l, uint64_t now) {
  while (l->count) {
    struct frame *f = &l->ring[l->head];
    if (f->due > now) break;
    /* A full socket buffer on a veth is a loss on the wire, as on a real link. */
    if (send(l->out, f->data, f->len, MSG_DONTWAIT) < 0) l->n_txerr++;
    else l->n_fwd++;
    l->head = (l->head + 1) & (SLOTS - 1);
    l->count--;
  }
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "offload") == 0) return offload(argc - 2, argv + 2);
  if (argc < 8 || strcmp(argv[1], "run") != 0) {
    fprintf(stderr, "usage: linkemu offload IF...\n"
                    "       linkemu run IF_A IF_B DELAY_MS JITTER_MS LOSS_PCT RATE_KBIT [MAX_S] [SEED] [LOGFILE]\n");
    return 2;
  }
  delay_ns = (uint64_t)(strtod(argv[4], NULL) * 1e6);
  jitter_ns = (uint64_t)(strtod(argv[5], NULL) * 1e6);
  loss_p = strtod(argv[6], NULL) / 100.0;
  rate_bps = strtod(argv[7], NULL) * 1000.0;
  double max_s = argc > 8 ? strtod(argv[8], NULL) : 1800;
  rng_state = argc > 9 ? strtoull(argv[9], NULL, 10) : 1;
  if (argc > 10) {
    logf = fopen(argv[10], "w");
    if (!logf) { perror(argv[10]); return 1; }
    setvbuf(logf, NULL, _IOFBF, 1 << 20);
  }

  /* Stop signals are delivered only inside ppoll (see the loop). */
  sigset_t stop, waitmask;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigprocmask(SIG_BLOCK, &stop, &waitmask);
  sigdelset(&waitmask, SIGTERM);
  sigdelset(&waitmask, SIGINT);
  struct sigaction sa = {.sa_handler = on_stop};
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  int a = open_port(argv[2]), b = open_port(argv[3]);
  struct lane lanes[2] = {{.in = a, .out = b}, {.in = b, .out = a}};
  for (int i = 0; i < 2; i++) {
    lanes[i].ring = calloc(SLOTS, sizeof(struct frame));
    if (!lanes[i].ring) { perror("linkemu: ring"); return 1; }
  }

  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  t0 = mono_ns();
  if (logf) fprintf(logf, "# t0_realtime %lld.%09ld\n", (long long)rt.tv_sec, rt.tv_nsec);
  uint64_t end = t0 + (uint64_t)(max_s * 1e9);
  fprintf(stderr, "linkemu: %s<->%s delay %.3f ms jitter +-%.3f ms loss %.3f %% rate %.0f kbit/s (each direction), max %.0f s\n", argv[2], argv[3],
          delay_ns / 1e6, jitter_ns / 1e6, loss_p * 100, rate_bps / 1000, max_s);

  struct pollfd pfd[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
  uint64_t last_arrival = t0;
  int unflushed = 0;
  while (!stopping) {
    uint64_t now = mono_ns();
    if (now >= end) break;
    give(&lanes[0], now);
    give(&lanes[1], now);
    uint64_t wake = end;
    for (int i = 0; i < 2; i++)
      if (lanes[i].count && lanes[i].ring[lanes[i].head].due < wake) wake = lanes[i].ring[lanes[i].head].due;
    /* The log is written once nothing is held and nothing has arrived for a while (while frames are held, their
       departures wake the loop; the quiet time is looked at again when the lanes are empty). */
    if (unflushed && !lanes[0].count && !lanes[1].count) {
      uint64_t quiet = last_arrival + (uint64_t)IDLE_FLUSH_MS * 1000000u;
      if (now >= quiet) {
        fflush(logf);
        unflushed = 0;
      } else if (quiet < wake) {
        wake = quiet;
      }
    }
    uint64_t left = wake > now ? wake - now : 0;
    struct timespec ts = {.tv_sec = (time_t)(left / 1000000000u), .tv_nsec = (long)(left % 1000000000u)};
    int r = ppoll(pfd, 2, &ts, &waitmask);
    if (r <= 0) continue; /* timeout, or a signal (the loop checks `stopping`) */
    for (int i = 0; i < 2; i++) {
      if (pfd[i].revents & POLLERR) {
        /* e.g. ENETDOWN while an interface goes away: reading SO_ERROR clears it, so the wait does not spin. */
        int err;
        socklen_t el = sizeof err;
        getsockopt(pfd[i].fd, SOL_SOCKET, SO_ERROR, &err, &el);
      }
      if (!(pfd[i].revents & POLLIN)) continue;
      if (take(&lanes[i], i)) {
        last_arrival = mono_ns();
        unflushed = logf != NULL;
      }
    }
  }

  if (logf) fclose(logf);
  for (int i = 0; i < 2; i++) {
    struct lane *l = &lanes[i];
    fprintf(stderr, "linkemu: dir %d in %llu fwd %llu lost %llu full %llu big %llu txerr %llu\n", i, (unsigned long long)l->n_in,
            (unsigned long long)l->n_fwd, (unsigned long long)l->n_lost, (unsigned long long)l->n_full, (unsigned long long)l->n_big,
            (unsigned long long)l->n_txerr);
  }
  return 0;
}
