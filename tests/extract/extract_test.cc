// Copyright 2026 The neardup Authors.

#include "neardup/extract.h"

#include <gtest/gtest.h>
#include <zip.h>
#include <zlib.h>

#include <string>
#include <vector>

#include "neardup/text.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using Members = std::vector<std::pair<std::string, std::string>>;

// A ZIP archive holding `members`, written by libzip (deflate).
std::string MakeZip(const Members& members) {
  const std::string dir = testing::MakeTempDir("zip");
  const std::string path = dir + "/out.zip";
  int error = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  EXPECT_NE(z, nullptr);
  if (!z) return "";
  for (const auto& [name, data] : members) {
    zip_source_t* src = zip_source_buffer(z, data.data(), data.size(), 0);
    EXPECT_GE(zip_file_add(z, name.c_str(), src, ZIP_FL_ENC_UTF_8), 0);
  }
  EXPECT_EQ(zip_close(z), 0);
  return testing::ReadFile(path);
}

std::string DocumentXml(const std::string& body) {
  return R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>)"
         R"(<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">)"
         "<w:body>" +
         body + "</w:body></w:document>";
}

std::string MakeDocx(const std::string& body) {
  return MakeZip({{"[Content_Types].xml", "<Types/>"}, {"word/document.xml", DocumentXml(body)}});
}

// Only regular files are read, and only up to max_file_bytes: a directory
// is refused, a file over the cap is ResourceExhausted. (/dev/zero and a
// FIFO, which the old reader read without end or waited on, are checked
// through the CLI under a memory and time limit: store_cli_test.cc.)
TEST(ExtractTextTest, OnlyBoundedRegularFilesAreRead) {
  const std::string dir = testing::MakeTempDir("extract");
  Result<std::string> r = ExtractText(dir);
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  const std::string text = dir + "/a.txt";
  testing::WriteFile(text, std::string(1000, 'x'));
  ExtractOptions options;
  options.max_file_bytes = 999;
  r = ExtractText(text, options);
  EXPECT_TRUE(r.status().IsResourceExhausted()) << r.status().ToString();
  options.max_file_bytes = 1000;
  r = ExtractText(text, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->size(), 1000u);
}

TEST(DocxTest, ParagraphsRunsTabsAndBreaks) {
  const std::string docx = MakeDocx(
      "<w:p><w:pPr><w:tabs><w:tab w:val=\"left\" w:pos=\"720\"/></w:tabs></w:pPr>"
      "<w:r><w:t>第一段。</w:t></w:r><w:r><w:tab/><w:t xml:space=\"preserve\"> 带空格 </w:t></w:r>"
      "</w:p>"
      "<w:p><w:r><w:t>第二</w:t><w:br/><w:t>行</w:t></w:r></w:p>"
      "<w:p/>"
      "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>表格</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"
      "<w:p><w:del><w:r><w:delText>删除</w:delText></w:r></w:del>"
      "<w:r><w:t>&lt;转义&amp;</w:t></w:r></w:p>");
  Result<std::string> text = ExtractDocxText(docx);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "第一段。\t 带空格 \n第二\n行\n\n表格\n<转义&\n");
}

TEST(DocxTest, DeepNestingDoesNotOverflowTheStack) {
  std::string body = "<w:p>";
  for (int i = 0; i < 100000; ++i) body += "<w:r>";
  body += "<w:t>深</w:t>";
  for (int i = 0; i < 100000; ++i) body += "</w:r>";
  body += "</w:p>";
  Result<std::string> text = ExtractDocxText(MakeDocx(body));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "深\n");
}

TEST(DocxTest, HostileInputGivesClearErrors) {
  const std::string good = MakeDocx("<w:p><w:r><w:t>好</w:t></w:r></w:p>");
  struct Case {
    std::string name;
    std::string bytes;
    std::string expect;  // a piece of the message
  };
  const std::vector<Case> cases = {
      {"empty", "", "not a readable ZIP"},
      {"not a zip", "hello world, not a zip at all", "not a readable ZIP"},
      {"truncated", good.substr(0, good.size() / 2), "not a readable ZIP"},
      {"truncated tail", good.substr(0, good.size() - 10), "not a readable ZIP"},
      {"no document.xml", MakeZip({{"word/other.xml", "<x/>"}}), "no word/document.xml"},
      {"malformed xml", MakeZip({{"word/document.xml", "<w:document><w:body><w:p>"}}),
       "malformed word/document.xml"},
      {"binary xml", MakeZip({{"word/document.xml", std::string("\0\xff\xfe<<", 5)}}), "malformed"},
      {"wrong root", MakeZip({{"word/document.xml", "<html/>"}}), "no w:document"},
  };
  for (const Case& c : cases) {
    Result<std::string> text = ExtractDocxText(c.bytes, ExtractOptions(), "case.docx");
    ASSERT_FALSE(text.ok()) << c.name;
    EXPECT_NE(text.status().message().find(c.expect), std::string::npos)
        << c.name << ": " << text.status().ToString();
    EXPECT_NE(text.status().message().find("case.docx"), std::string::npos) << c.name;
  }
}

