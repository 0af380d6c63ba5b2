// canonicalize_text: JSON text to its RFC 8785 bytes in one pass, the strict parser
// (parser_impl.hpp) feeding a CanonicalSink (canonical_sink.hpp, whose out-of-line parts are
// here) instead of building a Value.
//
// The refusals are those of parse_strict, remove_pointers, require_exact_numbers and
// canonicalize run one after the other, in that order: parse errors are thrown where they are
// found, a malformed pointer and the first inexact number are remembered and thrown once the
// document has parsed.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/json/canonical.hpp"
#include "core/json/bytes.hpp"
#include "core/json/canonical_detail.hpp"
#include "core/json/canonical_sink.hpp"
#include "core/json/number.hpp"
#include "core/json/parser_impl.hpp"
#include "core/json/pointer.hpp"
#include "core/json/value.hpp"

namespace idem::json {
namespace detail {
namespace {

// RFC 6901 section 4, as remove_pointers reads a token on an array: "0" or digits without a
// leading zero (at most 19 of them); anything else names no element.
std::size_t index_of(const std::string& token) {
  if (token.empty() || token.size() > 19 || (token[0] == '0' && token.size() > 1)) return kNoIndex;
  std::size_t value = 0;
  for (const char c : token) {
    if (c < '0' || c > '9') return kNoIndex;
    value = value * 10 + static_cast<std::size_t>(c - '0');
  }
  return value;
}

}  // namespace

Exclusions::Exclusions(const std::vector<std::string>& pointers) {
  for (const std::string& pointer : pointers) {
    try {
      std::vector<std::string> t = parse_exclusion(pointer);
      std::vector<std::size_t> ix;
      ix.reserve(t.size());
      for (const std::string& token : t) ix.push_back(index_of(token));
      tokens.push_back(std::move(t));
      indexes.push_back(std::move(ix));
    } catch (const Error&) {
      // The document is still parsed (its refusals come first); nothing is excluded.
      refusal = std::current_exception();
      tokens.clear();
      indexes.clear();
      return;
    }
  }
}

// Whether a valid spelling without an exponent (numeric_out's) is beyond a double's range. Below
// 309 integer digits it cannot be; above, from_chars' out of range can only be overflow. A
// spelling with an exponent is left to canonical_number_exact.
bool CanonicalSink::overflows_double(std::string_view s) {
  std::size_t i = !s.empty() && s[0] == '-' ? 1 : 0;
  const std::size_t int_start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i - int_start <= kSafeIntegerDigits) return false;
  for (std::size_t j = i; j < s.size(); ++j) {
    if (s[j] == 'e' || s[j] == 'E') return false;
  }
  double value = 0;
  return std::from_chars(s.data(), s.data() + s.size(), value).ec == std::errc::result_out_of_range;
}

bool CanonicalSink::match(const Frame& f, std::string_view key, std::size_t index) {
  pending_live_.clear();
  const std::size_t level = static_cast<std::size_t>(&f - frames_.data());
  bool excluded = false;
  for (std::size_t i = f.live_begin; i < f.live_end; ++i) {
    const std::uint32_t p = live_[i];
    const bool hit = f.array ? ex_.indexes[p][level] == index : ex_.tokens[p][level] == key;
    if (!hit) continue;
    if (ex_.tokens[p].size() == level + 1) {
      excluded = true;
    } else {
      pending_live_.push_back(p);
    }
  }
  return excluded;
}

void CanonicalSink::open(bool array) {
  std::size_t live_begin = live_.size();
  if (frames_.empty()) {
    live_begin = 0;  // the root: every exclusion starts here
  } else {
    const bool write = begin_value();
    const Frame& parent = frames_.back();
    const bool excluded = !write;
    if (excluded && skip_frame_ == kNoIndex) {
      skip_frame_ = frames_.size();
      skip_mark_ = out_.size();
    }
    // The pointers going deeper through this child, unless it is dropped whole anyway.
    if (!excluded && parent.live_begin != parent.live_end) {
      live_.insert(live_.end(), pending_live_.begin(), pending_live_.end());
    }
  }
  out_.push_back(array ? '[' : '{');
  // Built in place, field by field: a Frame copied in from the stack stalls on store forwarding.
  Frame& f = frames_.emplace_back();
  f.array = array;
  f.unsorted = false;
  f.out_start = out_.size();
  f.seen = 0;
  f.kept = 0;
  f.members = members_.size();
  f.keys = keys_.size();
  f.live_begin = live_begin;
  f.live_end = live_.size();
}

void CanonicalSink::end_key_as(bool plain) {
  Frame& f = frames_.back();
  const std::size_t length = keys_.size() - key_start_;
  const std::string_view name = keys_.view(key_start_, length);
  if (members_.size() > f.members) members_.back().out_end = out_.size();
  pending_excluded_ = f.live_begin != f.live_end && match(f, name, 0);
  std::size_t out_begin = 0;
  if (!pending_excluded_) {
    if (f.kept != 0) {
      out_.push_back(',');
      // The last member written before this one: is it still in UTF-16 order?
      if (!f.unsorted) {
        std::size_t last = members_.size() - 1;
        while (members_[last].excluded) --last;
        const Member& prev = members_[last];
        if (!utf16_less(keys_.view(prev.key, prev.key_length), name)) f.unsorted = true;
      }
    }
    ++f.kept;
    out_begin = out_.size();
    if (plain) {
      // No escape in the input, so nothing to escape either: the name as it is, quoted.
      out_.push_back('"');
      out_.append(name);
      out_.append("\":", 2);
    } else {
      append_string(out_, name);
      out_.push_back(':');
    }
  }
  Member& m = members_.emplace_back();  // in place, as in open()
  m.key = key_start_;
  m.key_length = length;
  m.offset = key_offset_;
  m.out_begin = out_begin;
  m.out_end = 0;
  m.excluded = pending_excluded_;
}

void CanonicalSink::pop_frame(std::size_t live_begin) {
  live_.resize(live_begin);
  frames_.pop_back();
  // The end of an excluded container: drop its bytes.
  if (skip_frame_ == frames_.size()) {
    out_.truncate(skip_mark_);
    skip_frame_ = kNoIndex;
  }
}

void CanonicalSink::close_array() {
  out_.push_back(']');
  pop_frame(frames_.back().live_begin);
}

// parse_strict's duplicate check (detail::check_unique_names) over members_[first..]: the earliest
// member whose name appeared before it is refused. Up to 32 members by comparing pairs, above by
// sorting indexes.
void CanonicalSink::check_unique_names(std::size_t first) const {
  const std::size_t n = members_.size() - first;
  if (n < 2) return;
  std::size_t dup = n;
  if (n <= 32) {
    for (std::size_t j = 1; j < n && dup == n; ++j) {
      const std::string_view b = name(first + j);
      for (std::size_t i = 0; i < j; ++i) {
        if (name(first + i) == b) {
          dup = j;
          break;
        }
      }
    }
  } else {
    order_.resize(n);
    for (std::size_t i = 0; i < n; ++i) order_[i] = static_cast<std::uint32_t>(i);
    // Ties broken by position, so within a run of equal names the later member comes second.
    std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
      const int c = name(first + a).compare(name(first + b));
      return c != 0 ? c < 0 : a < b;
    });
    for (std::size_t i = 1; i < n; ++i) {
      if (name(first + order_[i - 1]) == name(first + order_[i])) {
        dup = std::min<std::size_t>(dup, order_[i]);
      }
    }
  }
  if (dup != n) throw_duplicate_name(name(first + dup), members_[first + dup].offset);
}

