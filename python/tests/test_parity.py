"""One job, one answer (issue 23): `neardup dedup` on a file, on a pipe with
and without `-`, and Python's neardup.dedup give the same records, pairs,
clusters and kept sets (the library's dedup job, neardup/dedup_job.h, behind
each door), on a corpus with empty documents, a 3-line footer shared by 13
documents and near duplicates; and an empty input is an empty result."""

import json
import os
import pickle
import subprocess

import pytest

import neardup

# A footer's lines must not be the least line key of most pages (the group
# tag, neardup/boilerplate.h), or the pages count as one group: this one is not.
FOOTER = "\n责任编辑：李四\n来源：人民网\n更多精彩内容请关注我们的公众号"
BASES = [
    "今天天气很好，我们去公园散步，看到了很多盛开的花，心情非常愉快。",
    "股市今天大涨，沪指收盘上涨百分之三，两市成交量明显放大，券商板块领涨。",
    "新款手机发布会在北京举行，售价四千元起，搭载最新的处理器和更大的电池。",
    "中国女排三比零战胜对手，顺利晋级决赛，主攻手拿下全场最高的二十五分。",
    "研究发现每天喝水八杯有益健康，专家建议少喝含糖饮料，多吃蔬菜水果。",
    "铁路部门宣布暑运期间加开列车两百对，旅客可以通过官方网站购买车票。",
    "教育部发布通知，要求各地中小学减轻学生课业负担，保证每天锻炼一小时。",
    "气象台预报明天有大到暴雨，提醒市民出行携带雨具，注意防范城市内涝。",
    "博物馆推出夜间开放活动，观众可以在晚上参观青铜器展览，门票需要提前预约。",
    "一家科技公司发布年度财报，营业收入同比增长两成，研发投入再创新高。",
]


def corpus():
    rows = []
    for i, base in enumerate(BASES):
        # Pages of several lines of their own, then the footer.
        text = (base + BASES[(i + 3) % len(BASES)]).replace("，", "\n")
        rows.append({"id": "n%d" % i, "text": text + FOOTER})
        if i < 3:  # a near copy
            rows.append({"id": "c%d" % i, "text": text.replace("\n", "，", 1) + FOOTER})
    rows.insert(3, {"id": "empty", "text": ""})
    rows.insert(7, {"id": "blank", "text": "  \n "})
    rows.append({"id": "other", "text": "一篇完全不同的短文，讲述了一个关于山里老人的故事。"})
    return rows


METHODS = [
    ([], {}),
    (["--method", "minhash"], {"method": "minhash"}),
    (["--method", "tfidf,bits=64", "-k", "3"], {"method": "tfidf,bits=64", "k": 3}),
]