TEST(DocxTest, ZipBombIsBounded) {
  // 16 MiB of XML that deflates to a few KiB; the limit is set to 1 MiB.
  const std::string body = "<w:p><w:r><w:t>" + std::string(16 << 20, 'a') + "</w:t></w:r></w:p>";
  const std::string docx = MakeDocx(body);
  EXPECT_LT(docx.size(), size_t{100} << 10);
  ExtractOptions options;
  options.max_uncompressed_bytes = 1 << 20;
  Result<std::string> text = ExtractDocxText(docx, options, "bomb.docx");
  ASSERT_FALSE(text.ok());
  EXPECT_TRUE(text.status().IsResourceExhausted()) << text.status().ToString();
  // Within the default limit it is read.
  EXPECT_TRUE(ExtractDocxText(docx).ok());
  // The text limit applies too.
  options.max_uncompressed_bytes = uint64_t{64} << 20;
  options.max_text_bytes = 1000;
  EXPECT_TRUE(ExtractDocxText(docx, options).status().IsResourceExhausted());
}

// A minimal PDF: one page per entry of `page_streams` (content streams), the
// Helvetica font, an xref table with the right offsets. `extra_trailer` is
// added to the trailer dictionary; `extra_objects` after the others.
// `stream_keys` is added to every content stream's dictionary (a /Filter).
std::string MakePdf(const std::vector<std::string>& page_streams,
                    const std::string& extra_trailer = "",
                    const std::vector<std::string>& extra_objects = {},
                    const std::string& stream_keys = "") {
  std::vector<std::string> objects;  // object i + 1
  const int n_pages = static_cast<int>(page_streams.size());
  objects.push_back("<< /Type /Catalog /Pages 2 0 R >>");
  std::string kids;
  for (int i = 0; i < n_pages; ++i) kids += std::to_string(4 + 2 * i) + " 0 R ";
  objects.push_back("<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(n_pages) +
                    " >>");
  objects.push_back("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  for (int i = 0; i < n_pages; ++i) {
    objects.push_back("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents " +
                      std::to_string(5 + 2 * i) + " 0 R /Resources << /Font << /F1 3 0 R >> >> >>");
    objects.push_back("<< " + stream_keys + "/Length " + std::to_string(page_streams[i].size()) +
                      " >>\nstream\n" + page_streams[i] + "\nendstream");
  }
  for (const std::string& o : extra_objects) objects.push_back(o);
  std::string pdf = "%PDF-1.4\n";
  std::vector<size_t> offsets;
  for (size_t i = 0; i < objects.size(); ++i) {
    offsets.push_back(pdf.size());
    pdf += std::to_string(i + 1) + " 0 obj\n" + objects[i] + "\nendobj\n";
  }
  const size_t xref = pdf.size();
  pdf += "xref\n0 " + std::to_string(objects.size() + 1) + "\n0000000000 65535 f \n";
  for (size_t off : offsets) {
    char line[32];
    std::snprintf(line, sizeof line, "%010zu 00000 n \n", off);
    pdf += line;
  }
  pdf += "trailer\n<< /Size " + std::to_string(objects.size() + 1) + " /Root 1 0 R " +
         extra_trailer + " >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
  return pdf;
}

TEST(PdfTest, TextLayerPageByPage) {
  const std::string pdf = MakePdf({"BT /F1 24 Tf 72 700 Td (Hello first page) Tj ET",
                                   "BT /F1 24 Tf 72 700 Td (Second page here) Tj ET"});
  Result<std::string> text = ExtractPdfText(pdf);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  const size_t first = text->find("Hello first page");
  const size_t second = text->find("Second page here");
  ASSERT_NE(first, std::string::npos) << *text;
  ASSERT_NE(second, std::string::npos) << *text;
  EXPECT_LT(first, second);
  EXPECT_EQ(text->back(), '\n');
}