void CanonicalSink::close_object() {
  Frame& f = frames_.back();
  const std::size_t first = f.members;
  const std::size_t out_start = f.out_start;
  members_.back().out_end = out_.size();  // an open object has at least one member
  // Duplicate names first, every member counted (excluded ones too), as parse_strict does.
  if (!unique_names_) check_unique_names(first);
  if (f.unsorted) {
    order_.clear();
    for (std::size_t i = first; i < members_.size(); ++i) {
      if (!members_[i].excluded) order_.push_back(static_cast<std::uint32_t>(i));
    }
    std::sort(order_.begin(), order_.end(),
              [this](std::uint32_t a, std::uint32_t b) { return utf16_less(name(a), name(b)); });
    sorted_.clear();
    sorted_.append(out_.data() + out_start, out_.size() - out_start);
    out_.truncate(out_start);
    for (std::size_t i = 0; i < order_.size(); ++i) {
      if (i != 0) out_.push_back(',');
      const Member& m = members_[order_[i]];
      out_.append(sorted_.data() + (m.out_begin - out_start), m.out_end - m.out_begin);
    }
  }
  out_.push_back('}');
  keys_.truncate(f.keys);
  members_.resize(first);
  pop_frame(f.live_begin);
}

// The name of the member open at `level` (an object frame): the last of its members.
std::string CanonicalSink::member_key(std::size_t level) const {
  const std::size_t end = level + 1 < frames_.size() ? frames_[level + 1].members : members_.size();
  const Member& m = members_[end - 1];
  return std::string(keys_.view(m.key, m.key_length));
}

