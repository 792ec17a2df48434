// A measurement aid for bench/fabric_vs_tcp.sh, loaded with LD_PRELOAD into genie's TCP ranks:
// recv() without MSG_TRUNC, so that the TCP transport copies filler payloads (runs without
// --verify) out of the kernel as libfabric's tcp provider must, instead of having the kernel
// drop them. The all-reduce row it gives is TCP doing the fabric's receive copy: what the
// fabric transport's CPU per byte can be compared with (docs/transports.md, sixth pass).
// Not part of genie: built by the script with `cc -shared`.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

ssize_t recv(int fd, void* buf, size_t len, int flags) {
  static ssize_t (*real)(int, void*, size_t, int);
  if (real == NULL) real = (ssize_t (*)(int, void*, size_t, int))dlsym(RTLD_NEXT, "recv");
  return real(fd, buf, len, flags & ~MSG_TRUNC);
}