TEST(PdfTest, NoTextLayer) {
  const std::string pdf = MakePdf({"0 0 m 100 100 l S"});
  Result<std::string> text = ExtractPdfText(pdf, ExtractOptions(), "scan.pdf");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("no text layer"), std::string::npos)
      << text.status().ToString();
  EXPECT_NE(text.status().message().find("scan.pdf"), std::string::npos);
}

TEST(PdfTest, EncryptedPdfIsRefused) {
  // Standard security handler, revision 2, with a /U entry that the empty
  // user password does not match: poppler cannot open it without a password.
  const std::string hex32(64, 'A');
  const std::string pdf =
      MakePdf({"BT /F1 24 Tf 72 700 Td (Secret) Tj ET"},
              "/Encrypt 6 0 R /ID [<00112233445566778899AABBCCDDEEFF>"
              "<00112233445566778899AABBCCDDEEFF>]",
              {"<< /Filter /Standard /V 1 /R 2 /O <" + hex32 + "> /U <" + hex32 + "> /P -4 >>"});
  Result<std::string> text = ExtractPdfText(pdf, ExtractOptions(), "locked.pdf");
  ASSERT_FALSE(text.ok());
  EXPECT_TRUE(text.status().IsNotSupported()) << text.status().ToString();
  EXPECT_NE(text.status().message().find("encrypted"), std::string::npos);
}

TEST(PdfTest, GarbageAndTruncation) {
  const std::string pdf = MakePdf({"BT /F1 24 Tf 72 700 Td (Hello) Tj ET"});
  for (const std::string& bytes : {std::string(""), std::string("%PDF-1.4\ngarbage"),
                                   pdf.substr(0, pdf.size() / 3), std::string(1000, '\0')}) {
    Result<std::string> text = ExtractPdfText(bytes, ExtractOptions(), "bad.pdf");
    EXPECT_FALSE(text.ok());
    EXPECT_NE(text.status().message().find("bad.pdf"), std::string::npos)
        << text.status().ToString();
  }
}

std::string Deflate(const std::string& data) {
  uLongf size = compressBound(data.size());
  std::string out(size, '\0');
  EXPECT_EQ(compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                      reinterpret_cast<const Bytef*>(data.data()), data.size(), 9),
            Z_OK);
  out.resize(size);
  return out;
}

std::string Repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * n);
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// poppler keeps a graphics state per open q, with no limit: a 4 KB PDF whose
// content inflates to a million nested q took 957 MB. Such a file is refused
// before poppler parses it, compressed or not, in one stream or spread over
// several pages.
TEST(PdfTest, DeeplyNestedGraphicsStatesAreRefusedBeforeExtraction) {
  const std::string text = "BT /F1 24 Tf 72 700 Td (Hello) Tj ET ";
  const std::string bomb = Repeat("q ", 1000000) + text + Repeat("Q ", 1000000);
  const std::string half = Repeat("q\n", 20000) + text;  // never closed
  const std::vector<std::string> pdfs = {
      MakePdf({Deflate(bomb)}, "", {}, "/Filter /FlateDecode "),
      MakePdf({bomb}),
      MakePdf({Deflate(half), Deflate(half)}, "", {}, "/Filter /FlateDecode "),
      // Stray Q do not take the depth below zero (and so cannot hide q).
      MakePdf({Deflate(Repeat("Q ", 100000) + Repeat("q ", 40000) + text)}, "", {},
              "/Filter /FlateDecode "),
  };
  EXPECT_LT(pdfs[0].size(), 8000u);  // the compressed bomb is small
  for (const std::string& pdf : pdfs) {
    Result<std::string> out = ExtractPdfText(pdf, ExtractOptions(), "deep.pdf");
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), Status::Code::kResourceExhausted);
    EXPECT_NE(out.status().message().find("deep.pdf"), std::string::npos);
    EXPECT_NE(out.status().message().find("deeper than 32768"), std::string::npos)
        << out.status().ToString();
  }
}

