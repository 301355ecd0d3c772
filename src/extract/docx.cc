// Copyright 2026 The neardup Authors.
//
// .docx text: word/document.xml read out of the ZIP with libzip (bounded),
// parsed with pugixml, walked without recursion.

#include <zip.h>

#include <memory>
#include <pugixml.hpp>
#include <string>

#include "neardup/extract.h"

namespace neardup {
namespace {

struct ZipSourceDeleter {
  void operator()(zip_source_t* s) const { zip_source_free(s); }
};
struct ZipDeleter {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct ZipFileDeleter {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

constexpr char kDocumentXml[] = "word/document.xml";

std::string ZipErrorString(zip_error_t* error) {
  std::string msg = zip_error_strerror(error);
  zip_error_fini(error);
  return msg;
}

// The element name without its namespace prefix ("w:p" -> "p").
std::string_view LocalName(const pugi::xml_node& node) {
  std::string_view name = node.name();
  const size_t colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

bool ParentIsRun(const pugi::xml_node& node) {
  const pugi::xml_node parent = node.parent();
  return parent && parent.type() == pugi::node_element && LocalName(parent) == "r";
}

Result<std::string> ReadDocumentXml(std::string_view bytes, const ExtractOptions& options,
                                    const std::string& where) {
  // libzip takes an empty buffer for an empty archive; a ZIP has at least its
  // 22-byte end-of-central-directory record.
  if (bytes.size() < 22) {
    return Status::InvalidArgument(where + ": not a readable ZIP archive (" +
                                   std::to_string(bytes.size()) + " bytes)");
  }
  zip_error_t error;
  zip_error_init(&error);
  std::unique_ptr<zip_source_t, ZipSourceDeleter> source(
      zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error));
  if (!source) return Status::ResourceExhausted(where + ": " + ZipErrorString(&error));
  std::unique_ptr<zip_t, ZipDeleter> archive(
      zip_open_from_source(source.get(), ZIP_RDONLY | ZIP_CHECKCONS, &error));
  if (!archive) {
    return Status::InvalidArgument(where +
                                   ": not a readable ZIP archive: " + ZipErrorString(&error));
  }
  (void)source.release();  // the archive owns the source now
  zip_error_fini(&error);

  const zip_int64_t index = zip_name_locate(archive.get(), kDocumentXml, 0);
  if (index < 0) return Status::InvalidArgument(where + ": not a .docx (no word/document.xml)");
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(index), 0, &st) != 0) {
    return Status::InvalidArgument(where + ": " + zip_strerror(archive.get()));
  }
  if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE) {
    return Status::NotSupported(where + ": word/document.xml is encrypted");
  }
  // The declared size may lie; it is checked here and the read is bounded too.
  if ((st.valid & ZIP_STAT_SIZE) && st.size > options.max_uncompressed_bytes) {
    return Status::ResourceExhausted(where + ": word/document.xml declares " +
                                     std::to_string(st.size) + " bytes, over the limit of " +
                                     std::to_string(options.max_uncompressed_bytes));
  }
  std::unique_ptr<zip_file_t, ZipFileDeleter> file(
      zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(index), 0));
  if (!file) {
    return Status::InvalidArgument(
        where + ": cannot open word/document.xml: " + zip_strerror(archive.get()));
  }
  std::string xml;
  char buffer[64 * 1024];
  for (;;) {
    const zip_int64_t n = zip_fread(file.get(), buffer, sizeof buffer);
    if (n < 0) {
      return Status::InvalidArgument(
          where + ": cannot read word/document.xml: " + zip_file_strerror(file.get()));
    }
    if (n == 0) break;
    if (xml.size() + static_cast<uint64_t>(n) > options.max_uncompressed_bytes) {
      return Status::ResourceExhausted(where + ": word/document.xml is larger than the limit of " +
                                       std::to_string(options.max_uncompressed_bytes) + " bytes");
    }
    xml.append(buffer, static_cast<size_t>(n));
  }
  return xml;
}

}  // namespace

Result<std::string> ExtractDocxText(std::string_view bytes, const ExtractOptions& options,
                                    std::string_view origin) {
  const std::string where(origin);
  Result<std::string> xml = ReadDocumentXml(bytes, options, where);
  if (!xml.ok()) return xml.status();

  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_buffer_inplace(
      xml->data(), xml->size(), pugi::parse_default | pugi::parse_ws_pcdata, pugi::encoding_utf8);
  if (!parsed) {
    return Status::InvalidArgument(where + ": malformed word/document.xml at byte " +
                                   std::to_string(parsed.offset) + ": " + parsed.description());
  }
  const pugi::xml_node root = doc.document_element();
  if (!root || LocalName(root) != "document") {
    return Status::InvalidArgument(where + ": word/document.xml has no w:document element");
  }

  // Depth-first walk in document order, without recursion (nesting depth is
  // controlled by the input).
  std::string text;
  pugi::xml_node node = root.first_child();
  while (node) {
    bool descend = true;
    if (node.type() == pugi::node_element) {
      const std::string_view name = LocalName(node);
      if (name == "t") {
        for (pugi::xml_node c = node.first_child(); c; c = c.next_sibling()) {
          if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) text += c.value();
        }
        descend = false;
      } else if (name == "tab" && ParentIsRun(node)) {
        text += '\t';
      } else if ((name == "br" || name == "cr") && ParentIsRun(node)) {
        text += '\n';
      } else if (name == "delText" || name == "instrText" || name == "pPr" || name == "rPr") {
        descend = false;  // deleted text, field codes and properties are not content
      }
    }
    if (text.size() > options.max_text_bytes) {
      return Status::ResourceExhausted(where + ": text is larger than the limit of " +
                                       std::to_string(options.max_text_bytes) + " bytes");
    }
    if (descend && node.first_child()) {
      node = node.first_child();
      continue;
    }
    // Leave finished nodes; a finished w:p ends a line.
    while (node && node != root) {
      if (node.type() == pugi::node_element && LocalName(node) == "p") text += '\n';
      if (node.next_sibling()) {
        node = node.next_sibling();
        break;
      }
      node = node.parent();
    }
    if (node == root) break;
  }
  return text;
}

}  // namespace neardup
