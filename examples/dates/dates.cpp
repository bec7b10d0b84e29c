#include "examples/dates/dates.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

namespace dates {

using minigrad::Generator;

namespace {

const std::array<std::string, 12> kMonths = {"January",   "February", "March",    "April",
                                             "May",       "June",     "July",     "August",
                                             "September", "October",  "November", "December"};
const std::array<std::string, 7> kWeekdays = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                              "Friday", "Saturday", "Sunday"};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// "1st", "2nd", "3rd", "4th", ..., "11th", "12th", "13th", "21st", ...
std::string ordinal(int n) {
  const int tens = n % 100;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : n % 10 == 1              ? "st"
                       : n % 10 == 2              ? "nd"
                       : n % 10 == 3              ? "rd"
                                                  : "th";
  return std::to_string(n) + suffix;
}

std::string two_digits(int n) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02d", n % 100);
  return buf;
}

// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

int days_in_month(int year, int month) {
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[static_cast<size_t>(month - 1)];
}

bool is_valid(const Date& d) {
  return d.year >= kFirstYear && d.year <= kLastYear && d.month >= 1 && d.month <= 12 && d.day >= 1 &&
         d.day <= days_in_month(d.year, d.month);
}

int weekday(const Date& d) {
  // 1970-01-01 was a Thursday (3 with Monday = 0).
  const int64_t days = days_from_civil(d.year, d.month, d.day);
  return static_cast<int>(((days + 3) % 7 + 7) % 7);
}

std::string iso(const Date& d) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", d.year, d.month, d.day);
  return buf;
}

std::vector<Date> all_days() {
  std::vector<Date> out;
  for (int y = kFirstYear; y <= kLastYear; ++y) {
    for (int m = 1; m <= 12; ++m) {
      for (int d = 1; d <= days_in_month(y, m); ++d) out.push_back({y, m, d});
    }
  }
  return out;
}

std::string write_date(const Date& date, Style style) {
  const std::string month = kMonths[static_cast<size_t>(date.month - 1)];
  const std::string mon = month.substr(0, 3);
  const std::string wday = kWeekdays[static_cast<size_t>(weekday(date))];
  const std::string d = std::to_string(date.day), m = std::to_string(date.month),
                    y = std::to_string(date.year);
  switch (style) {
    case Style::OrdinalOfMonth:
      return ordinal(date.day) + " of " + month + " " + y;
    case Style::TheOrdinalOf:
      return "the " + ordinal(date.day) + " of " + lower(month) + ", " + y;
    case Style::UsSlashShort:
      return two_digits(date.month) + "/" + two_digits(date.day) + "/" + two_digits(date.year);
    case Style::UsSlashLong:
      return m + "/" + d + "/" + y;
    case Style::MonthDayShortLow:
      return lower(month) + " " + d + ", " + two_digits(date.year);
    case Style::MonthDayLong:
      return month + " " + d + ", " + y;
    case Style::WeekdayDayMon:
      return wday + " " + d + " " + mon + " " + y;
    case Style::DayMonthLong:
      return d + " " + month + " " + y;
    case Style::MonDayYear:
      return mon + " " + d + " " + y;
    case Style::DayMonYearDash:
      return two_digits(date.day) + "-" + mon + "-" + y;
    case Style::EuropeanDots:
      return d + "." + m + "." + y;
    case Style::IsoSlashes:
      return y + "/" + two_digits(date.month) + "/" + two_digits(date.day);
    case Style::Compact:
      return y + two_digits(date.month) + two_digits(date.day);
    case Style::Rfc2822:
      return wday.substr(0, 3) + ", " + two_digits(date.day) + " " + mon + " " + y;
    case Style::UpperMonthDay:
      return upper(month) + " " + d + " " + y;
    case Style::WeekdayLong:
      return wday + ", " + month + " " + ordinal(date.day) + ", " + y;
  }
  throw minigrad::ValueError("write_date", "unknown style " + std::to_string(static_cast<int>(style)));
}

