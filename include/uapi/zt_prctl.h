/* SPDX-License-Identifier: MIT */
/*
 * zt_prctl.h — prctl options zerotick implements (Linux values).
 *
 * Task isolation follows Chris Metcalf's 2015-2016 patch series (never merged into Linux);
 * docs/isolation.md gives the semantics here and where each value comes from.  A glibc
 * program includes this next to <sys/prctl.h> (-I the repository's include/uapi).
 */
#ifndef ZT_UAPI_PRCTL_H
#define ZT_UAPI_PRCTL_H

#define PR_SET_NAME 15
#define PR_GET_NAME 16

#define PR_SET_TASK_ISOLATION           48
#define PR_GET_TASK_ISOLATION           49
#define PR_TASK_ISOLATION_ENABLE        (1 << 0)
#define PR_TASK_ISOLATION_STRICT        (1 << 1)
#define PR_TASK_ISOLATION_SET_SIG(sig)  (((sig)&0x7f) << 8)
#define PR_TASK_ISOLATION_GET_SIG(bits) (((bits) >> 8) & 0x7f)

#endif
