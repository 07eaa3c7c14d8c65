// glibc's count of the heap in use, for the benchmark's memory figures:
// the Glibc module does not export malloc.h.
#include <stddef.h>
#if __has_include(<malloc.h>)
#include <malloc.h>
#endif

/// Bytes malloc has handed out and not taken back (mallinfo2's uordblks
/// plus hblkhd, every arena), after malloc_trim(0); -1 where glibc older
/// than 2.33, or another libc, has no mallinfo2.
static inline long asynccore_heap_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  malloc_trim(0);
  struct mallinfo2 info = mallinfo2();
  return (long)(info.uordblks + info.hblkhd);
#else
  return -1;
#endif
}
