// Tests of ingot/cpu/runtime.h alone: Loop mode ids, fibers with barriers, early exit,
// SIMD-group exchange with divergent active sets, dynamic threadgroup memory, tg_var.
#include <ingot/cpu/runtime.h>

#include <stdio.h>

#include <vector>

static int failures = 0;
#define CHECK(c)                                                   \
  do {                                                             \
    if (!(c)) {                                                    \
      printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);          \
      ++failures;                                                  \
    }                                                              \
  } while (0)

using namespace ingot;

__attribute__((noinline)) static void big_frame() {
  volatile char big[140 * 1024];
  for (size_t k = 0; k < sizeof big; k += 64) big[k] = 1;
}

static launch make(uint32_t gx, uint32_t gy, uint32_t gz, uint32_t tx, uint32_t ty, uint32_t tz) {
  launch L;
  memset(&L, 0, sizeof L);
  uint32_t g[3] = {gx, gy, gz}, t[3] = {tx, ty, tz};
  for (int d = 0; d < 3; ++d) {
    L.grid[d] = g[d];
    L.tg[d] = t[d];
    L.groups[d] = (g[d] + t[d] - 1) / t[d];
    L.region[d] = L.groups[d];
    L.block[d] = t[d];
  }
  L.exact = 1;
  return L;
}

