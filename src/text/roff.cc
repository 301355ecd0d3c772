// Copyright 2026 The neardup Authors.
//
// A small man(7)/roff text extractor. It is not a typesetter: it keeps the
// words a reader of the page sees and drops formatting. Requests (lines that
// start with '.' or '\'') are dropped except the macros whose arguments are
// text (.SH, .SS, .B, .I, .BR, .TP tags and the like); escapes are decoded
// or dropped (\fB, \-, \(em, \[...], \*(xx, \s+1, \" comments, ...).

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/text.h"

namespace neardup {
namespace {

struct SpecialChar {
  std::string_view name;
  std::string_view text;
};

// The named characters that man pages use most; any other \(xx or \[name] is dropped.
constexpr std::array<SpecialChar, 28> kSpecialChars = {{
    {"em", "—"}, {"en", "–"}, {"hy", "-"}, {"mi", "-"}, {"bu", "•"},  {"co", "©"}, {"rg", "®"},
    {"tm", "™"}, {"lq", "“"}, {"rq", "”"}, {"oq", "‘"}, {"cq", "’"},  {"aq", "'"}, {"dq", "\""},
    {"ti", "~"}, {"ha", "^"}, {"ga", "`"}, {"aa", "´"}, {"rs", "\\"}, {"bv", "|"}, {"or", "|"},
    {"de", "°"}, {"mu", "×"}, {"di", "÷"}, {"+-", "±"}, {"<=", "≤"},  {">=", "≥"}, {"->", "→"},
}};

std::string_view LookupSpecial(std::string_view name) {
  for (const SpecialChar& c : kSpecialChars) {
    if (c.name == name) return c.text;
  }
  return {};
}

// The length of the UTF-8 sequence at s[i]: the lead byte and the
// continuation bytes that follow it (1 for ASCII and for a stray byte), so
// that an escape never splits a character and the output of valid UTF-8
// stays valid UTF-8.
size_t CharLength(std::string_view s, size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  const size_t want = lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  size_t n = 1;
  while (n < want && i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) {
    ++n;
  }
  return n;
}

// Reads a roff name after an escape character at s[*i]: "x", "(xx" or
// "[name]" (x: one character, not one byte).
std::string_view ReadEscapeName(std::string_view s, size_t* i) {
  if (*i >= s.size()) return {};
  if (s[*i] == '(') {
    const size_t start = *i + 1;
    size_t end = start;
    for (int k = 0; k < 2 && end < s.size(); ++k) end += CharLength(s, end);
    *i = end;
    return s.substr(start, end - start);
  }
  if (s[*i] == '[') {
    const size_t start = *i + 1;
    const size_t end = s.find(']', start);
    if (end == std::string_view::npos) {
      *i = s.size();
      return s.substr(start);
    }
    *i = end + 1;
    return s.substr(start, end - start);
  }
  const size_t start = *i;
  *i += CharLength(s, start);
  return s.substr(start, *i - start);
}

// Skips a quoted or bracketed argument such as \s'+2' or \h'1i' or \w'...'
// (the delimiter is one character, possibly multi-byte).
void SkipDelimitedArgument(std::string_view s, size_t* i) {
  if (*i >= s.size()) return;
  const std::string_view delim = s.substr(*i, CharLength(s, *i));
  const size_t end = s.find(delim, *i + delim.size());
  *i = end == std::string_view::npos ? s.size() : end + delim.size();
}

// Decodes the escapes of one line of text.
std::string DecodeEscapes(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c != '\\') {
      out.push_back(c);
      ++i;
      continue;
    }
    ++i;
    if (i >= s.size()) break;  // a trailing backslash joins lines: nothing to keep
    const char e = s[i++];
    switch (e) {
      case '"':  // comment to the end of the line
      case '#':
        return out;
      case 'e':
      case '\\':
        out.push_back('\\');
        break;
      case '-':
        out.push_back('-');
        break;
      case ' ':
      case '~':
      case '0':
        out.push_back(' ');
        break;
      case '&':
      case '|':
      case '^':
      case '%':
      case ',':
      case '/':
      case ':':
      case 'c':
      case 'd':
      case 'u':
      case 'r':
      case 'a':
      case 't':
      case '{':
      case '}':
        break;
      case '.':
        out.push_back('.');
        break;
      case '\'':
        out.push_back('\'');
        break;
      case '`':
        out.push_back('`');
        break;
      case '(':
      case '[': {
        --i;
        const std::string_view name = ReadEscapeName(s, &i);
        out.append(LookupSpecial(name));
        break;
      }
      case 'f':  // font change
      case 'F':
      case 'n':  // number register
      case 'g':
      case 'k':
      case 'm':
      case 'M':
      case 'V':
      case 'Y':
        ReadEscapeName(s, &i);
        break;
      case '*': {  // string: only the common ones carry text
        const std::string_view name = ReadEscapeName(s, &i);
        if (name == "R") out.append("®");
        if (name == "(Tm" || name == "Tm") out.append("™");
        if (name == "lq" || name == "L\"") out.append("“");
        if (name == "rq" || name == "R\"") out.append("”");
        break;
      }
      case 's':  // size: \s+1, \s-1, \s0, \s12, \s'+2', \s(12, \s[12]
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        if (i < s.size() && (s[i] == '\'' || s[i] == '[' || s[i] == '(')) {
          if (s[i] == '\'') {
            SkipDelimitedArgument(s, &i);
          } else {
            ReadEscapeName(s, &i);
          }
        } else {
          while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
        }
        break;
      case 'h':
      case 'v':
      case 'w':
      case 'l':
      case 'L':
      case 'o':
      case 'b':
      case 'x':
      case 'D':
      case 'X':
      case 'Z':
      case 'A':
      case 'B':
      case 'C':
      case 'N':
      case 'R':
      case 'S':
        SkipDelimitedArgument(s, &i);
        break;
      default:
        // An unknown escape: keep the character itself, as troff does.
        out.push_back(e);
        break;
    }
  }
  return out;
}

