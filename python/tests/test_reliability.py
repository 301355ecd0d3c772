"""Hostile use of the module (issue 29): a second writable open and fork with
a live writable handle or a pipeline being built, in child interpreters with a
time limit so that a hang fails the test instead of holding the run; minhash
refused as the CLI refuses it; an empty index path refused."""

import os
import subprocess
import sys
import textwrap

import pytest

import neardup

TEXT = "近重复检测的测试文本，这是第一段内容，用来检验模块的行为。"


def run_python(code, tmp_path, timeout=60):
    """Runs `code` in a child interpreter with this one's sys.path; the
    result, or a failure when it does not end within `timeout` seconds."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail("hung (killed after %d s): %s" % (timeout, e.stderr))


def test_second_writable_open_in_one_process_raises_at_once(tmp_path):
    # The second open waited in flock for the first, forever.
    result = run_python("""
        import neardup
        idx = neardup.Index.create("i.idx")
        idx.add("a", "%s")
        idx.save()
        idx.close()
        first = neardup.Index.open("i.idx", writable=True)
        try:
            neardup.Index.open("i.idx", writable=True)
        except neardup.InvalidArgumentError as e:
            assert "already locked by this process" in str(e), e
            print("refused")
        first.close()
        again = neardup.Index.open("i.idx", writable=True)  # free once closed
        assert "a" in again
        print("reopened")
    """ % TEXT, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["refused", "reopened"]


def test_fork_with_a_writable_index_refuses_changes_in_the_child(tmp_path):
    # Parent and child both held the lock; the child's saved document was lost.
    result = run_python("""
        import os
        import neardup
        idx = neardup.Index.create("i.idx")
        idx.add("a", "%s")
        idx.save()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                idx.add("child", "另一段完全不同的文字，讲的是天气和旅行。")
                idx.save()
            except neardup.InvalidArgumentError as e:
                code = 0 if "forked" in str(e) else 2
            try:
                neardup.Index.open("i.idx", writable=True)
                code = 3
            except neardup.InvalidArgumentError:
                pass
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        idx.add("parent", "第三段文字，关于做饭和菜谱的介绍。")
        idx.save()
        idx.close()
        back = neardup.Index.open("i.idx")
        assert "parent" in back and "child" not in back and len(back) == 2
        print("ok")
    """ % TEXT, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_fork_while_another_thread_builds_a_pipeline(tmp_path):
    # A child forked mid-build inherited the pipeline cache's mutex locked by
    # a thread it does not have, and hung on its first fingerprint.
    result = run_python("""
        import os, threading, time
        import neardup
        hung = 0
        for i in range(6):
            method = "tfidf,topk=%%d" %% (40 + i)  # a new pipeline each round
            t = threading.Thread(target=neardup.fingerprint, args=("%s",), kwargs={"method": method})
            t.start()
            time.sleep(0.002 * i)
            pid = os.fork()
            if pid == 0:
                neardup.fingerprint("%s", method=method)
                os._exit(0)
            deadline = time.time() + 20
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
                    break
                if time.time() > deadline:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    hung += 1
                    break
                time.sleep(0.01)
            t.join()
        print("hung", hung)
    """ % (TEXT, TEXT), tmp_path, timeout=240)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hung 0"


def test_minhash_is_refused_like_the_cli():
    # fingerprint returned an int. dedup runs MinHash, as `neardup dedup`
    # (test_parity.py compares the records with the CLI's).
    for call in (lambda: neardup.fingerprint(TEXT, method="minhash"),
                 lambda: neardup.fingerprint_batch([TEXT], method="minhash"),
                 lambda: neardup.distance(TEXT, TEXT, method="minhash")):
        with pytest.raises(neardup.Error, match="the minhash method is supported by dedup only"):
            call()
    records = list(neardup.dedup([TEXT, TEXT], method="minhash"))
    assert records[1]["duplicate"] and records[1]["jaccard"] == 1.0
    assert "fingerprint" not in records[0]


def test_an_index_path_must_name_a_file(tmp_path):
    for path in ("", str(tmp_path), str(tmp_path) + "/"):
        with pytest.raises(neardup.InvalidArgumentError, match="needs a file name"):
            neardup.Index.create(path)
