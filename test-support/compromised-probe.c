/*
 * The install lab's stand-in for a compromised proxy: run with the dotstub
 * unit's own user, capabilities and sandbox, it tries what an attacker who
 * had the proxy would try, one attempt per forked child (a call the syscall
 * filter refuses kills that child with SIGSYS), and prints one line each:
 *   <check> denied (<why>) | <check> ALLOWED (<what happened>)
 * Built static by the test (test-support/install-lab.test.ts); not shipped.
 *
 * Usage: compromised-probe write FILE... | create DIR... | read DIR... |
 *        module | ptrace PID... | euid
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int attempt(const char *what, const char *arg) {
  if (strcmp(what, "write") == 0) {
    int fd = open(arg, O_WRONLY | O_APPEND);
    if (fd < 0) return errno;
    close(fd);
    return 0;
  }
  if (strcmp(what, "create") == 0) {
    char path[4096];
    snprintf(path, sizeof path, "%s/compromised-probe.%d", arg, (int)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) return errno;
    close(fd);
    unlink(path);
    return 0;
  }
  if (strcmp(what, "read") == 0) {
    DIR *d = opendir(arg);
    if (d == NULL) return errno;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    /* An empty directory shows nothing of what is there: ProtectHome's own answer. */
    return n == 0 ? -1 : 0;
  }
  if (strcmp(what, "module") == 0) {
    /* Not a module: with the right to load one the kernel says ENOEXEC/EINVAL; without it, EPERM. */
    static const char junk[64] = {0};
    if (syscall(SYS_init_module, junk, sizeof junk, "") == 0) return 0;
    return errno == EPERM ? EPERM : 0;
  }
  if (strcmp(what, "ptrace") == 0) {
    pid_t pid = (pid_t)atoi(arg);
    if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) == 0) {
      ptrace(PTRACE_DETACH, pid, NULL, NULL);
      return 0;
    }
    return errno;
  }
  return EINVAL;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  if (strcmp(argv[1], "euid") == 0) {
    printf("euid %d\n", (int)geteuid());
    return 0;
  }
  int one = argc == 2; /* module: no argument */
  for (int i = 2; i < argc || one; i++, one = 0) {
    const char *arg = i < argc ? argv[i] : "";
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
      int r = attempt(argv[1], arg);
      _exit(r == 0 ? 0 : 100 + (r & 0x7f));
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFSIGNALED(status)) printf("%s %s denied (killed by signal %d%s)\n", argv[1], arg, WTERMSIG(status), WTERMSIG(status) == SIGSYS ? ": the syscall filter" : "");
    else if (WEXITSTATUS(status) == 0) printf("%s %s ALLOWED\n", argv[1], arg);
    else {
      int code = WEXITSTATUS(status) - 100;
      printf("%s %s denied (%s)\n", argv[1], arg, code == (-1 & 0x7f) ? "empty: nothing of it is visible" : strerror(code));
    }
  }
  return 0;
}
