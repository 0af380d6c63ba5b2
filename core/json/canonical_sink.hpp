// The one-pass RFC 8785 writer: parse events in, canonical bytes out, no Value built. Driven by
// the strict text parser (canonical_text.cpp, BasicParser<CanonicalSink>) and by the jsonb walk
// (extension/jsonb_canonical.cpp), so both share one member order, number conversion, exclusion
// matching and refusal order. Each value's canonical bytes are written as soon as it is read; an
// object's members are written in input order, their spans remembered, and rewritten in UTF-16
// order when it closes (only if they were not in that order already). Excluded values are read
// (every refusal still applies) but their bytes are dropped; each number is converted once, for
// its canonical form and its exactness together.
//
// Event order is the BasicParser's (parser_impl.hpp lists the calls): open(array) only for a
// container with at least one element or member, empty_array()/empty_object() otherwise; in an
// object, begin_key(offset) + end_key(raw_length) or end_decoded_key() before each member's value.
// The sink refuses duplicate names (when an object closes); nesting depth is the driver's to check.
// Internal header: include it only from core/json/*.cpp and the extension's jsonb walk.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json/bytes.hpp"
#include "core/json/canonical_detail.hpp"
#include "core/json/number.hpp"

namespace idem::json::detail {

inline constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);

// The exclusions, parsed once: each pointer's tokens and, per token, the array index it names.
struct Exclusions {
  std::vector<std::vector<std::string>> tokens;
  std::vector<std::vector<std::size_t>> indexes;
  // remove_pointers' refusal of the first malformed (or empty) pointer, thrown after the parse.
  std::exception_ptr refusal;

  explicit Exclusions(const std::vector<std::string>& pointers);
};

// Everything one canonicalization needs besides its input, kept per thread between calls so a
// request body costs no allocation; trim() gives back what a large document took.
class CanonicalSink {
 public:
  // An open array or object.
  struct Frame {
    bool array;
    bool unsorted;            // object: a member came before one it sorts after
    std::size_t out_start;    // first byte after its '[' or '{' in out_
    std::size_t seen;         // array: elements begun, excluded ones included
    std::size_t kept;         // elements (members) written
    std::size_t members;      // object: its members are members_[members..]
    std::size_t keys;         // object: its names are keys_[keys..]
    std::size_t live_begin;   // the exclusions still on the path here: live_[live_begin..live_end)
    std::size_t live_end;
  };
  // An object member: its decoded name in keys_, the offset of its name's opening quote, and the
  // span of its canonical "name":value in out_ (empty when excluded).
  struct Member {
    std::size_t key;
    std::size_t key_length;
    std::size_t offset;
    std::size_t out_begin;
    std::size_t out_end;
    bool excluded;
  };
  struct Workspace {
    Bytes out;
    Bytes keys;     // decoded member names of the open objects
    Bytes scratch;  // an excluded string value, read and dropped
    Bytes sorted;   // an object's bytes while its members are put in order
    std::vector<Frame> frames;
    std::vector<Member> members;
    std::vector<std::uint32_t> order;
    std::vector<std::uint32_t> live;
    std::vector<std::uint32_t> pending_live;
    bool busy = false;

    // Above this, a buffer is freed after use rather than kept for the next document.
    static constexpr std::size_t kKeep = 256 * 1024;
    void trim() {
      for (Bytes* b : {&out, &keys, &scratch, &sorted}) {
        if (b->capacity() > kKeep) b->release();
      }
      if (members.capacity() * sizeof(Member) > kKeep) std::vector<Member>().swap(members);
      if (order.capacity() * sizeof(std::uint32_t) > kKeep) std::vector<std::uint32_t>().swap(order);
    }
  };

  static constexpr bool kCanonicalStrings = true;

  CanonicalSink(Workspace& w, const Exclusions& ex)
      : out_(w.out),
        ex_(ex),
        frames_(w.frames),
        members_(w.members),
        keys_(w.keys),
        scratch_(w.scratch),
        sorted_(w.sorted),
        order_(w.order),
        live_(w.live),
        pending_live_(w.pending_live) {
    out_.clear();
    keys_.clear();
    frames_.clear();
    members_.clear();
    live_.clear();
    frames_.reserve(16);
    members_.reserve(32);
    for (std::uint32_t p = 0; p < ex.tokens.size(); ++p) live_.push_back(p);
  }