def run(args, stdin=None):
    done = subprocess.run([os.environ["NEARDUP_CLI"], *map(str, args)], input=stdin,
                          capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


@pytest.fixture()
def corpus_file(cli, tmp_path):  # cli: skipped without the binary
    rows = corpus()
    path = tmp_path / "corpus.jsonl"
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    path.write_text(data, encoding="utf-8")
    return rows, path, data.encode()


@pytest.mark.parametrize("args,options", METHODS)
def test_every_door_gives_the_same_answer(corpus_file, tmp_path, args, options):
    rows, path, data = corpus_file
    outputs = {}
    for door, (inputs, stdin) in {"file": ([path], None), "pipe": ([], data),
                                  "dash": (["-"], data)}.items():
        files = {kind: tmp_path / ("%s.%s.jsonl" % (door, kind))
                 for kind in ("pairs", "clusters", "unique")}
        records = run(["dedup", "--quiet", *args, *inputs, "--pairs-out", files["pairs"],
                       "--clusters-out", files["clusters"], "--unique-out", files["unique"]],
                      stdin)
        outputs[door] = [records] + [files[k].read_bytes() for k in sorted(files)]
    assert outputs["pipe"] == outputs["file"]
    assert outputs["dash"] == outputs["file"]
    expected = [json.loads(line) for line in outputs["file"][0].splitlines()]
    summary = {}
    assert list(neardup.dedup(rows, summary=summary, **options)) == expected
    # The footer was found (so it left the fingerprints), and near copies too.
    assert summary["boilerplate_lines"] == 3
    assert summary["duplicates"] >= 3
    assert any(r.get("empty") for r in expected)
    if "minhash" not in args:  # verified pairs (on by default): their Jaccard, as the CLI's
        assert all("jaccard" in r for r in expected)
        assert all(r["jaccard"] is not None for r in expected if r["duplicate"])
    kept = [r for r in rows if r["id"] in {x["id"] for x in expected if not x["duplicate"]}]
    assert list(neardup.dedup(rows, unique=True, **options)) == kept
    # Without boilerplate removal the answer differs: the default matters.
    off = list(neardup.dedup(rows, boilerplate="off", **options))
    assert off == [json.loads(line) for line in run(
        ["dedup", "--quiet", *args, "--boilerplate", "off", path]).splitlines()]


@pytest.mark.parametrize("mode", ["cluster", "stream"])
def test_a_pipe_equals_the_file_in_every_mode(corpus_file, mode):
    _, path, data = corpus_file
    expected = run(["dedup", "--quiet", "--mode", mode, path])
    assert run(["dedup", "--quiet", "--mode", mode], data) == expected
    assert run(["dedup", "--quiet", "--mode", mode, "-"], data) == expected


@pytest.mark.parametrize("args,options", METHODS)
@pytest.mark.parametrize("mode", ["cluster", "stream"])
def test_an_empty_input_is_an_empty_result(cli, tmp_path, args, options, mode):
    if "minhash" in args and mode == "stream":
        pytest.skip("the minhash method supports cluster mode only")
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert run(["dedup", "--quiet", "--mode", mode, *args, empty]) == ""
    assert run(["dedup", "--quiet", "--mode", mode, *args], b"") == ""
    assert list(neardup.dedup([], mode=mode, **options)) == []


def test_the_cli_options_have_python_twins(corpus_file):
    rows, path, _ = corpus_file
    for args, options in [
        (["--cluster", "components"], {"cluster": "components"}),
        (["--keep", "longest"], {"keep": "longest"}),
        (["--short-features", "30"], {"short_features": 30}),
        (["--short-features", "0"], {"short_features": 0}),
        (["--short-rule", "exact"], {"short_rule": "exact"}),
        (["--short-features", "auto", "--short-rule", "auto"], {}),
        (["--short-features", "30", "--short-rule", "sketch"],
         {"short_features": 30, "short_rule": "sketch"}),
        (["--verify-jaccard", "0"], {"verify_jaccard": 0}),
        (["--verify-jaccard", "0.9"], {"verify_jaccard": 0.9}),
        (["--verify-short-features", "40", "--verify-short-jaccard", "0.8"],
         {"verify_short_features": 40, "verify_short_jaccard": 0.8}),
        (["--banded", "--recall", "0.9"], {"join": "banded", "recall": 0.9}),
        (["--boilerplate-min-docs", "9"], {"boilerplate_min_docs": 9}),
    ]:
        expected = [json.loads(line) for line in run(["dedup", "--quiet", *args, path])
                    .splitlines()]
        assert list(neardup.dedup(rows, **options)) == expected, args


def test_a_data_frame_is_refused_with_the_fix():
    class Frame:  # what pandas.DataFrame looks like: iterating it gives column names
        columns = ["id", "text"]

        def iterrows(self):
            return iter(())

        def __iter__(self):
            return iter(self.columns)

    with pytest.raises(TypeError, match=r'to_dict\("records"\)'):
        neardup.dedup(Frame())


def test_methods_and_functions_cross_to_worker_processes():
    import multiprocessing

    method = neardup.Method("tfidf,bits=64")
    assert pickle.loads(pickle.dumps(method)) == method
    texts = ["今天天气很好，我们去公园散步。", "股市今天大涨，沪指收盘上涨。"]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        assert pool.map(neardup.fingerprint, texts) == [neardup.fingerprint(t) for t in texts]


def test_distance_takes_what_fingerprint_batch_returns():
    numpy = pytest.importorskip("numpy")
    texts = ["今天天气很好，我们去公园散步。", "今天天气很好，我们去公园散步吧。"]
    for method in (None, "tfidf,bits=64"):
        batch = neardup.fingerprint_batch(texts, method=method)
        assert isinstance(batch, numpy.ndarray)
        assert neardup.distance(batch[0], batch[1]) == neardup.distance(
            texts[0], texts[1], method=method)


def short_copies():
    # Short texts with copies edited in two places: many beyond k = 28 with
    # feature-set Jaccard >= 0.5, which only the short-document rule pairs.
    rows = []
    for i, base in enumerate(BASES):
        rows.append({"id": "s%d" % i, "text": base})
        for c in range(2):
            text = list(base)
            text[3 + 5 * c] = "某"
            text[len(text) // 2 + 4 + 5 * c] = "某"
            rows.append({"id": "s%dc%d" % (i, c), "text": "".join(text)})
    return rows


def test_the_default_short_rule_is_one_answer_at_every_door(cli, tmp_path):
    # At the default the job resolves the rule (chars5u, cluster mode, the
    # method's k: the sketch rule over every document at 0.52): the CLI, Python and the
    # explicit options give the same records and pairs, the rule off
    # another answer, and both summaries name what ran.
    rows = short_copies()
    path = tmp_path / "short.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")

    def cli_run(*args):
        pairs = tmp_path / "pairs.jsonl"
        summary = tmp_path / "summary.json"
        records = run(["dedup", "--quiet", *args, path, "--pairs-out", pairs,
                       "--summary-json", summary])
        return ([json.loads(line) for line in records.splitlines()], pairs.read_text(),
                json.loads(summary.read_text()))

    records, pairs, summary = cli_run()
    assert summary["short_rule"] == {"rule": "sketch", "features": 1000000, "jaccard": 0.52,
                                     "default": True}
    explicit = cli_run("--short-features", "1000000", "--short-rule", "sketch",
                       "--short-jaccard", "0.52")
    assert explicit[:2] == (records, pairs)
    off = cli_run("--short-features", "0")
    assert off[2]["short_rule"] == {"rule": "off", "default": False}
    assert off[0] != records, "the rule changes the answer here"
    beyond_k = [p for p in map(json.loads, pairs.splitlines()) if p["distance"] > 28]
    assert beyond_k
    py_summary = {}
    assert list(neardup.dedup(rows, summary=py_summary)) == records
    assert py_summary["short_features"] == 1000000 and py_summary["short_rule"] == "sketch"
    assert list(neardup.dedup(rows, short_features=0)) == off[0]
    # Where the default does not fit (stream mode), the rule is off with its reason.
    stream = cli_run("--mode", "stream")
    assert stream[2]["short_rule"] == {"rule": "off", "default": True,
                                       "off_because": "stream mode"}
    py_summary = {}
    assert list(neardup.dedup(rows, mode="stream", summary=py_summary)) == stream[0]
    assert py_summary["short_features"] == 0 and py_summary["short_rule"] == "off"