std::string style_name(Style style) {
  static const std::array<std::string, kStyleCount> kNames = {
      "OrdinalOfMonth", "TheOrdinalOf", "UsSlashShort",  "UsSlashLong",    "MonthDayShortLow", "MonthDayLong",
      "WeekdayDayMon",  "DayMonthLong", "MonDayYear",    "DayMonYearDash", "EuropeanDots",     "IsoSlashes",
      "Compact",        "Rfc2822",      "UpperMonthDay", "WeekdayLong"};
  return kNames.at(static_cast<size_t>(style));
}

Style random_style(Generator& generator) {
  return static_cast<Style>(generator.next_below(kStyleCount));
}

namespace {

// A piece of a written date: a run of letters, a run of digits, or one separator character.
struct Piece {
  enum Kind { Word, Number, Separator } kind;
  std::string text;
};

std::optional<std::vector<Piece>> pieces_of(const std::string& text) {
  std::vector<Piece> out;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    auto run = [&](auto&& is) {
      size_t j = i;
      while (j < text.size() && is(static_cast<unsigned char>(text[j]))) ++j;
      std::string s = text.substr(i, j - i);
      i = j;
      return s;
    };
    if (std::isalpha(c)) {
      out.push_back({Piece::Word, lower(run([](unsigned char x) { return std::isalpha(x) != 0; }))});
    } else if (std::isdigit(c)) {
      out.push_back({Piece::Number, run([](unsigned char x) { return std::isdigit(x) != 0; })});
    } else if (c == ' ') {
      ++i;
    } else if (c == ',' || c == '/' || c == '.' || c == '-') {
      out.push_back({Piece::Separator, std::string(1, static_cast<char>(c))});
      ++i;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

int full_year(const std::string& digits) {
  const int n = std::stoi(digits);
  if (digits.size() == 2) return n >= 50 ? 1900 + n : 2000 + n;
  return digits.size() == 4 ? n : -1;
}

std::optional<Date> checked(Date d, int weekday_named) {
  if (!is_valid(d)) return std::nullopt;
  if (weekday_named >= 0 && weekday(d) != weekday_named) return std::nullopt;
  return d;
}

// Three numbers with one kind of separator: 03/04/99 (US), 4.3.1999 (European), 1999/03/04, 1999-03-04.
std::optional<Date> parse_numeric(const std::vector<Piece>& p) {
  if (p.size() == 1 && p[0].kind == Piece::Number && p[0].text.size() == 8) {  // 19990304
    const std::string& s = p[0].text;
    return checked({std::stoi(s.substr(0, 4)), std::stoi(s.substr(4, 2)), std::stoi(s.substr(6, 2))}, -1);
  }
  if (p.size() != 5 || p[0].kind != Piece::Number || p[2].kind != Piece::Number ||
      p[4].kind != Piece::Number || p[1].kind != Piece::Separator || p[1].text != p[3].text ||
      p[0].text.size() > 4 || p[2].text.size() > 2 || p[4].text.size() > 4)
    return std::nullopt;
  const std::string sep = p[1].text;
  const int a = std::stoi(p[0].text), b = std::stoi(p[2].text);
  if (p[0].text.size() == 4 && (sep == "/" || sep == "-")) return checked({a, b, std::stoi(p[4].text)}, -1);
  if (p[0].text.size() > 2) return std::nullopt;
  const int year = full_year(p[4].text);
  if (sep == "/") return checked({year, a, b}, -1);
  if (sep == ".") return checked({year, b, a}, -1);
  return std::nullopt;
}

}  // namespace

std::optional<Date> parse_date(const std::string& text) {
  const std::optional<std::vector<Piece>> parsed = pieces_of(text);
  if (!parsed || parsed->empty()) return std::nullopt;
  const std::vector<Piece>& p = *parsed;
  bool has_word = false;
  for (const Piece& piece : p) has_word = has_word || piece.kind == Piece::Word;
  if (!has_word) return parse_numeric(p);
  // With a month name: the month from the word, the weekday if named (and it must agree), "the"/"of" and
  // separators skipped; of the numbers (ordinal suffixes dropped) the last is the year, the other the day.
  int month = -1, named_weekday = -1;
  std::vector<std::string> numbers;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i].kind == Piece::Separator) continue;
    if (p[i].kind == Piece::Number) {
      if (p[i].text.size() > 4) return std::nullopt;
      numbers.push_back(p[i].text);
      // an ordinal suffix right after the number
      if (i + 1 < p.size() && p[i + 1].kind == Piece::Word) {
        const std::string& s = p[i + 1].text;
        if (s == "st" || s == "nd" || s == "rd" || s == "th") {
          if (s != ordinal(std::stoi(p[i].text)).substr(p[i].text.size())) return std::nullopt;
          ++i;
        }
      }
      continue;
    }
    const std::string& w = p[i].text;
    if (w == "the" || w == "of") continue;
    bool known = false;
    for (int m = 0; m < 12 && !known; ++m) {
      const std::string name = lower(kMonths[static_cast<size_t>(m)]);
      if (w == name || w == name.substr(0, 3)) {
        if (month >= 0) return std::nullopt;  // two months
        month = m + 1;
        known = true;
      }
    }
    for (int d = 0; d < 7 && !known; ++d) {
      const std::string name = lower(kWeekdays[static_cast<size_t>(d)]);
      if (w == name || w == name.substr(0, 3)) {
        if (named_weekday >= 0) return std::nullopt;
        named_weekday = d;
        known = true;
      }
    }
    if (!known) return std::nullopt;
  }
  if (month < 0 || numbers.size() != 2 || numbers[0].size() > 2) return std::nullopt;  // day, year
  return checked({full_year(numbers[1]), month, std::stoi(numbers[0])}, named_weekday);
}

