"""One index, three doors (issue 23): `neardup index`, neardup.Index and
`neardup serve` (HTTP on loopback) give the same matches, distances and
added flags on the same files, the same answer for an empty document, and
the same stats object, for the default method, a 64-bit method at k = 3 and
a boilerplate=lines index (a footer shared by 8 documents). A synthetic
corpus: no shared data needed."""

import json
import os
import pickle
import random
import re
import shutil
import subprocess
import time
import urllib.request

import pytest

import neardup

FOOTER = "本文来源：新华通讯社\n责任编辑：王小明\n版权所有 未经授权不得转载"


def corpus():
    # Lines of random CJK characters (no line shared by chance), a footer
    # in 8 documents, near copies (one character added) and two empty ones.
    rng = random.Random(23)

    def line():
        return "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(24))

    docs = []
    for i in range(24):
        lines = [line() for _ in range(6)]
        footer = "\n" + FOOTER if i < 8 else ""
        docs.append({"id": "d%02d" % i, "text": "\n".join(lines) + footer})
        if i % 3 == 0:
            near = lines[:]
            near[2] += "了"
            docs.append({"id": "d%02d-near" % i, "text": "\n".join(near) + footer})
    docs.append({"id": "empty", "text": ""})
    docs.append({"id": "blank", "text": " \n  "})
    return docs


METHODS = [
    ("default", [], None),
    ("bits64-k3", ["--method", "chars5,bits=64", "--max-k", "3"], 3),
    ("lines", ["--method", "chars5,boilerplate=lines"], None),
]


class Server:
    def __init__(self, cli_path, index):
        self.proc = subprocess.Popen([cli_path, "serve", "--index", str(index), "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stdout.readline().decode()
        match = re.search(r":(\d+)\s*$", line)
        assert match, (line, self.proc.stderr.read().decode() if self.proc.poll() else "")
        self.url = "http://127.0.0.1:%s" % match.group(1)

    def post(self, path, body):
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())

    def get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=60) as r:
            return json.loads(r.read())

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def cli_path():
    path = os.environ.get("NEARDUP_CLI")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("NEARDUP_CLI (the neardup binary) is not set; run through ctest")
    return path


def run(cli_path, *args):
    done = subprocess.run([cli_path, *map(str, args)], capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


def jsonl(text):
    return [json.loads(line) for line in text.splitlines()]


def pairs(matches):
    return [[m["id"], m["distance"]] for m in matches]


@pytest.mark.parametrize("name,build_args,k", METHODS, ids=[m[0] for m in METHODS])
def test_cli_python_and_serve_answer_alike(cli_path, tmp_path, name, build_args, k):
    docs = corpus()
    src = tmp_path / "corpus.jsonl"
    src.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs),
                   encoding="utf-8")
    # Indexed: every other document; the rest are queried and checked.
    indexed, probes = docs[::2], docs[1::2]
    assert any(not d["text"].strip() for d in probes)
    built = tmp_path / "built.jsonl"
    built.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in indexed),
                     encoding="utf-8")
    probe_file = tmp_path / "probes.jsonl"
    probe_file.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in probes),
                          encoding="utf-8")
    idx = tmp_path / "a.idx"
    run(cli_path, "index", "build", "--quiet", *build_args, built, "-o", idx)
    for copy in ("b", "c"):
        for suffix in ("", ".ids"):
            shutil.copy(str(idx) + suffix, str(tmp_path / (copy + ".idx")) + suffix)
    kargs = ["-k", str(k)] if k is not None else []

    # query: CLI, Python, serve.
    cli_query = jsonl(run(cli_path, "index", "query", "--quiet", *kargs, idx, probe_file))
    with neardup.Index.open(str(idx)) as py:
        py_query = py.query([d["text"] for d in probes], k=k)
        assert py_query[0] == py.query(probes[0]["text"], k=k)
        py_stats = py.stats()
    assert [pairs(r["matches"]) for r in cli_query] == [[list(m) for m in q] for q in py_query]
    assert any(r["matches"] for r in cli_query), "the corpus has near copies"

    # check --add-new (a), Index.check (b), /v1/check (c): one copy each.
    cli_check = jsonl(run(cli_path, "index", "check", "--quiet", "--add-new", *kargs, idx,
                          probe_file))
    with neardup.Index.open(str(tmp_path / "b.idx"), writable=True) as py:
        py_check = py.check([d["id"] for d in probes], [d["text"] for d in probes], k=k)
    server = Server(cli_path, tmp_path / "c.idx")
    try:
        body = {"documents": [{"id": d["id"], "text": d["text"]} for d in probes]}
        query_body = dict(body, **({"k": k} if k is not None else {}))
        serve_query = server.post("/v1/query", query_body)["results"]
        serve_check = server.post("/v1/check", query_body)["results"]
        serve_stats = server.get("/v1/stats")
    finally:
        server.stop()
    assert [pairs(r["matches"]) for r in serve_query] == [pairs(r["matches"]) for r in cli_query]
    assert [(r["added"], pairs(r["matches"])) for r in cli_check] == [
        (added, [list(m) for m in matches]) for added, matches in py_check]
    assert [(r["added"], pairs(r["matches"])) for r in serve_check] == [
        (r["added"], pairs(r["matches"])) for r in cli_check]
    # Empty documents: the same answer at every door (not added, no matches).
    for i, d in enumerate(probes):
        if d["text"].strip():
            continue
        assert cli_check[i]["added"] is False and cli_check[i].get("empty") is True
        assert serve_check[i]["added"] is False and serve_check[i].get("empty") is True
        assert serve_query[i].get("empty") is True and cli_query[i].get("empty") is True
        assert py_check[i] == (False, []) and py_check[i].empty is True
    # Every door says which documents were empty, the same way.
    assert [c.empty for c in py_check] == [r.get("empty", False) for r in serve_check]
    assert [c.empty for c in py_check] == [r.get("empty", False) for r in cli_check]
    # After the checks the three copies hold the same documents.
    sizes = set()
    for copy in ("a", "b", "c"):
        with neardup.Index.open(str(tmp_path / (copy + ".idx"))) as again:
            sizes.add(len(again))
    assert len(sizes) == 1

    # One stats object, one set of names.
    cli_stats = json.loads(run(cli_path, "index", "stats", "--json", idx))
    assert list(cli_stats) == list(py_stats) == list(serve_stats)
    assert "documents" in cli_stats and "method" in cli_stats
    assert py_stats["method"] == serve_stats["method"] == cli_stats["method"]
    assert py_stats["boilerplate"] == serve_stats["boilerplate"] == cli_stats["boilerplate"]
    if name == "lines":
        assert cli_stats["boilerplate"]["mode"] == "lines"
        assert cli_stats["boilerplate"]["lines"] == 3  # the footer's three lines