int main() {
  // Loop mode: 2-D grid with partial edge groups; every thread once, right ids.
  {
    launch L = make(37, 5, 1, 8, 4, 1);
    std::vector<int> hit(37 * 5, 0);
    uint32_t ng = L.groups[0] * L.groups[1] * L.groups[2];
    int rc = cpu::run_groups<cpu::Mode::Loop>(&L, 0, ng, [&](const cpu::thread_ids& t) {
      uint32_t x = t.thread_position_in_grid[0], y = t.thread_position_in_grid[1];
      hit[y * 37 + x] += 1;
      CHECK(x == t.threadgroup_position_in_grid[0] * 8 + t.thread_position_in_threadgroup[0]);
      CHECK(t.threads_per_threadgroup[0] == (t.threadgroup_position_in_grid[0] == 4 ? 5u : 8u));
      CHECK(t.threads_per_threadgroup[1] == (t.threadgroup_position_in_grid[1] == 1 ? 1u : 4u));
      CHECK(t.thread_index_in_threadgroup ==
            t.thread_position_in_threadgroup[0] +
                t.thread_position_in_threadgroup[1] * t.threads_per_threadgroup[0]);
    });
    CHECK(rc == 0);
    bool all1 = true;
    for (int v : hit) all1 = all1 && v == 1;
    CHECK(all1);
  }
  // Fibers: barrier-separated phases over threadgroup memory, with early exits.
  {
    launch L = make(200, 1, 1, 64, 1, 1);
    L.tgmem_size[0] = 64 * 4;
    std::vector<int> out(200, -1);
    uint32_t ng = L.groups[0];
    int rc = cpu::run_groups<cpu::Mode::Fibers>(&L, 0, ng, [&](const cpu::thread_ids& t) {
      int* sh = (int*)cpu::tgmem(0);
      uint32_t i = t.thread_index_in_threadgroup, n = t.threads_per_threadgroup[0];
      sh[i] = (int)t.thread_position_in_grid[0];
      cpu::barrier();
      if (i == 3) return;  // exits before the second barrier: counts as arrived
      int v = sh[(i + 1) % n];
      cpu::barrier();
      sh[i] = v;
      cpu::barrier();
      out[t.thread_position_in_grid[0]] = sh[i];
    });
    CHECK(rc == 0);
    for (uint32_t g = 0; g < ng; ++g) {
      uint32_t n = g == ng - 1 ? 200 - 64 * g : 64;
      for (uint32_t i = 0; i < n; ++i) {
        int want = i == 3 ? -1 : (int)(g * 64 + (i + 1) % n);
        if (i == 2) want = (int)(g * 64 + 3);
        CHECK(out[g * 64 + i] == want);
      }
    }
  }
  // SIMD exchange: divergent branches are separate active sets; tg_var shared by the group.
  {
    launch L = make(96, 1, 1, 48, 1, 1);
    std::vector<uint32_t> sum(96), mask(96), total(96);
    int rc = cpu::run_groups<cpu::Mode::Fibers>(&L, 0, 2, [&](const cpu::thread_ids& t) {
      uint32_t lane = t.thread_index_in_simdgroup, gid = t.thread_position_in_grid[0];
      uint32_t& acc = cpu::tg_var<uint32_t, 0>();
      if (t.thread_index_in_threadgroup == 0) acc = 0;
      cpu::barrier();
      uint32_t s = 0, m = 0;
      if (lane % 3 == 0) {
        cpu::lanes<uint32_t> r = cpu::simd_exchange(gid);
        for (int k = 0; k < 32; ++k) s += (r.active >> k & 1) ? r.v[k] : 0;
        m = r.active;
        CHECK(r.self == lane);
      } else {
        cpu::lanes<uint32_t> r = cpu::simd_exchange(gid * 2);
        for (int k = 0; k < 32; ++k) s += (r.active >> k & 1) ? r.v[k] : 0;
        m = r.active;
      }
      __atomic_fetch_add(&acc, 1, __ATOMIC_RELAXED);
      cpu::barrier();
      sum[gid] = s;
      mask[gid] = m;
      total[gid] = acc;
    });
    CHECK(rc == 0);
    for (uint32_t gid = 0; gid < 96; ++gid) {
      uint32_t tl = gid % 48, sg = tl / 32, lane = tl % 32, n = sg == 0 ? 32 : 16;
      uint32_t base = gid - lane, want = 0, wm = 0;
      for (uint32_t k = 0; k < n; ++k)
        if ((k % 3 == 0) == (lane % 3 == 0)) {
          want += (lane % 3 == 0) ? base + k : 2 * (base + k);
          wm |= 1u << k;
        }
      CHECK(sum[gid] == want);
      CHECK(mask[gid] == wm);
      CHECK(total[gid] == 48);
    }
  }
  // Many groups of 1024 threads with many barriers: performance smoke and stack reuse.
  {
    launch L = make(1024 * 8, 1, 1, 1024, 1, 1);
    std::vector<float> out(1024 * 8);
    int rc = cpu::run_groups<cpu::Mode::Fibers>(&L, 0, 8, [&](const cpu::thread_ids& t) {
      float* sh = &cpu::tg_var<float[1024], 1>()[0];
      uint32_t i = t.thread_index_in_threadgroup;
      sh[i] = 1.0f;
      cpu::barrier();
      for (uint32_t s = 512; s > 0; s >>= 1) {
        if (i < s) sh[i] += sh[i + s];
        cpu::barrier();
      }
      out[t.thread_position_in_grid[0]] = sh[0];
    });
    CHECK(rc == 0);
    bool ok = true;
    for (float v : out) ok = ok && v == 1024.0f;
    CHECK(ok);
  }
  // Errors: a barrier in Loop mode is reported.
  {
    launch L = make(4, 1, 1, 4, 1, 1);
    int rc = cpu::run_groups<cpu::Mode::Loop>(&L, 0, 1, [&](const cpu::thread_ids&) { cpu::barrier(); });
    CHECK(rc != 0);
    CHECK(strstr(ingot_cpu_last_error(), "barrier") != nullptr);
    rc = cpu::run_groups<cpu::Mode::Fibers>(&L, 0, 1, [&](const cpu::thread_ids&) { cpu::barrier(); });
    CHECK(rc == 0);
  }
  // Stack overflow is detected, not silent.
  {
    launch L = make(2, 1, 1, 2, 1, 1);
    int rc = cpu::run_groups<cpu::Mode::Fibers>(&L, 0, 1, [&](const cpu::thread_ids& t) {
      // thread 1 overflows into thread 0's stack (below it); the canary catches it
      if (t.thread_index_in_threadgroup == 1) big_frame();
      cpu::barrier();
    });
    CHECK(rc != 0);
    CHECK(strstr(ingot_cpu_last_error(), "stack") != nullptr);
  }
  printf("%s runtime_test failures=%d\n", failures ? "FAILED" : "OK", failures);
  return failures ? 1 : 0;
}