// As parse_strict's: the document as given, indexes counting excluded elements.
std::string CanonicalSink::next_pointer() const {
  std::string pointer;
  for (std::size_t level = 0; level < frames_.size(); ++level) {
    const Frame& f = frames_[level];
    if (f.array) {
      const bool innermost = level + 1 == frames_.size();
      pointer += "/" + std::to_string(innermost ? f.seen : f.seen - 1);
    } else if (members_.size() > f.members) {
      pointer += "/" + escape_token(member_key(level));
    }
  }
  return pointer;
}

// As require_exact_numbers names it: the document after the exclusions, so indexes count the
// elements kept.
void CanonicalSink::record_inexact(std::string_view spelling) {
  inexact_found_ = true;
  constexpr std::size_t kShown = 40;  // a client may send a megabyte of digits
  inexact_spelling_.assign(spelling.substr(0, kShown));
  if (spelling.size() > kShown) inexact_spelling_ += "...";
  for (std::size_t level = 0; level < frames_.size(); ++level) {
    const Frame& f = frames_[level];
    if (f.array) {
      inexact_pointer_ += "/" + std::to_string(f.kept - 1);
    } else {
      inexact_pointer_ += "/" + escape_token(member_key(level));
    }
  }
}

void CanonicalSink::throw_deferred() const {
  if (ex_.refusal) std::rethrow_exception(ex_.refusal);
  if (!inexact_found_) return;
  throw Error(ErrorCode::NumberPrecision,
              "number " + inexact_spelling_ + " at " +
                  (inexact_pointer_.empty() ? "\"\" (the document)" : inexact_pointer_) +
                  " cannot be represented exactly as an IEEE double",
              "send it as a string or reduce its precision");
}

void with_canonical_sink(const std::vector<std::string>& exclude,
                         const std::function<void(CanonicalSink&)>& produce,
                         const std::function<void(std::string_view)>& consume) {
  thread_local CanonicalSink::Workspace workspace;
  CanonicalSink::Workspace fallback;  // stays empty unless consume() canonicalizes again
  CanonicalSink::Workspace& w = workspace.busy ? fallback : workspace;
  struct Release {
    CanonicalSink::Workspace& w;
    ~Release() {
      w.busy = false;
      w.trim();
    }
  } release{w};
  w.busy = true;
  const Exclusions ex(exclude);
  CanonicalSink sink(w, ex);
  produce(sink);
  sink.throw_deferred();
  consume(w.out.view());
}

void with_canonical_text(std::string_view text, const std::vector<std::string>& exclude,
                         const std::function<void(std::string_view)>& consume) {
  with_canonical_sink(
      exclude, [text](CanonicalSink& sink) { BasicParser<CanonicalSink>(text, sink).run(); }, consume);
}

}  // namespace detail

void canonicalize_text(std::string_view text, const std::vector<std::string>& exclude,
                       std::string& out) {
  detail::with_canonical_text(text, exclude, [&out](std::string_view bytes) { out.assign(bytes); });
}

std::string canonicalize_text(std::string_view text, const std::vector<std::string>& exclude) {
  std::string out;
  canonicalize_text(text, exclude, out);
  return out;
}

}  // namespace idem::json
