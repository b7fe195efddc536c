// Built against an installed Lantern by tests/consumer_test.sh.
#include <lantern/lantern.hpp>

#include <cstdio>

static long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  lantern::join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
  return a + b;
}

int main() {
  lantern::Scheduler pool({.workers = 2});
  const long r = pool.run([] { return fib(20); });
  std::printf("consumer: fib(20) = %ld on %u workers\n", r, pool.worker_count());
  return r == 6765 ? 0 : 1;
}
