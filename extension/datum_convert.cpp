// Conversions between PostgreSQL values and core types.
#include "extension/datum_convert.hpp"

#include <cstring>

#include "core/error.hpp"
#include "extension/pg/pg_error.hpp"

namespace idem::datum {

std::optional<std::string_view> text_arg(FunctionCallInfo fcinfo, int n) {
  if (PG_ARGISNULL(n)) return std::nullopt;
  return view(PG_GETARG_TEXT_PP(n));
}

hash::Digest digest_arg(FunctionCallInfo fcinfo, int n, const char* what) {
  const auto bytes = text_arg(fcinfo, n);  // bytea and text share the varlena layout
  hash::Digest digest{};
  if (!bytes || bytes->size() != digest.size()) {
    throw Error(ErrorCode::ArgumentInvalid, std::string(what) + " must be a 32-byte digest, got " +
                                                (bytes ? std::to_string(bytes->size()) + " bytes" : std::string("NULL")));
  }
  std::memcpy(digest.data(), bytes->data(), digest.size());
  return digest;
}

std::optional<int64_t> elapsed_usecs(const Interval& i) {
  const int64_t days = static_cast<int64_t>(i.month) * DAYS_PER_MONTH + i.day;
  int64_t usecs = 0;
  if (__builtin_mul_overflow(days, static_cast<int64_t>(USECS_PER_DAY), &usecs)) return std::nullopt;
  if (__builtin_add_overflow(usecs, static_cast<int64_t>(i.time), &usecs)) return std::nullopt;
  return usecs;
}

Datum interval_datum(int64_t usecs) {
  Interval* out = static_cast<Interval*>(pg::call(palloc, sizeof(Interval)));
  out->time = usecs;
  out->day = 0;
  out->month = 0;
  return IntervalPGetDatum(out);
}

namespace {

// Argument n's elements. Plain C (detoasting and a refusal may elog): called through pg::call.
void deconstruct_text_array_unsafe(FunctionCallInfo fcinfo, int n, const char* what, Datum** elems, bool** nulls, int* count) {
  ArrayType* array = PG_GETARG_ARRAYTYPE_P(n);
  if (ARR_NDIM(array) > 1) {
    ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR), errmsg("%s must be a one-dimensional text[]", what)));
  }
  deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT, elems, nulls, count);
}

}  // namespace

std::vector<std::string> text_array_arg(FunctionCallInfo fcinfo, int n, const char* what) {
  if (PG_ARGISNULL(n)) return {};
  Datum* elems = nullptr;
  bool* nulls = nullptr;
  int count = 0;
  pg::call(deconstruct_text_array_unsafe, fcinfo, n, what, &elems, &nulls, &count);
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    if (nulls[i]) {
      throw Error(ErrorCode::ArgumentInvalid, std::string(what) + " contains a NULL element at position " + std::to_string(i + 1));
    }
    out.emplace_back(view(reinterpret_cast<const struct varlena*>(DatumGetPointer(elems[i]))));
  }
  return out;
}

Datum text_datum(std::string_view bytes) {
  // Never truncate: a length beyond what a varlena holds is refused, not cut to an int.
  if (bytes.size() > MaxAllocSize - VARHDRSZ) {
    throw Error(ErrorCode::PayloadTooLarge, "result of " + std::to_string(bytes.size()) +
                                                " bytes exceeds the 1 GB limit of a PostgreSQL value");
  }
  return PointerGetDatum(pg::call(cstring_to_text_with_len, bytes.data(), static_cast<int>(bytes.size())));
}

Datum bytea_datum(const hash::Digest& digest) {
  bytea* out = static_cast<bytea*>(pg::call(palloc, VARHDRSZ + digest.size()));
  SET_VARSIZE(out, VARHDRSZ + digest.size());
  std::memcpy(VARDATA(out), digest.data(), digest.size());
  return PointerGetDatum(out);
}

Datum bytea_datum(std::string_view bytes) { return text_datum(bytes); }  // one varlena layout; bounded there

Datum text_array_datum(const std::vector<std::string>& items) {
  for (const std::string& item : items) {
    if (item.size() > MaxAllocSize - VARHDRSZ) throw Error(ErrorCode::PayloadTooLarge, "array element exceeds 1 GB");
  }
  Datum* elems = static_cast<Datum*>(pg::call(palloc, sizeof(Datum) * (items.size() + 1)));
  for (std::size_t i = 0; i < items.size(); ++i) elems[i] = text_datum(items[i]);
  return PointerGetDatum(pg::call(construct_array, elems, static_cast<int>(items.size()), Oid(TEXTOID), -1, false, TYPALIGN_INT));
}

}  // namespace idem::datum
