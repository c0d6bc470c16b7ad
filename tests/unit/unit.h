/* SPDX-License-Identifier: MIT */
/*
 * unit.h — what every host unit test shares, whether or not it needs kernel memory
 * (fixture.h): the signature of a cmocka test function.  Each test is one such function, its
 * stable ID at the start of the comment above it ("XXX-NN: what it proves").
 */
#ifndef ZT_TEST_UNIT_H
#define ZT_TEST_UNIT_H

/* A cmocka test's parameter, unused by tests that keep no per-test state. */
#define TEST_STATE void **state __attribute__((unused))

#endif