  Bytes& begin_string() {
    string_written_ = begin_value();
    if (string_written_) {
      out_.push_back('"');
      return out_;
    }
    scratch_.clear();
    return scratch_;
  }
  void end_string() {
    if (string_written_) out_.push_back('"');
  }
  // A number the parser has checked: a valid RFC 8259 spelling that does not overflow a double.
  void number(const char* spelling, std::size_t length) {
    if (!begin_value()) return;
    const std::string_view s(spelling, length);
    char buf[kCanonicalNumberBuffer];
    bool exact = true;
    out_.append(buf, canonical_number_exact(s, buf, exact));
    if (!exact && !inexact_found_ && skip_frame_ == kNoIndex) record_inexact(s);
  }
  // A valid RFC 8259 spelling that nothing has checked for overflow (a jsonb numeric): one that
  // overflows a double is inexact, as require_exact_numbers finds it (is_exact), rather than
  // "too large". The document is refused all the same unless the number is excluded, so the
  // single '0' written in its place is never seen.
  void number_unbounded(const char* spelling, std::size_t length) {
    if (overflows_double(std::string_view(spelling, length))) {
      if (!begin_value()) return;
      out_.push_back('0');
      if (!inexact_found_ && skip_frame_ == kNoIndex) record_inexact(std::string_view(spelling, length));
      return;
    }
    number(spelling, length);
  }
  void boolean(bool value) {
    if (!begin_value()) return;
    if (value) {
      out_.append("true", 4);
    } else {
      out_.append("false", 5);
    }
  }
  void null() {
    if (begin_value()) out_.append("null", 4);
  }
  void empty_array() {
    if (begin_value()) out_.append("[]", 2);
  }
  void empty_object() {
    if (begin_value()) out_.append("{}", 2);
  }
  void open(bool array);
  Bytes& begin_key(std::size_t offset) {
    key_offset_ = offset;
    key_start_ = keys_.size();
    return keys_;
  }
  void end_key(std::size_t raw_length) { end_key_as(raw_length == keys_.size() - key_start_); }
  // A name appended decoded by a caller that does not know whether it needs escapes (a jsonb key).
  void end_decoded_key() { end_key_as(!needs_escape(keys_.view(key_start_, keys_.size() - key_start_))); }
  // The driver guarantees no object repeats a name (a jsonb): close_object skips the check.
  void assume_unique_names() { unique_names_ = true; }
  void close_array();
  void close_object();
  std::string next_pointer() const;
  void finish() {}

  // After the parse: remove_pointers' and require_exact_numbers' refusals, in their order.
  void throw_deferred() const;

 private:
  // end_key: `plain` when the name is known to need no escape (written as it is, quoted).
  void end_key_as(bool plain);
  static bool overflows_double(std::string_view spelling);
  // Bookkeeping for a value about to be written into the innermost container: its comma, and
  // whether an exclusion names it. Returns whether to write it.
  bool begin_value() {
    if (frames_.empty()) return true;
    Frame& f = frames_.back();
    if (!f.array) return !pending_excluded_;
    const std::size_t index = f.seen++;
    if (f.live_begin != f.live_end && match(f, std::string_view(), index)) return false;
    if (f.kept++ != 0) out_.push_back(',');
    return true;
  }
  // Whether an exclusion names the child `key` (object) or `index` (array) of frame f: true when
  // one ends there; the ones going deeper are left in pending_live_ for the child's own frame.
  bool match(const Frame& f, std::string_view key, std::size_t index);
  void pop_frame(std::size_t live_begin);
  std::string_view name(std::size_t member) const {
    return keys_.view(members_[member].key, members_[member].key_length);
  }
  void check_unique_names(std::size_t first) const;
  void record_inexact(std::string_view spelling);
  std::string member_key(std::size_t level) const;

  Bytes& out_;
  const Exclusions& ex_;
  std::vector<Frame>& frames_;
  std::vector<Member>& members_;
  Bytes& keys_;
  Bytes& scratch_;
  Bytes& sorted_;
  std::vector<std::uint32_t>& order_;
  // Exclusion matching: the pointers live in each open container, and for the next child.
  std::vector<std::uint32_t>& live_;
  std::vector<std::uint32_t>& pending_live_;
  bool unique_names_ = false;
  bool pending_excluded_ = false;
  bool string_written_ = false;
  // While an excluded container is being read: its frame's index, and where its bytes start.
  std::size_t skip_frame_ = kNoIndex;
  std::size_t skip_mark_ = 0;
  std::size_t key_offset_ = 0;
  std::size_t key_start_ = 0;
  // The first inexact number (document order, outside excluded values): its message parts.
  bool inexact_found_ = false;
  std::string inexact_spelling_;
  std::string inexact_pointer_;
};


// Runs produce(sink) on a sink over this thread's buffers (a fresh set if they are in use), then
// the deferred refusals (remove_pointers', then require_exact_numbers'), then consume(bytes) with
// the canonical bytes (valid only during the call).
void with_canonical_sink(const std::vector<std::string>& exclude,
                         const std::function<void(CanonicalSink&)>& produce,
                         const std::function<void(std::string_view)>& consume);

}  // namespace idem::json::detail