Split split_days(uint64_t seed, int64_t held_out, int64_t validation) {
  std::vector<Date> days = all_days();
  if (held_out < 0 || validation < 0 || held_out + validation >= static_cast<int64_t>(days.size()))
    throw minigrad::ValueError("split_days", "held-out and validation sets leave no training days");
  Generator g(seed);
  std::vector<Date> shuffled;
  for (int64_t i : randperm(static_cast<int64_t>(days.size()), &g).to_vector<int64_t>()) {
    shuffled.push_back(days[static_cast<size_t>(i)]);
  }
  days = std::move(shuffled);
  Split s;
  const auto h = static_cast<std::ptrdiff_t>(held_out), v = static_cast<std::ptrdiff_t>(validation);
  s.held_out.assign(days.begin(), days.begin() + h);
  s.validation.assign(days.begin() + h, days.begin() + h + v);
  s.training.assign(days.begin() + h + v, days.end());
  for (auto* part : {&s.training, &s.validation, &s.held_out}) std::sort(part->begin(), part->end());
  return s;
}

std::vector<Example> examples_for(const std::vector<Date>& days, Generator& generator) {
  std::vector<Example> out;
  out.reserve(days.size());
  for (const Date& d : days) {
    const Style style = random_style(generator);
    out.push_back({write_date(d, style), iso(d), style});
  }
  return out;
}

std::vector<int64_t> CharVocabulary::encode(const std::string& text) {
  std::vector<int64_t> ids;
  ids.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 32 || c > 126) {
      char code[8];
      std::snprintf(code, sizeof code, "0x%02x", c);
      throw minigrad::ValueError("dates", std::string("unknown character ") + code + " at position " +
                                              std::to_string(i) + " of \"" + text +
                                              "\": the model reads printable ASCII only");
    }
    ids.push_back(3 + (c - 32));
  }
  return ids;
}

std::string CharVocabulary::decode(const std::vector<int64_t>& ids) {
  std::string out;
  for (int64_t id : ids) {
    if (id == kEos) break;
    if (id >= 3 && id < kSize) out += static_cast<char>(32 + (id - 3));
  }
  return out;
}

std::string CharVocabulary::token(int64_t id) {
  if (id == kPad) return "<pad>";
  if (id == kBos) return "<bos>";
  if (id == kEos) return "<eos>";
  if (id >= 3 && id < kSize) return std::string(1, static_cast<char>(32 + (id - 3)));
  return "<?>";
}

}  // namespace dates
