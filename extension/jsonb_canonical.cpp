// The jsonb walk behind jsonb_canonical.hpp. It reads the container format of utils/jsonb.h
// (JEntry offsets and lengths) itself, instead of JsonbIterator, which pallocs a frame per
// container and may elog, and it reads each numeric's digits itself, instead of numeric_out,
// which pallocs; so the walk is plain C++ from the first byte to the last.
//
// What it must give, as the tree path does: members in jsonb order (sorted by length, then bytes;
// the sink re-sorts them by UTF-16 code units), so the first inexact number is the one the tree
// finds first; a number beyond a double's range inexact, not "too large" (require_exact_numbers
// runs before canonicalize there); nesting deeper than kMaxDepth refused as TreeBuilder refuses
// it, empty containers counted; a top-level scalar (a one-element raw-scalar array) as the root.
#include "extension/jsonb_canonical.hpp"

#include <cstring>
#include <string_view>

#include "core/error.hpp"
#include "core/hash/sha256.hpp"
#include "core/json/member_digests.hpp"
#include "core/interrupts.hpp"
#include "core/json/canonical_sink.hpp"
#include "core/json/parser.hpp"
#include "extension/pg/pg_error.hpp"

namespace idem::jsonb {
namespace {

using json::detail::CanonicalSink;

// The numeric on-disk format (numeric.c keeps these private; the format itself is fixed, as
// pg_upgrade needs it): a varlena whose first uint16 is a header, then base-10000 int16 digits.
constexpr std::uint16_t kSignMask = 0xC000;
constexpr std::uint16_t kNeg = 0x4000;
constexpr std::uint16_t kShort = 0x8000;
constexpr std::uint16_t kSpecial = 0xC000;
constexpr std::uint16_t kShortSignMask = 0x2000;
constexpr std::uint16_t kShortDscaleMask = 0x1F80;
constexpr int kShortDscaleShift = 7;
constexpr std::uint16_t kShortWeightSignMask = 0x0040;
constexpr std::uint16_t kShortWeightMask = 0x003F;
constexpr std::uint16_t kDscaleMask = 0x3FFF;

class Walker {
 public:
  // jsonb keeps one member per name (the last given wins when it is built).
  explicit Walker(CanonicalSink& sink) : sink_(sink) { sink_.assume_unique_names(); }

  void root(const JsonbContainer* jc) {
    if ((jc->header & JB_FSCALAR) != 0) {
      // A top-level scalar: a one-element array marked raw, unwrapped.
      value(reinterpret_cast<const char*>(&jc->children[1]), 0, jc->children[0]);
    } else {
      container(jc);
    }
  }

 private:
  // The value of JEntry `e`, whose data starts `offset` bytes after `base`, ends at `end`.
  void value(const char* base, std::uint32_t offset, JEntry e, std::uint32_t end);
  void value(const char* base, std::uint32_t offset, JEntry e) {
    value(base, offset, e, offset + JBE_OFFLENFLD(e));
  }
  void container(const JsonbContainer* jc);
  void number(const void* numeric);

