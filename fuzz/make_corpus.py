#!/usr/bin/env python3
# Writes the seed corpora fuzz/corpus/<target>/ (checked in; rerun after a
# format change). Every seed is generated here from text written for this
# purpose: no third-party data. Needs python3 and the zstd command (for the
# compressed store chunks); nothing else.
#   python3 fuzz/make_corpus.py
import gzip
import hashlib
import io
import os
import sqlite3
import struct
import subprocess
import tempfile
import zipfile
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")

ZH = "中国人民银行今天发布了新的统计数据。经济发展保持稳定！记者在北京报道。"
EN = "The quick brown fox jumps over the lazy dog. Near-duplicate text detection.\n"


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def recipe(entries):
    return b"".join(varint(c) + varint(o) + varint(n) for c, o, n in entries)


def zstd_frame(data):
    with tempfile.NamedTemporaryFile() as f:
        f.write(data)
        f.flush()
        return subprocess.run(["zstd", "-q", "-c", "-3", f.name], check=True,
                              capture_output=True).stdout


ROFF = (".TH DEMO 1 \"2026\" \"neardup\"\n.SH NAME\ndemo \\- a page written for fuzzing\n"
        ".SH SYNOPSIS\n.B demo\n[\\fIOPTION\\fR]... \\fIFILE\\fR\n.SH DESCRIPTION\n"
        ".PP\nText with \\(em dashes, \\[rq]quotes\\[lq], \\s+2size\\s0 and \\*(lqstrings\\*(rq.\n"
        ".TP\n.BR \\-k \", \" \\-\\-keep\nKeep the first.\n.de XX\nignored\n..\n"
        ".\\\" a comment\n\\&.not a request\n中文的说明文字。\n.IP \\(bu 2\nitem\n")


def seeds_text():
    put("roff_fuzz", "page.1", ROFF)
    put("roff_fuzz", "escapes", "\\f中\\(中文\\s'+2'\\h'1i'\\w'x'\\*[foo]\\[em]\\e\\\\\n.B \"a\"\"b\"\n")
    put("normalizer_fuzz", "mixed", "ＡＢＣ１２３ 繁體中文 ﬁ Straße\u00a0\u3000tab\there\r\n" + ZH)
    put("normalizer_fuzz", "bad_utf8", b"ok \xff\xfe \xe4\xb8 half \x00 nul")
    put("segmenter_fuzz", "zh", ZH * 3)
    put("segmenter_fuzz", "mixed", "iPhone 15 发布会在2026年9月举行，价格为5999元。" + EN)
    jsonl = "".join('{"id": "d%d", "text": "%s %d", "title": "t", "score": %d}\n' % (i, ZH, i, i)
                    for i in range(4))
    put("jsonl_reader_fuzz", "docs.jsonl", jsonl + '{"id": 5}\nnot json\n{"text": "\\ud800"}\n')
    put("jsonl_reader_fuzz", "lines.txt", EN * 3 + "\n\n" + ZH + "\n")
    put("idf_fuzz", "idf.txt", "".join("%s %.6f\n" % (w, 5.0 + i * 0.7) for i, w in
                                       enumerate(["中国", "人民", "银行", "经济", "发展",
                                                  "记者", "今天", "the", "fox"])))
    put("idf_fuzz", "bad_line", "中国 1.5\n人民\n银行 x\n")
    main_dict = "中国 1000 ns\n人民 800 n\n银行 400 n\n发展 300 vn\n经济 350 n\n"
    put("user_dict_fuzz", "main_dict", b"\x00" + main_dict.encode())
    put("user_dict_fuzz", "user_dict", b"\x01" + "\ufeff云计算 5 n\n创新办\n台中 0\nneardup 10 eng\n"
        .encode())
    put("user_dict_fuzz", "user_dict_nohmm", b"\x03" + "自然语言处理 100 n\n\n  空格  \n".encode())


def seeds_gzip():
    jsonl = "".join('{"id": "g%d", "text": "%s"}\n' % (i, ZH) for i in range(3)).encode()
    put("gzip_fuzz", "jsonl_gz", b"\x00" + gzip.compress(jsonl, mtime=0))
    put("gzip_fuzz", "roff_gz", b"\x00" + gzip.compress(ROFF.encode(), mtime=0))
    put("gzip_fuzz", "compress_me", b"\x01" + jsonl)
    put("gzip_fuzz", "truncate_me", bytes([0x03 | (5 << 3)]) + ROFF.encode())
    put("gzip_fuzz", "flip_me", bytes([0x05 | (9 << 3)]) + jsonl)
    # Two gzip members back to back, and plain text behind a .gz name.
    put("gzip_fuzz", "two_members", b"\x00" + gzip.compress(b"first\n", mtime=0) +
        gzip.compress(b"second\n", mtime=0))
    put("gzip_fuzz", "not_gzip", b"\x00" + EN.encode())


