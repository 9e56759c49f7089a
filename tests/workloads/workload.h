/* SPDX-License-Identifier: Apache-2.0 */
/* What the test workloads share. */
#ifndef SLIDEOPS_WORKLOAD_H
#define SLIDEOPS_WORKLOAD_H

/*
 * Keep each hot function a real, separately named symbol: no inlining, no .constprop/.isra
 * clone, so the tests can assert its name.
 */
#if defined(__has_attribute)
#if __has_attribute(noipa)
#define HOT_FN __attribute__((noinline, noipa, used))
#elif __has_attribute(noclone)
#define HOT_FN __attribute__((noinline, noclone, used))
#endif
#endif
#ifndef HOT_FN
#define HOT_FN __attribute__((noinline, used))
#endif

#endif