def test_lines_index_strips_the_footer_in_python(cli_path, tmp_path):
    docs = corpus()
    src = tmp_path / "corpus.jsonl"
    src.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs),
                   encoding="utf-8")
    idx = tmp_path / "l.idx"
    run(cli_path, "index", "build", "--quiet", "--method", "chars5,boilerplate=lines", src,
        "-o", idx)
    assert not os.path.exists(str(idx) + ".lines")  # the counts are in the commit
    with neardup.Index.open(str(idx)) as index:
        body = docs[0]["text"].replace("\n" + FOOTER, "")
        # The footer is left out: the body alone is the same document.
        assert index.query(body, k=0)[0] == ("d00", 0)


def test_index_create_refuses_an_existing_index_and_close_saves(tmp_path):
    path = str(tmp_path / "x.idx")
    with neardup.Index.create(path, method="chars5") as index:
        assert index.add(["a", "b", "e"], ["第一段不同的文字内容讲天气", "第二段完全不同的文字讲做饭", ""]) == [
            True, True, False]
        assert "writable" in repr(index) and "documents=2" in repr(index)
    # with-exit closed and saved it.
    assert "closed" in repr(index)
    with pytest.raises(neardup.InvalidArgumentError, match="exists"):
        neardup.Index.create(path)
    again = neardup.Index.create(path, overwrite=True)
    again.close(save=False)  # discards: the old index stays
    reader = neardup.Index.open(path)
    assert len(reader) == 2 and "a" in reader
    reader.close()
    writer = neardup.Index.open(path, writable=True)
    assert writer.remove("a") == 1 and writer.remove(["b", "nosuch"]) == 1
    writer.add("c", "第三段文字关于旅行和风景")
    writer.close()  # unsaved: saved by close
    reader = neardup.Index.open(path)
    assert len(reader) == 1 and "c" in reader and "a" not in reader
    assert reader.stats()["documents"] == 1


def test_check_reports_an_empty_document_as_serve_does(tmp_path):
    # serve's /v1/check answers {"added": false, "empty": true}; Index.check
    # said only (False, []), the same as a document that matched and was
    # not added.
    text = "网页去重是搜索引擎的基础工作之一，近似重复的网页会浪费存储和带宽。"
    with neardup.Index.create(str(tmp_path / "e.idx")) as idx:
        empty = idx.check("e", "")
        assert isinstance(empty, neardup.CheckResult)
        assert (empty.added, empty.matches, empty.empty) == (False, [], True)
        added, matches = idx.check("a", text)  # still unpacks as a pair
        assert (added, matches) == (True, [])
        again = idx.check("b", text)
        assert again.added is False and again.matches == [("a", 0)] and again.empty is False
        batch = idx.check(["c", "d"], ["  ", text])
        assert [r.empty for r in batch] == [True, False]
        assert [r.added for r in batch] == [False, False]
        assert "empty=True" in repr(batch[0])
        assert pickle.loads(pickle.dumps(empty)).empty is True
        assert len(idx) == 1


def test_evict_removes_the_oldest_and_is_counted_in_stats(tmp_path):
    path = str(tmp_path / "e.idx")
    texts = ["第%d段文字：%s" % (i, "春夏秋冬东南西北"[i] * 12 + "天地玄黄宇宙洪荒" * (i + 1))
             for i in range(6)]
    with neardup.Index.create(path, method="chars5") as index:
        assert index.add(["d%d" % i for i in range(6)], texts) == [True] * 6
    writer = neardup.Index.open(path, writable=True)
    assert writer.evict() == 0  # no limit
    assert writer.evict(max_count=4) == 2  # the oldest two: d0, d1
    assert "d0" not in writer and "d1" not in writer and "d2" in writer
    assert writer.query(texts[0], k=0) == []
    assert writer.evict(max_age=3600) == 0  # all added just now
    assert writer.stats()["evicted"] == 2
    with pytest.raises(neardup.InvalidArgumentError, match="negative"):
        writer.evict(max_age=-1)
    writer.close()
    reader = neardup.Index.open(path)
    assert len(reader) == 4 and "d1" not in reader
    with pytest.raises(neardup.InvalidArgumentError, match="read-only"):
        reader.evict(max_count=1)