def seeds_docx():
    body = ('<w:p><w:r><w:t>%s</w:t></w:r></w:p>' % ZH +
            '<w:p><w:r><w:t xml:space="preserve">tab</w:t><w:tab/><w:t>after</w:t><w:br/>'
            '</w:r></w:p>')
    doc = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
           '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
           '<w:body>%s</w:body></w:document>' % body)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("[Content_Types].xml", (2026, 1, 1, 0, 0, 0)),
                   '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/'
                   '2006/content-types"/>')
        z.writestr(zipfile.ZipInfo("word/document.xml", (2026, 1, 1, 0, 0, 0)), doc)
    put("docx_fuzz", "small.docx", buf.getvalue())


def make_pdf(streams):
    # One page per content stream; Helvetica; a classic xref table.
    n = len(streams)
    objs = ["<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [%s] /Count %d >>" % (
                " ".join("%d 0 R" % (4 + 2 * i) for i in range(n)), n),
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, s in enumerate(streams):
        objs.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
                    "<< /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (5 + 2 * i))
        objs.append("<< /Length %d >>\nstream\n%s\nendstream" % (len(s), s))
    out = "%PDF-1.4\n"
    offsets = []
    for i, o in enumerate(objs):
        offsets.append(len(out))
        out += "%d 0 obj\n%s\nendobj\n" % (i + 1, o)
    xref = len(out)
    out += "xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += "".join("%010d 00000 n \n" % off for off in offsets)
    out += "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return out.encode("latin-1")


def seeds_pdf():
    put("pdf_fuzz", "two_pages.pdf", make_pdf(["BT /F1 24 Tf 72 700 Td (Hello first page) Tj ET",
                                               "BT /F1 12 Tf 72 700 Td (Second page) Tj ET"]))
    put("pdf_fuzz", "no_text.pdf", make_pdf(["0 0 m 100 100 l S"]))
    # A compressed content stream.
    s = zlib.compress(b"BT /F1 18 Tf 72 650 Td (Deflated text) Tj ET")
    pdf = make_pdf(["X"]).replace(b"<< /Length 1 >>\nstream\nX\nendstream",
                                  b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(s) +
                                  s + b"\nendstream")
    put("pdf_fuzz", "flate.pdf", pdf)
    # Graphics states nested past the scan's limit (refused before poppler),
    # and q that are not operators: in a string, names, a comment, inline
    # image data.
    deep = zlib.compress(b"q " * 40000 + b"BT /F1 18 Tf 72 650 Td (Deep) Tj ET " + b"Q " * 40000)
    pdf = make_pdf(["X"]).replace(b"<< /Length 1 >>\nstream\nX\nendstream",
                                  b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(deep) +
                                  deep + b"\nendstream")
    put("pdf_fuzz", "nested_q.pdf", pdf)
    put("pdf_fuzz", "lookalike_q.pdf", make_pdf([
        "q BT /F1 12 Tf 72 600 Td (q q q \\) q) Tj ET /q /Q % q q\n"
        "BI /W 2 /H 1 /BPC 8 /CS /G ID  q\nEI Q BT /F1 12 Tf 72 500 Td (after) Tj ET"]))


def seeds_index():
    # index_load_fuzz: first byte odd -> the target writes the XXH3 checksum
    # itself into the last 8 bytes (doc/index_format.md).
    def index(kind, bits, max_k, blocks, entries):
        head = b"NDUPIDX1" + struct.pack("<IIIIIIQ", 1, kind, bits, max_k, blocks, 0, len(entries))
        body = b""
        for i, fp in entries:
            body += struct.pack("<QQ", i, fp & (2**64 - 1))
            if bits == 128:
                body += struct.pack("<Q", fp >> 64)
        return head + body + b"\0" * 8
    fps = [(i, (0x9E3779B97F4A7C15 * (i + 1)) & (2**64 - 1)) for i in range(6)]
    put("index_load_fuzz", "linear64", b"\x01" + index(1, 64, 64, 0, fps))
    put("index_load_fuzz", "permuted64", b"\x01" + index(2, 64, 3, 4, fps))
    fps128 = [(i, (0x9E3779B97F4A7C15 * (i + 7)) * (2**64 + 3) & (2**128 - 1)) for i in range(4)]
    put("index_load_fuzz", "permuted128", b"\x03" + index(2, 128, 8, 10, fps128))
    put("index_load_fuzz", "bad_checksum", b"\x00" + index(1, 64, 64, 0, fps))


def seeds_index_ids():
    # index_ids_fuzz: first byte odd -> the rest follows a valid version 2
    # header of the target's 8-entry index; even -> the rest is the whole file.
    ids = "".join('"d%d"\n' % i for i in range(8))
    put("index_ids_fuzz", "valid", b"\x01" + ids.encode())
    put("index_ids_fuzz", "removed", b"\x01" + ids.replace('"d3"', "null").encode())
    put("index_ids_fuzz", "short", b"\x01" + '"d0"\n"d1"\n'.encode())
    put("index_ids_fuzz", "wrong_types", b"\x01" + ids.replace('"d5"', "5").encode())
    v1 = '{"neardup_index_ids":1,"pipeline":{"bits":64},"fingerprints_input":false}\n' + ids
    put("index_ids_fuzz", "version1", b"\x00" + v1.encode())
    put("index_ids_fuzz", "bad_header", b"\x00" + b'{"neardup_index_ids":"2","pipeline":{"bits":"128"}}\n')


def seeds_index_v2():
    # The harness writes four valid version 2 files itself (64/128 bits,
    # exact tables and bands); a seed picks one (low 2 bits of the first
    # byte) and a mode (next 2 bits): 1 = XOR edits with the checksum kept,
    # 2 = edits then the checksum recomputed, 3 = cut then as 2. Edits are
    # records of a 4-byte little-endian offset and a byte.
    def edits(*pairs):
        return b"".join(struct.pack("<IB", at, x) for at, x in pairs)
    for fixture in range(4):
        put("index_v2_fuzz", "valid_%d" % fixture, bytes([fixture | (1 << 2)]))
        put("index_v2_fuzz", "section_edit_%d" % fixture,
            bytes([fixture | (1 << 2)]) + edits((80, 0xFF), (200, 0x01), (700, 0x80)))
        put("index_v2_fuzz", "meta_edit_%d" % fixture,
            bytes([fixture | (2 << 2)]) + edits((0xFFFFFFF0, 0x01), (0xFFFFFFE0, 0x7F)))
        put("index_v2_fuzz", "cut_%d" % fixture,
            bytes([fixture | (3 << 2)]) + struct.pack("<I", 1000))
    put("index_v2_fuzz", "raw_v1_magic", b"\x00NDUPIDX1\x02\x00\x00\x00" + b"\x00" * 40)


def seeds_store():
    # Mode 0: recipes.
    put("store_fuzz", "recipe", b"\x00" + recipe([(1, 0, 120), (2, 5, 7), (300, 2**40, 1)]))
    put("store_fuzz", "recipe_long_varint", b"\x00" + b"\x81\x80\x80\x80\x80\x80\x80\x80\x80\x01"
        + b"\x00\x05")
    # Mode 1: chunks (codec byte, 4-byte recorded size: bit 0 set = use the frame's size).
    text = (ZH * 4).encode()
    frame = zstd_frame(text)
    put("store_fuzz", "chunk_zstd", b"\x01\x01" + struct.pack("<I", len(text) << 1) + frame)
    put("store_fuzz", "chunk_zstd_frame_size", b"\x01\x01" + struct.pack("<I", 1) + frame)
    put("store_fuzz", "chunk_raw", b"\x01\x00" + struct.pack("<I", len(text) << 1) + text)
    # Mode 2: a whole store written here, independently of the library:
    # files sharing chunks, one zstd chunk, one slice entry.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.db")
        db = sqlite3.connect(path)
        db.execute("PRAGMA page_size = 512")  # a small seed
        db.executescript("""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE chunks(id INTEGER PRIMARY KEY AUTOINCREMENT, sha256 BLOB NOT NULL UNIQUE,
  size INTEGER NOT NULL, codec INTEGER NOT NULL, data BLOB NOT NULL, refs INTEGER NOT NULL,
  simhash INTEGER);
CREATE TABLE files(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, size INTEGER NOT NULL,
  sha256 BLOB NOT NULL, chunker TEXT NOT NULL, entries INTEGER NOT NULL, recipe BLOB NOT NULL);
INSERT INTO meta VALUES ('format', 'neardup-store'), ('schema_version', '1'),
  ('generation', '0');
""")
        paragraphs = [(ZH + "\n").encode(), (EN).encode(), ("第三段。" * 5 + "\n").encode()]
        for i, p in enumerate(paragraphs):
            codec, data = (1, zstd_frame(p)) if i == 0 else (0, p)
            db.execute("INSERT INTO chunks(sha256, size, codec, data, refs, simhash) "
                       "VALUES (?, ?, ?, ?, 0, ?)",
                       (hashlib.sha256(p).digest(), len(p), codec, data, 12345 * (i + 1)))
        files = {"a.txt": [(1, 0, len(paragraphs[0])), (2, 0, len(paragraphs[1]))],
                 "b.txt": [(2, 0, len(paragraphs[1])), (3, 0, len(paragraphs[2])),
                           (1, 0, 9)]}
        refs = {}
        for name, entries in files.items():
            content = b"".join(paragraphs[c - 1][o:o + n] for c, o, n in entries)
            db.execute("INSERT INTO files(name, size, sha256, chunker, entries, recipe) "
                       "VALUES (?, ?, ?, 'simhash', ?, ?)",
                       (name, len(content), hashlib.sha256(content).digest(), len(entries),
                        recipe(entries)))
            for c, _, _ in entries:
                refs[c] = refs.get(c, 0) + 1
        for c, n in refs.items():
            db.execute("UPDATE chunks SET refs = ? WHERE id = ?", (n, c))
        db.commit()
        db.execute("VACUUM")
        db.close()
        with open(path, "rb") as f:
            put("store_fuzz", "store.db", b"\x02" + f.read())


def seeds_serve_request():
    t = "serve_request_fuzz"
    body = '{"fingerprints":[{"id":"a","fingerprint":"000000000000000000000000000000ff"}]}'
    post = ("POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\n\r\n%s" % (len(body), body))
    put(t, "post", post)
    put(t, "pipelined", post + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + post)
    chunks = "".join("%x\r\n%s\r\n" % (len(body[i:i + 7]), body[i:i + 7])
                     for i in range(0, len(body), 7))
    chunked_head = ("POST /v1/check HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                    "Content-Type: application/json\r\n\r\n")
    put(t, "chunked", chunked_head + chunks + "0\r\n\r\n")
    # httplib 0.11.4 does not take trailers: a 400.
    put(t, "chunked_trailer", chunked_head + chunks + "0\r\nX-Trailer: 1\r\n\r\n")
    put(t, "chunked_bad_size", "POST /v1/check HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        "fffffffffffffffff\r\nab\r\n0\r\n\r\n")
    put(t, "documents", "POST /v1/check HTTP/1.1\r\nContent-Length: 60\r\n\r\n"
        '{"k":3,"documents":[{"id":"d","text":"\u4e2d\u6587","title":"t"}]}')
    put(t, "nested", "POST /v1/check HTTP/1.1\r\nContent-Length: 80\r\n\r\n"
        + "[" * 40 + "]" * 40)
    put(t, "many_headers", "GET /healthz HTTP/1.1\r\n" + "".join(
        "X-%d: v\r\n" % i for i in range(25)) + "\r\n")
    put(t, "expect_continue", "POST /v1/check HTTP/1.1\r\nExpect: 100-continue\r\n"
        "Content-Length: 2\r\n\r\n{}")
    put(t, "multipart", "POST /v1/check HTTP/1.1\r\nContent-Type: multipart/form-data; "
        "boundary=b\r\nContent-Length: 40\r\n\r\n--b\r\nContent-Disposition: form-data\r\n\r\n--b--")


def main():
    # Seeds are (re)written in place; nothing is deleted, so the regression
    # inputs kept beside them (fixed findings, index_log_fuzz's log records)
    # stay.
    seeds_text()
    seeds_gzip()
    seeds_docx()
    seeds_pdf()
    seeds_index()
    seeds_index_ids()
    seeds_index_v2()
    seeds_store()
    seeds_serve_request()
    for target in sorted(os.listdir(ROOT)):
        files = os.listdir(os.path.join(ROOT, target))
        size = sum(os.path.getsize(os.path.join(ROOT, target, f)) for f in files)
        print("%-20s %2d seeds, %6d bytes" % (target, len(files), size))


if __name__ == "__main__":
    main()
