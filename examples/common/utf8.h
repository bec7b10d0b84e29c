// Text read from anywhere, made safe to tokenize and to save as JSON: every byte that is not part of
// well-formed UTF-8 becomes U+FFFD. Used where the examples read text from files (the IMDB reviews, the
// UCI sentences) and by the sentiment tokenizer.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace examples {

namespace detail {

// The length of the well-formed UTF-8 sequence at the start of `s`, or 0 if it does not start with one.
inline size_t utf8_sequence_length(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  // The allowed range of the second byte, which is where overlong forms, surrogates and values above
  // U+10FFFF are ruled out (RFC 3629, table 3-7 of the Unicode standard).
  size_t length;
  unsigned char low = 0x80, high = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) low = 0xA0;
    if (b0 == 0xED) high = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) low = 0x90;
    if (b0 == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

}  // namespace detail

// `text` with every byte that is not part of well-formed UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF) replaced by U+FFFD, the replacement character, one per byte
// (Python's decode(errors="replace") gives one for a whole sequence cut short). Reviews scraped from anywhere
// may hold Latin-1 or broken bytes; after this every token is valid UTF-8, so a vocabulary can always be
// saved as JSON and read back. Text that is already valid comes back unchanged.
inline std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = detail::utf8_sequence_length(text.substr(i));
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD for one bad byte
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace examples
