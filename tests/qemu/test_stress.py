"""Exhaustion and stress (issue 9, item 13): /bin/stress, one boot on 4 CPUs, every test
ending with free pages and kernel stacks at their baseline (each test checks its own, the
runner checks the whole suite)."""

import re

import pytest

import zt

BOOTARGS = "quiet init=/bin/stress"
SUITE_TIMEOUT = 900


@pytest.fixture(scope="module")
def suite():
    b = zt.boot(cpus=4, bootargs=BOOTARGS, timeout=SUITE_TIMEOUT)
    assert "panic" not in b.console, b
    return b


def ok(boot, name):
    assert f"test {name}: OK" in boot.lines(), boot
    assert not boot.line_matching(rf"^test {re.escape(name)}: FAILED"), boot


def test_str01_cross_moves_do_not_deadlock(suite):
    """STR-01: two threads running on two CPUs move each other at the same time, for 4 s:
    moves never stop (before the fix each waited in the kernel, forever and unkillable, for
    the other to leave its CPU: found by /bin/fuzz)."""
    ok(suite, "affinity_cross")
    m = re.search(r"affinity_cross: (\d+) \+ (\d+) moves", suite.console)
    assert m and int(m.group(1)) > 100 and int(m.group(2)) > 100, suite


def test_str09_suite_leaks_nothing(suite):
    """STR-09: the whole suite ends with free pages and kernel stacks at their baseline, and
    every test passed."""
    assert not suite.line_matching(r"^test leaks: FAILED"), suite
    assert suite.line_matching(r"^ALL TESTS PASSED$"), suite
    assert suite.status == 0, suite