  CanonicalSink& sink_;
  std::size_t depth_ = 0;
  std::string digits_;  // a number's spelling, as numeric_out writes it
};

// End offset of entry `e`, which starts at `offset` (JBE_HAS_OFF: stored; else its length).
inline std::uint32_t entry_end(JEntry e, std::uint32_t offset) {
  return JBE_HAS_OFF(e) ? JBE_OFFLENFLD(e) : offset + JBE_OFFLENFLD(e);
}

void Walker::container(const JsonbContainer* jc) {
  if (depth_ == json::kMaxDepth) {
    throw Error(ErrorCode::JsonInvalid,
                "nesting deeper than " + std::to_string(json::kMaxDepth) + " levels");
  }
  const std::uint32_t count = jc->header & JB_CMASK;
  const bool array = (jc->header & JB_FARRAY) != 0;
  if (count == 0) {
    if (array) {
      sink_.empty_array();
    } else {
      sink_.empty_object();
    }
    return;
  }
  ++depth_;
  sink_.open(array);
  if (array) {
    const char* const base = reinterpret_cast<const char*>(&jc->children[count]);
    std::uint32_t offset = 0;
    for (std::uint32_t i = 0; i < count; ++i) {
      poll_interrupts();
      const JEntry e = jc->children[i];
      const std::uint32_t end = entry_end(e, offset);
      value(base, offset, e, end);
      offset = end;
    }
    sink_.close_array();
  } else {
    // Keys are children[0, count), values children[count, 2 count), their data in that order.
    const char* const base = reinterpret_cast<const char*>(&jc->children[2 * count]);
    std::uint32_t value_offset = 0;  // where the first value's data starts: after every key's
    for (std::uint32_t i = count; i-- > 0;) {
      value_offset += JBE_OFFLENFLD(jc->children[i]);
      if (JBE_HAS_OFF(jc->children[i])) break;
    }
    std::uint32_t key_offset = 0;
    for (std::uint32_t i = 0; i < count; ++i) {
      poll_interrupts();
      const JEntry k = jc->children[i];
      const std::uint32_t key_end = entry_end(k, key_offset);
      json::detail::Bytes& name = sink_.begin_key(0);  // 0: no byte offset in a jsonb
      name.append(base + key_offset, key_end - key_offset);
      sink_.end_decoded_key();
      key_offset = key_end;
      poll_interrupts();
      const JEntry v = jc->children[count + i];
      const std::uint32_t value_end = entry_end(v, value_offset);
      value(base, value_offset, v, value_end);
      value_offset = value_end;
    }
    sink_.close_object();
  }
  --depth_;
}

void Walker::value(const char* base, std::uint32_t offset, JEntry e, std::uint32_t end) {
  if (JBE_ISSTRING(e)) {
    json::detail::Bytes& out = sink_.begin_string();
    json::detail::append_string_body(out, std::string_view(base + offset, end - offset));
    sink_.end_string();
  } else if (JBE_ISNUMERIC(e)) {
    number(base + INTALIGN(offset));
  } else if (JBE_ISBOOL_TRUE(e)) {
    sink_.boolean(true);
  } else if (JBE_ISBOOL_FALSE(e)) {
    sink_.boolean(false);
  } else if (JBE_ISNULL(e)) {
    sink_.null();
  } else if (JBE_ISCONTAINER(e)) {
    container(reinterpret_cast<const JsonbContainer*>(base + INTALIGN(offset)));
  } else {
    throw Error(ErrorCode::Internal, "pg_idempotency: unexpected jsonb entry type " +
                                         std::to_string((e & JENTRY_TYPEMASK) >> 28));
  }
}

// numeric_out's spelling (get_str_from_var: the integer digits without leading zeros, "0" when
// there are none, then dscale fraction digits), read from the numeric's bytes.
void Walker::number(const void* numeric) {
  const char* const data = VARDATA_ANY(numeric);
  const std::size_t size = VARSIZE_ANY_EXHDR(numeric);
  std::uint16_t header;
  std::memcpy(&header, data, sizeof header);
  if ((header & kSignMask) == kSpecial) {
    // NaN or an infinity (no jsonb holds one: to_jsonb makes them strings): as numeric_out says.
    const char* spelling = pg::guarded([numeric] {
      return DatumGetCString(DirectFunctionCall1(numeric_out, PointerGetDatum(numeric)));
    });
    sink_.number_unbounded(spelling, std::strlen(spelling));
    return;
  }
  bool negative;
  int dscale;
  int weight;
  const char* digits;
  std::size_t ndigits;
  if ((header & kSignMask) == kShort) {
    negative = (header & kShortSignMask) != 0;
    dscale = (header & kShortDscaleMask) >> kShortDscaleShift;
    weight = ((header & kShortWeightSignMask) != 0 ? ~static_cast<int>(kShortWeightMask) : 0) |
             (header & kShortWeightMask);
    digits = data + sizeof(std::uint16_t);
    ndigits = (size - sizeof(std::uint16_t)) / sizeof(std::int16_t);
  } else {
    negative = (header & kSignMask) == kNeg;
    dscale = header & kDscaleMask;
    std::int16_t w;
    std::memcpy(&w, data + sizeof(std::uint16_t), sizeof w);
    weight = w;
    digits = data + 2 * sizeof(std::uint16_t);
    ndigits = (size - 2 * sizeof(std::uint16_t)) / sizeof(std::int16_t);
  }
  auto digit = [&](int d) -> int {
    if (d < 0 || static_cast<std::size_t>(d) >= ndigits) return 0;
    std::int16_t v;
    std::memcpy(&v, digits + static_cast<std::size_t>(d) * sizeof v, sizeof v);
    return v;
  };
  std::string& s = digits_;
  s.clear();
  if (negative) s.push_back('-');
  int d;
  if (weight < 0) {
    d = weight + 1;
    s.push_back('0');
  } else {
    for (d = 0; d <= weight; ++d) {
      int dig = digit(d);
      bool put = d > 0;  // in the first group, no leading zeros
      for (int unit = 1000; unit > 1; unit /= 10) {
        const int q = dig / unit;
        dig -= q * unit;
        put |= q > 0;
        if (put) s.push_back(static_cast<char>('0' + q));
      }
      s.push_back(static_cast<char>('0' + dig));
    }
  }
  if (dscale > 0) {
    s.push_back('.');
    const std::size_t end = s.size() + static_cast<std::size_t>(dscale);
    for (int i = 0; i < dscale; ++d, i += 4) {
      const int dig = digit(d);
      const char four[4] = {static_cast<char>('0' + dig / 1000), static_cast<char>('0' + dig / 100 % 10),
                            static_cast<char>('0' + dig / 10 % 10), static_cast<char>('0' + dig % 10)};
      s.append(four, 4);
    }
    s.resize(end);
  }
  sink_.number_unbounded(s.data(), s.size());
}

}  // namespace

Fingerprint fingerprint(const Jsonb* doc, const std::vector<std::string>& exclude) {
  Fingerprint result{{}, kFingerprintScheme};
  json::detail::with_canonical_sink(
      exclude, [doc](CanonicalSink& sink) { Walker(sink).root(&doc->root); },
      [&result](std::string_view bytes) { result.hash = hash::sha256(bytes); });
  return result;
}

std::string member_digests(const Jsonb* doc, const std::vector<std::string>& exclude, const hash::Digest& salt) {
  std::string out;
  json::detail::with_canonical_sink(
      exclude, [doc](CanonicalSink& sink) { Walker(sink).root(&doc->root); },
      [&](std::string_view bytes) { out = json::member_digests(bytes, salt); });
  return out;
}

}  // namespace idem::jsonb
