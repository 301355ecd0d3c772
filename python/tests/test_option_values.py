"""An IDF table given to a method whose weights use none is refused, as the
CLI refuses --idf there (the rule is Method::Parse's: one place for every
door; tests/cli/option_values_cli_test.cc)."""

import pytest

import neardup


def test_idf_for_a_method_without_idf_is_refused(tmp_path):
    idf = tmp_path / "small.idf"
    idf.write_text("网页 5.0\n搜索引擎 7.5\n", encoding="utf-8")
    for text in ("chars5u,idf=%s" % idf, "minhash,idf=%s" % idf):
        with pytest.raises(ValueError, match="uses no IDF table"):
            neardup.Method(text)
        with pytest.raises(ValueError, match="uses no IDF table"):
            neardup.fingerprint("网页去重是搜索引擎的基础工作之一", method=text)
    # Where the weights use it, it is taken and used.
    m = neardup.Method("tfidf,idf=%s" % idf)
    assert neardup.fingerprint("网页去重是搜索引擎的基础工作之一", method=m) != neardup.fingerprint(
        "网页去重是搜索引擎的基础工作之一", method="tfidf")
