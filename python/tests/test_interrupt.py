"""Ctrl-C during a long call raises KeyboardInterrupt within about a second
(signals are checked between batches), not when the call ends."""

import os
import signal
import threading
import time

import pytest

import neardup

# One 4 KB text, referenced many times: a long call without the memory.
TEXT = "近似重复检测需要稳定的指纹，" * 300


def _interrupted_after(call, delay=0.3):
    """Runs call() with SIGINT sent after `delay`; returns the seconds from the
    signal to KeyboardInterrupt, or None when the call ended first."""
    sent = []

    def send():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(delay, send)
    timer.start()
    try:
        call()
    except KeyboardInterrupt:
        return time.monotonic() - sent[0]
    finally:
        timer.cancel()
    return None


@pytest.mark.parametrize("which", ["fingerprint_batch", "dedup"])
def test_sigint_raises_keyboard_interrupt_within_a_second(which):
    texts = [TEXT] * 200000
    if which == "fingerprint_batch":
        call = lambda: neardup.fingerprint_batch(texts, method="chars5", threads=2)
    else:
        call = lambda: list(neardup.dedup(texts, method="chars5", threads=2))
    waited = _interrupted_after(call)
    assert waited is not None, "the call ended before the signal: make it longer"
    assert waited < 1.5
    # The module still works: no worker was left running.
    assert len(neardup.fingerprint_batch([TEXT] * 4, method="chars5")) == 4
