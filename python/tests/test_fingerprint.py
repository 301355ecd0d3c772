"""Fingerprints, distances and explanations from Python equal the CLI's."""

import concurrent.futures

import pytest

import neardup


def test_fingerprints_equal_the_cli(cli, thucnews, thucnews_path):
    texts = [d["text"] for d in thucnews]
    for method in ("chars5", "tfidf"):
        expected = [r["fingerprint"] for r in cli("fingerprint", "--method", method, thucnews_path)]
        assert len(expected) == len(texts) == 1000
        bits = neardup.Method(method).bits
        one = [neardup.to_hex(neardup.fingerprint(t, method=method), bits) for t in texts[:50]]
        assert one == expected[:50]
        batch = neardup.fingerprint_batch(texts, method=method, threads=2)
        if bits == 128:
            assert batch.shape == (1000, 2)
            got = [neardup.to_hex((int(hi) << 64) | int(lo), 128) for hi, lo in batch]
        else:
            assert batch.shape == (1000,)
            got = [neardup.to_hex(int(v), 64) for v in batch]
        assert got == expected


def test_batch_without_numpy_gives_ints(monkeypatch, thucnews):
    texts = [d["text"] for d in thucnews[:40]]
    for method in ("chars5", "tfidf"):
        with_numpy = neardup.fingerprint_batch(texts, method=method)
        monkeypatch.setattr(neardup, "_numpy", None)
        ints = neardup.fingerprint_batch(texts, method=method)
        monkeypatch.undo()
        assert ints == [neardup.fingerprint(t, method=method) for t in texts]
        if with_numpy.ndim == 2:
            assert ints == [(int(hi) << 64) | int(lo) for hi, lo in with_numpy]
        else:
            assert ints == [int(v) for v in with_numpy]


def test_threads_do_not_change_fingerprints(thucnews):
    texts = [d["text"] for d in thucnews[:200]]
    one = neardup.fingerprint_batch(texts, threads=1)
    four = neardup.fingerprint_batch(texts, threads=4)
    assert (one == four).all()


def test_distance_and_explain(cli, thucnews, tmp_path):
    a = thucnews[0]["text"]
    b = a[:200] + "插入的几个字" + a[200:]
    d = neardup.distance(a, b)
    assert d == neardup.distance(neardup.fingerprint(a), neardup.fingerprint(b))
    (tmp_path / "a.txt").write_text(a, encoding="utf-8")
    (tmp_path / "b.txt").write_text(b, encoding="utf-8")
    compare = cli("compare", "--json", tmp_path / "a.txt", tmp_path / "b.txt")[0]
    assert compare["distance"] == d
    e = neardup.explain(a, b, top=5)
    assert e["distance"] == d and e["bits"] == 128
    assert e["a"]["fingerprint"] == compare["a"]["fingerprint"]
    assert len(e["differing_bits"]) == d
    assert 0 < len(e["features"]) <= 5
    pushes = [f["push"] for f in e["features"]]
    assert pushes == sorted(pushes, reverse=True) and pushes[0] > 0
    # The inserted text's n-grams are only in b.
    assert any(f["weight_a"] is None for f in neardup.explain(a, b, top=0)["features"])
    same = neardup.explain(a, a)
    assert same["distance"] == 0 and same["differing_bits"] == []


def test_method_text_form():
    m = neardup.Method("tfidf,bits=128")
    assert m.name == "tfidf" and m.bits == 128 and m.default_k == 10
    assert neardup.Method(str(m)) == m
    assert "chars5" in neardup.Method.presets()
    assert neardup.Method().name == "chars5u"
    assert neardup.fingerprint("abc def ghi", method=m) == neardup.fingerprint(
        "abc def ghi", method=str(m))


def test_four_python_threads_at_once(thucnews, tmp_path):
    texts = [d["text"] for d in thucnews[:120]]
    expected_fp = [neardup.fingerprint(t) for t in texts]
    expected_tfidf = list(neardup.fingerprint_batch(texts, method="tfidf", threads=1))
    index = neardup.Index.create(str(tmp_path / "t.idx"))
    for i, t in enumerate(texts):
        index.add("d%d" % i, t)
    expected_query = [index.query(t) for t in texts]

    def work(worker):
        for round_ in range(3):
            if worker == 0:
                assert [neardup.fingerprint(t) for t in texts] == expected_fp
            elif worker == 1:
                got = neardup.fingerprint_batch(texts, method="tfidf", threads=2)
                assert list(got) == expected_tfidf
            elif worker == 2:
                assert [index.query(t) for t in texts] == expected_query
            else:
                assert neardup.distance(texts[round_], texts[round_]) == 0
                records = list(neardup.dedup(texts, threads=2))
                assert len(records) == len(texts)
        return worker

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        assert sorted(pool.map(work, range(4))) == [0, 1, 2, 3]


def test_bad_arguments_raise_clear_exceptions(tmp_path):
    with pytest.raises(neardup.InvalidArgumentError, match="nosuch"):
        neardup.Method("nosuch")
    with pytest.raises(ValueError, match="bits"):
        neardup.fingerprint("x", method="chars5,bits=100")
    with pytest.raises(TypeError, match="text must be str or bytes"):
        neardup.fingerprint(123)
    with pytest.raises(TypeError, match="method must be"):
        neardup.fingerprint("x", method=3)
    with pytest.raises(TypeError, match="not a single str"):
        neardup.fingerprint_batch("one text")
    with pytest.raises(TypeError, match="texts must be str or bytes"):
        neardup.fingerprint_batch(["ok", None])
    with pytest.raises(ValueError, match="threads"):
        neardup.fingerprint_batch(["x"], threads=-1)
    with pytest.raises(neardup.NotFoundError):
        neardup.Index.open(str(tmp_path / "missing.idx"))
    with pytest.raises(FileNotFoundError):
        neardup.Index.open(str(tmp_path / "missing.idx"))
    index = neardup.Index.create(str(tmp_path / "i.idx"), method="tfidf")
    with pytest.raises(neardup.InvalidArgumentError, match="k"):
        index.query("某段文本", k=index.max_k + 1)
    index.add("a", "某段文本内容")
    with pytest.raises(neardup.InvalidArgumentError, match="already"):
        index.add("a", "某段文本内容")
    index.save()
    index.close()
    with pytest.raises(neardup.Error, match="closed"):
        len(index)
    reader = neardup.Index.open(str(tmp_path / "i.idx"))
    with pytest.raises(neardup.InvalidArgumentError, match="read-only"):
        reader.add("b", "别的文本")
    assert isinstance(neardup.InvalidArgumentError("x"), neardup.Error)