// Splits a macro's arguments (quotes group words; "" is a literal quote).
std::vector<std::string> SplitArguments(std::string_view s) {
  std::vector<std::string> args;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i >= s.size()) break;
    std::string arg;
    if (s[i] == '"') {
      ++i;
      while (i < s.size()) {
        if (s[i] == '"') {
          if (i + 1 < s.size() && s[i + 1] == '"') {
            arg.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        arg.push_back(s[i++]);
      }
    } else {
      while (i < s.size() && s[i] != ' ' && s[i] != '\t') {
        // Keep escapes (including "\ ") inside one argument.
        if (s[i] == '\\' && i + 1 < s.size()) arg.push_back(s[i++]);
        arg.push_back(s[i++]);
      }
    }
    args.push_back(std::move(arg));
  }
  return args;
}

bool IsOneOf(std::string_view name, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace

std::string RoffToText(std::string_view roff, std::string* title) {
  std::string out;
  out.reserve(roff.size());
  bool in_macro_definition = false;
  size_t pos = 0;
  while (pos <= roff.size()) {
    size_t end = roff.find('\n', pos);
    if (end == std::string_view::npos) end = roff.size();
    std::string_view line = roff.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (end == roff.size() && line.empty()) break;

    if (in_macro_definition) {
      if (line.starts_with("..")) in_macro_definition = false;
      continue;
    }
    if (line.empty() || (line[0] != '.' && line[0] != '\'')) {
      std::string text = DecodeEscapes(line);
      if (!text.empty()) {
        out.append(text);
        out.push_back('\n');
      }
      continue;
    }
    // A request or macro: ".NAME args".
    size_t i = 1;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t name_end = i;
    while (name_end < line.size() && line[name_end] != ' ' && line[name_end] != '\t') ++name_end;
    const std::string_view name = line.substr(i, name_end - i);
    const std::string_view rest = line.substr(name_end);
    if (name.starts_with("\\\"") || name.empty()) continue;  // comment or empty request
    if (IsOneOf(name, {"de", "de1", "am", "ig"})) {
      in_macro_definition = true;
      continue;
    }
    if (name == "TH") {
      const std::vector<std::string> args = SplitArguments(rest);
      if (title != nullptr && !args.empty()) *title = DecodeEscapes(args[0]);
      continue;
    }
    std::string text;
    if (IsOneOf(name, {"SH", "SS", "B", "I", "SM", "SB", "IP", "TP", "Nm", "Nd", "Sh", "Ss"})) {
      // Arguments are text, joined by spaces. (.IP's second argument is an indent.)
      std::vector<std::string> args = SplitArguments(rest);
      if (name == "IP" && args.size() > 1) args.resize(1);
      for (size_t a = 0; a < args.size(); ++a) {
        if (a > 0) text.push_back(' ');
        text.append(DecodeEscapes(args[a]));
      }
    } else if (name.size() == 2 && IsOneOf(name, {"BR", "BI", "IB", "IR", "RB", "RI"})) {
      // Alternating fonts: arguments are joined without spaces.
      for (const std::string& arg : SplitArguments(rest)) text.append(DecodeEscapes(arg));
    } else if (IsOneOf(name, {"UR", "MT"})) {
      const std::vector<std::string> args = SplitArguments(rest);
      if (!args.empty()) text = DecodeEscapes(args[0]);
    }
    // Everything else (.PP, .br, .sp, .TS, .nf, .so, ...) carries no text.
    if (!text.empty()) {
      out.append(text);
      out.push_back('\n');
    }
  }
  return out;
}

}  // namespace neardup
