"""neardup.dedup equals `neardup dedup`; neardup.Index equals the CLI's index
and, used as query-or-add, stream-mode dedup."""

import json

import pytest

import neardup


@pytest.mark.parametrize("options", [
    {},
    {"method": "tfidf"},
    {"k": 10, "mode": "stream"},
    {"k": 30, "keep": "longest"},
])
def test_dedup_equals_the_cli(cli, thucnews, thucnews_path, options):
    args = []
    for key, value in options.items():
        args += ["-k" if key == "k" else "--" + key, value]
    expected = cli("dedup", "--quiet", *args, thucnews_path)
    summary = {}
    got = list(neardup.dedup(thucnews, summary=summary, **options))
    assert got == expected
    assert summary["documents"] == 1000
    assert summary["duplicates"] == sum(r["duplicate"] for r in expected)
    unique = list(neardup.dedup(iter(thucnews), unique=True, **options))
    assert [d["id"] for d in unique] == [r["id"] for r in expected if not r["duplicate"]]
    assert all(u is thucnews[i] for u, i in zip(unique, [
        i for i, r in enumerate(expected) if not r["duplicate"]]))


def test_dedup_keep_field_equals_the_cli(cli, tmp_path):
    rows = [{"id": "a", "text": "同一段新闻的正文内容，用来测试保留策略。" * 3, "score": 1},
            {"id": "b", "text": "同一段新闻的正文内容，用来测试保留策略。" * 3, "score": "7.5"},
            {"id": "c", "text": "同一段新闻的正文内容，用来测试保留策略。" * 3, "score": "x"},
            {"id": "d", "text": "完全不同的另一篇文章，讲的是天气和交通情况。" * 3}]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    expected = cli("dedup", "--quiet", "--keep", "field:score", path)
    assert list(neardup.dedup(rows, keep="field:score")) == expected
    assert [r["id"] for r in expected if not r["duplicate"]] == ["b", "d"]


def test_dedup_of_texts_and_empty_input():
    texts = ["一模一样的一段话，足够长以便产生特征。"] * 3 + ["!!!", "另外一段完全不同的话，也足够长。"]
    records = list(neardup.dedup(texts))
    assert [r["id"] for r in records] == [0, 1, 2, 3, 4]
    assert [r["duplicate"] for r in records] == [False, True, True, False, False]
    assert records[1]["nearest"] == 0 and records[1]["distance"] == 0
    assert records[3].get("empty") is True
    assert list(neardup.dedup(texts, unique=True)) == [texts[0], texts[3], texts[4]]
    assert list(neardup.dedup([])) == []


def test_dedup_bad_arguments():
    with pytest.raises(neardup.InvalidArgumentError, match="-k 20 is out of range: it must be between 0 and 16"):
        list(neardup.dedup(["x"], method="tfidf", k=20))
    with pytest.raises(neardup.InvalidArgumentError, match="mode"):
        neardup.dedup(["x"], mode="fast")
    with pytest.raises(neardup.InvalidArgumentError, match="keep"):
        neardup.dedup(["x"], keep="last")
    with pytest.raises(KeyError, match="no field 'text'"):
        list(neardup.dedup([{"body": "x"}]))
    with pytest.raises(TypeError, match="not a single str"):
        neardup.dedup("one text")
    with pytest.raises(TypeError, match="is a int"):
        list(neardup.dedup([1, 2]))


def test_index_check_is_stream_dedup(cli, thucnews, thucnews_path, tmp_path):
    expected = cli("dedup", "--quiet", "--mode", "stream", "--method", "tfidf", thucnews_path)
    index = neardup.Index.create(str(tmp_path / "s.idx"), method="tfidf")
    kept = []
    for doc, record in zip(thucnews, expected):
        added, matches = index.check(doc["id"], doc["text"])
        kept.append(added)
        if record["duplicate"]:
            assert matches and matches[0][0] == record["nearest"], doc["id"]
            assert matches[0][1] == record["distance"]
        else:
            assert matches == []
    # An empty document is kept by dedup but never added to an index (one
    # policy at every door: added is False, and it matches nothing).
    assert kept == [not r["duplicate"] and not r.get("empty") for r in expected]
    index.save()
    assert len(neardup.Index.open(str(tmp_path / "s.idx"))) == sum(kept)


def test_index_interoperates_with_the_cli(cli, thucnews, thucnews_path, tmp_path):
    path = tmp_path / "cli.idx"
    cli("index", "build", "--quiet", "--method", "tfidf", thucnews_path, "-o", path)
    expected = cli("index", "query", "--quiet", path, thucnews_path)
    index = neardup.Index.open(str(path))
    assert str(index.method).startswith("tfidf") and index.bits == 64
    assert len(index) == 1000 - sum(1 for d in thucnews if not d["text"].strip())
    for doc, record in zip(thucnews, expected):
        assert [list(m) for m in index.query(doc["text"])] == [
            [m["id"], m["distance"]] for m in record["matches"]]
    # And the other way: built from Python, queried by the CLI.
    mine = tmp_path / "py.idx"
    with_py = neardup.Index.create(str(mine), method="tfidf")
    for doc in thucnews[:300]:
        with_py.add(doc["id"], doc["text"])
    with_py.save()
    with_py.close()
    got = cli("index", "query", "--quiet", mine, thucnews_path)
    reopened = neardup.Index.open(str(mine), writable=True)
    assert "thuc-0000" in reopened and len(reopened) == 300
    for doc, record in zip(thucnews, got):
        assert [list(m) for m in reopened.query(doc["text"])] == [
            [m["id"], m["distance"]] for m in record["matches"]]