// Nesting a real file could have, q/Q pairs by the hundred thousand, and q
// inside strings, names, comments and inline image data are all fine.
TEST(PdfTest, OrdinaryNestingAndLookalikesAreRead) {
  const std::string text = "BT /F1 24 Tf 72 700 Td (Hello) Tj ET\n";
  const std::string lookalikes =
      "BT /F1 12 Tf 72 600 Td (" + Repeat("q ", 40000) + ") Tj ET\n" +  // a string
      Repeat("/q ", 40000) + "pop\n" +                                  // names
      "%" + Repeat(" q", 40000) + "\n" +                                // a comment
      "q BI /W 4 /H 1 /BPC 8 /CS /G ID " + Repeat(" q ", 20000) + "\nEI Q\n";
  const std::vector<std::string> streams = {
      Repeat("q ", 1000) + text + Repeat("Q ", 1000),
      Repeat("q 1 0 0 1 0 0 cm Q ", 100000) + text,
      Repeat("q ", 20000) + text,  // deep, never closed, within the limit
      lookalikes + text,
  };
  for (size_t i = 0; i < streams.size(); ++i) {
    const std::string& stream = streams[i];
    SCOPED_TRACE("stream " + std::to_string(i));
    for (const bool flate : {false, true}) {
      const std::string pdf =
          flate ? MakePdf({Deflate(stream)}, "", {}, "/Filter /FlateDecode ") : MakePdf({stream});
      Result<std::string> out = ExtractPdfText(pdf, ExtractOptions(), "ok.pdf");
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_NE(out->find("Hello"), std::string::npos);
    }
  }
}

TEST(PdfTest, FlateBombIsBounded) {
  const std::string stream = "BT /F1 24 Tf 72 700 Td (Hello) Tj ET\n" + std::string(4 << 20, ' ');
  const std::string pdf = MakePdf({Deflate(stream)}, "", {}, "/Filter /FlateDecode ");
  ExtractOptions options;
  options.max_uncompressed_bytes = 1 << 20;
  Result<std::string> out = ExtractPdfText(pdf, options, "bomb.pdf");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(out.status().message().find("decompress"), std::string::npos);
  EXPECT_TRUE(ExtractPdfText(pdf).ok());  // under the default limit
}

TEST(ExtractTextTest, PicksByMagicAndExtension) {
  const std::string dir = testing::MakeTempDir("extract");
  const std::string raw("plain \xff\xfe text\r\nno newline", 26);
  testing::WriteFile(dir + "/a.txt", raw);
  testing::WriteFile(dir + "/b.DOCX", MakeDocx("<w:p><w:r><w:t>文档</w:t></w:r></w:p>"));
  testing::WriteFile(dir + "/c.bin", MakePdf({"BT /F1 12 Tf 72 700 Td (magic pdf) Tj ET"}));
  DocumentKind kind;
  Result<std::string> a = ExtractText(dir + "/a.txt", ExtractOptions(), &kind);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, raw);
  EXPECT_EQ(kind, DocumentKind::kPlainText);
  Result<std::string> b = ExtractText(dir + "/b.DOCX", ExtractOptions(), &kind);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(*b, "文档\n");
  EXPECT_EQ(kind, DocumentKind::kDocx);
  Result<std::string> c = ExtractText(dir + "/c.bin", ExtractOptions(), &kind);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_NE(c->find("magic pdf"), std::string::npos);
  EXPECT_EQ(kind, DocumentKind::kPdf);
  EXPECT_TRUE(ExtractText(dir + "/missing.txt").status().IsIOError());
}

}  // namespace
}  // namespace neardup

namespace neardup {
namespace {

// The document reader serves .docx and .pdf to every subcommand.
TEST(ReaderExtractTest, DocxAndPdfAreReadAsText) {
  const std::string dir = testing::MakeTempDir("reader_extract");
  testing::WriteFile(dir + "/a.docx", MakeDocx("<w:p><w:r><w:t>第一段</w:t></w:r></w:p>"
                                               "<w:p><w:r><w:t>第二段</w:t></w:r></w:p>"));
  testing::WriteFile(dir + "/b.pdf", MakePdf({"BT /F1 24 Tf 72 700 Td (Hello first page) Tj ET"}));
  testing::WriteFile(dir + "/c.pdf", MakePdf({"0 0 m 100 100 l S"}));  // no text layer
  testing::WriteFile(dir + "/d.docx", "PK\x03\x04 truncated");
  std::vector<InputIssue> issues;
  ReadOptions options;
  options.on_issue = [&issues](const InputIssue& i) { issues.push_back(i); };
  auto reader = DocumentReader::Open({dir}, options);
  ASSERT_TRUE(reader.ok());
  std::vector<Document> docs;
  Document doc;
  while ((*reader)->Next(&doc)) docs.push_back(doc);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].text, "第一段\n第二段\n");
  EXPECT_NE(docs[1].text.find("Hello first page"), std::string::npos);
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0].source, dir + "/c.pdf");
  EXPECT_EQ(issues[1].source, dir + "/d.docx");
  EXPECT_EQ((*reader)->stats().unreadable, 2u);
}

}  // namespace
}  // namespace neardup
